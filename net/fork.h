/*
 * fork.h — what a network store does when it finds itself in a child process.
 *
 * A prefork server (gunicorn --preload, uWSGI, Python's multiprocessing, a
 * postmaster that preloads the library) may use a store and then fork.  The
 * child inherits a copy of the store, and with it the parent's socket: were
 * the child to send on it, parent and child would read each other's replies
 * and each could be told `won` for the other's claim.  So every store
 * records the process that opened its connection, and at the start of every
 * call a child that finds its parent's connection forgets it and connects
 * anew.  Forgetting closes only the child's copy of the descriptor and sends
 * nothing on it (no QUIT, no close frame): the parent's connection goes on
 * as if nothing happened.
 */
#ifndef ANARCHON_FORK_H
#define ANARCHON_FORK_H

#include <sys/types.h>
#include <unistd.h>

/* Record that the calling process owns the connection just opened. */
static inline void
an_fork_own(pid_t *owner)
{
	*owner = getpid();
}

/* Nonzero when a connection recorded by an_fork_own belongs to another process. */
static inline int
an_fork_foreign(pid_t owner)
{
	return owner != 0 && owner != getpid();
}

#endif							/* ANARCHON_FORK_H */
