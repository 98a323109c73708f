/*
 * fork.h — a connection opened in one process is never used by a child it
 * forked.
 *
 * A prefork server (gunicorn --preload, uWSGI, Python's multiprocessing, a
 * postmaster that preloads the library) may use a store and then fork.  The
 * child inherits a copy of the store, and with it the parent's socket or
 * SQLite connection: were the child to use it, parent and child would read
 * each other's replies (and each could be told `won` for the other's claim),
 * or share one SQLite handle's locks.  So every store records, when it
 * opens a connection, which process it is in, and at the start of every
 * call a child that finds its parent's connection forgets it and opens its
 * own.  Forgetting closes only the child's copy of a descriptor and sends
 * nothing on it (no QUIT, no close frame): the parent goes on as before.
 *
 * Which process: a count of forks, raised in every child by a
 * pthread_atfork handler (fork.c), not getpid().  getpid() is a system call
 * on every call of every store (glibc caches nothing), and in a virtual
 * machine a system call costs as much as the SQLite read a check is: two of
 * them were a fifth of anarchon_check's time (doc/performance.md).  fork(3)
 * runs the handler in every child, whichever runtime calls it (Python's
 * os.fork, a prefork server, the postmaster).  A child made by the raw
 * clone(2) system call, vfork(2) or _Fork(3), which run no handler, must
 * exec or exit before it calls anarchon, as POSIX already asks of them.
 */
#ifndef ANARCHON_FORK_H
#define ANARCHON_FORK_H

/* Which process a connection was opened in; 0: none recorded. */
typedef unsigned long an_fork_mark;

/* The calling process's mark (never 0). */
an_fork_mark an_fork_now(void);

/* Record that the calling process owns the connection just opened. */
static inline void
an_fork_own(an_fork_mark *owner)
{
	*owner = an_fork_now();
}

/* Nonzero when a connection recorded by an_fork_own belongs to another process. */
static inline int
an_fork_foreign(an_fork_mark owner)
{
	return owner != 0 && owner != an_fork_now();
}

#endif							/* ANARCHON_FORK_H */
