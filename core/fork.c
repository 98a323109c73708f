/*
 * fork.c — the process's mark for fork.h: a count of the forks between the
 * first process that loaded anarchon and this one.
 *
 * The handler is registered the first time a mark is asked for, which is
 * before any connection is recorded, so every fork after a recorded
 * connection is counted.  A library that is unloaded (dlclose of the SQLite
 * extension with its last connection) has its handler removed by the C
 * library with it.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "fork.h"

static atomic_ulong mark = 1;
static atomic_int unwatched;
static pthread_once_t watching = PTHREAD_ONCE_INIT;

/* In the child, before fork() returns there: a new process, a new mark. */
static void
forked(void)
{
	atomic_fetch_add(&mark, 1);
}

static void
watch(void)
{
	/* Without the handler a child would keep its parent's mark: the pid, then, as before. */
	if (pthread_atfork(NULL, NULL, forked) != 0)
		atomic_store(&unwatched, 1);
}

an_fork_mark
an_fork_now(void)
{
	pthread_once(&watching, watch);
	if (atomic_load(&unwatched))
		return (an_fork_mark) getpid();
	return atomic_load(&mark);
}
