/*
 * pause.c — the verbs pause and resume: a job's pause, held in the store so
 * that every host sharing it sees the pause (core/pause.h).
 *
 *   anarchon pause --store URL --job JOB [--until TIME]   prints paused
 *   anarchon resume --store URL --job JOB                 prints resumed or not-paused
 *
 * Both exit 0 when the store did what was asked (resuming a job that is not
 * paused included); 64 for bad usage (an until not ahead of now); 78 for a
 * store that cannot hold a pause; 75 when the store cannot be reached.
 */
#include <stdio.h>

#include "cli.h"
#include "pause.h"

int
an_cli_pause(an_cli *cli)
{
	an_request	rq;
	int			rc;

	if ((rc = an_cli_open(cli)) != AN_EXIT_OK)
		return rc;
	an_cli_request(cli, &rq, 0, NULL);
	if (an_pause_set(cli->store, &rq, cli->until) != AN_OK)
		return an_cli_store_failed(cli, NULL);
	printf("paused\n");
	return AN_EXIT_OK;
}

int
an_cli_resume(an_cli *cli)
{
	an_request	rq;
	int			was_paused = 0;
	int			rc;

	if ((rc = an_cli_open(cli)) != AN_EXIT_OK)
		return rc;
	an_cli_request(cli, &rq, 0, NULL);
	if (an_pause_end(cli->store, &rq, &was_paused) != AN_OK)
		return an_cli_store_failed(cli, NULL);
	printf("%s\n", was_paused ? "resumed" : "not-paused");
	return AN_EXIT_OK;
}
