/*
 * store_pg_cancel.c — the cancel of a query that ran out of time or that the
 * host abandoned, so that the server stops waiting for a job's lock on behalf
 * of a client that has gone.
 *
 * libpq's PQcancel blocks: it opens a connection to the postmaster, sends the
 * request and reads until the postmaster closes it.  A frozen or unreachable
 * server would hold the command there with no bound (libpq 17's non-blocking
 * cancel API is not in the libpq of Debian 12).  So the cancel runs on a
 * thread of its own, and the caller waits for it at most
 * AN_PG_CANCEL_WAIT_MS: a request that has not gone through by then is left
 * to finish, or to end with the process.  The caller drops the connection in
 * any case, so a late cancel can only hit the abandoned query's backend, never
 * a later query of ours.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "store_pg_int.h"

typedef struct cancel_job
{
	PGcancel   *cancel;
	sem_t		done;
	atomic_int	refs;           /* the caller and the thread: the last one frees */
} cancel_job;

static void
release(cancel_job *j)
{
	if (atomic_fetch_sub(&j->refs, 1) == 1)
	{
		PQfreeCancel(j->cancel);
		sem_destroy(&j->done);
		free(j);
	}
}

static void *
cancel_main(void *arg)
{
	cancel_job *j = arg;
	char		err[256];

	(void) PQcancel(j->cancel, err, sizeof(err));
	sem_post(&j->done);
	release(j);
	return NULL;
}

void
an_pg_cancel(PGconn *conn)
{
	cancel_job *j;
	pthread_attr_t attr;
	pthread_t	thread;
	sigset_t	all,
				old;
	struct timespec until;
	int			rc;

	if (conn == NULL || (j = calloc(1, sizeof(*j))) == NULL)
		return;
	if ((j->cancel = PQgetCancel(conn)) == NULL || sem_init(&j->done, 0, 0) != 0)
	{
		PQfreeCancel(j->cancel);
		free(j);
		return;
	}
	atomic_init(&j->refs, 2);

	/*
	 * The thread blocks every signal, so that the command's signals (a stop,
	 * SIGCHLD) keep interrupting the thread that waits for them.
	 */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&thread, &attr, cancel_main, j);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
	{
		/* No thread: no cancel, rather than a wait with no bound. */
		release(j);
		release(j);
		return;
	}

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += (long) (AN_PG_CANCEL_WAIT_MS % 1000) * 1000000L;
	until.tv_sec += AN_PG_CANCEL_WAIT_MS / 1000 + until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	while (sem_timedwait(&j->done, &until) != 0 && errno == EINTR)
		;
	release(j);
}
