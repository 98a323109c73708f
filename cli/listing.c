/*
 * listing.c — slots, missed and due: a schedule's slots in a range, those of
 * them no instance claimed, and those to claim now under the catch_up
 * setting (schedule/due.h), one per line as "ms<TAB>RFC 3339".
 *
 * missed follows anarchon_missed: only slots that can no longer be claimed
 * (older than max_late_ms on this host's clock) are candidates, and the store
 * says which of them hold a run.  The SQLite file answers with one lookup by
 * primary key per slot (its check), since it never forgets a run; a network
 * store answers with its recall, or says that it cannot tell.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "due.h"
#include "missed.h"
#include "pause.h"

typedef struct slot_list
{
	int64_t    *slots;
	size_t		n,
				cap;
	int64_t		cutoff;          /* keep slots before this; INT64_MAX: all */
} slot_list;

static int
push(void *arg, int64_t slot)
{
	slot_list  *l = arg;

	if (slot >= l->cutoff)
		return 1;
	if (l->n == l->cap)
	{
		size_t		cap = l->cap ? 2 * l->cap : 256;
		int64_t    *grown = realloc(l->slots, cap * sizeof(int64_t));

		if (grown == NULL)
			return -1;
		l->slots = grown;
		l->cap = cap;
	}
	l->slots[l->n++] = slot;
	return 0;
}

static int
list_range(an_cli *cli, slot_list *l)
{
	an_err		err;
	an_error	rc;

	if ((rc = an_schedule_range(&cli->schedule, cli->from, cli->to, push, l, &err)) != AN_OK)
	{
		an_cli_error("%s", AN_ERR_TEXT(&err));
		return rc == AN_E_NOMEM ? AN_EXIT_SOFTWARE : AN_EXIT_USAGE;
	}
	return AN_EXIT_OK;
}

static void
print_slots(const slot_list *l)
{
	char		when[40];

	for (size_t i = 0; i < l->n; i++)
	{
		an_cli_format_time(l->slots[i], when, sizeof(when));
		printf("%lld\t%s\n", (long long) l->slots[i], when);
	}
}

int
an_cli_slots(an_cli *cli)
{
	slot_list	l = {NULL, 0, 0, INT64_MAX};
	int			rc;

	if ((rc = list_range(cli, &l)) == AN_EXIT_OK)
		print_slots(&l);
	free(l.slots);
	return rc;
}

/* Keep in l the slots of which the store holds no run. */
static int
drop_runs(an_cli *cli, slot_list *l)
{
	an_request	rq;

	an_cli_request(cli, &rq, 0, NULL);
	an_store_clear(cli->store);
	if (an_missed_recall(cli->store, &rq, l->slots, &l->n) != AN_OK)
		return an_cli_store_failed(cli, NULL);
	/* Nothing ran in a pause, and nothing was meant to: not missed (core/pause.h). */
	if (an_pause_filter(cli->store, &rq, l->slots, &l->n) != AN_OK)
		return an_cli_store_failed(cli, NULL);
	return AN_EXIT_OK;
}

int
an_cli_missed(an_cli *cli)
{
	slot_list	l = {NULL, 0, 0, INT64_MAX};
	int			rc;

	l.cutoff = an_cli_now_ms() - cli->settings.max_late_ms;
	if ((rc = list_range(cli, &l)) != AN_EXIT_OK || (rc = an_cli_open(cli)) != AN_EXIT_OK)
		goto done;
	if ((rc = drop_runs(cli, &l)) == AN_EXIT_OK)
		print_slots(&l);
done:
	free(l.slots);
	return rc;
}

/*
 * Catch-up looks for slots without a run, which only a store that keeps its
 * runs can tell (SQLite, PostgreSQL, Redis lease).  Asked of any other store
 * up front, before a claim: whether a missed slot happens to be in the window
 * this time must not decide whether the setting is refused.  78, as the other
 * settings a store cannot honour (overlap 'replace', a pause).
 */
static int
catch_up_possible(an_cli *cli)
{
	an_request	rq;
	int			rc;

	/* A SQLite file never forgets a run (its recall reads anarchon_runs).  Not opened for nothing. */
	if (strncmp(cli->store_url, "sqlite:", 7) == 0)
		return AN_EXIT_OK;
	if (cli->store == NULL && (rc = an_cli_open(cli)) != AN_EXIT_OK)
		return rc;
	an_cli_request(cli, &rq, 0, NULL);
	if (an_missed_can_recall(cli->store, &rq) == AN_OK)
		return AN_EXIT_OK;
	an_store_hintf(cli->store, "Catch-up works on stores that keep their runs: SQLite, PostgreSQL and Redis with"
				   " strategy=lease; with this store leave %s at none.", an_cli_setting_flag(NULL, "catch_up"));
	return an_cli_store_failed(cli, cli->settings.catch_up == AN_CATCH_UP_ALL ? "--catch-up all" : "--catch-up latest");
}

int
an_cli_due_slots(an_cli *cli, int64_t now, int64_t out[AN_DUE_MAX], size_t *n)
{
	slot_list	l = {NULL, 0, 0, INT64_MAX};
	an_due_plan plan;
	an_err		err;
	an_error	erc;
	int			rc = AN_EXIT_OK;

	if ((erc = an_due_plan_make(&cli->schedule, &cli->settings, now, &plan, &err)) != AN_OK)
	{
		an_cli_error("%s", AN_ERR_TEXT(&err));
		return erc == AN_E_NOMEM ? AN_EXIT_SOFTWARE : AN_EXIT_USAGE;
	}
	if (cli->settings.catch_up != AN_CATCH_UP_NONE &&
		(rc = catch_up_possible(cli)) != AN_EXIT_OK)
		return rc;
	/* Only a look back asks the store: under 'none' it need not be open. */
	if (plan.look_back)
	{
		if (an_schedule_range(&cli->schedule, plan.from, plan.to, push, &l, &err) != AN_OK)
		{
			an_cli_error("%s", AN_ERR_TEXT(&err));
			rc = AN_EXIT_USAGE;
		}
		else if ((l.n = an_due_trim(&plan, &cli->settings, l.slots, l.n)) > 0 &&
				 (cli->store != NULL || (rc = an_cli_open(cli)) == AN_EXIT_OK))
			rc = drop_runs(cli, &l);
	}
	if (rc == AN_EXIT_OK)
		*n = an_due_pick(&plan, l.slots, l.n, out);
	free(l.slots);
	return rc;
}

int
an_cli_due(an_cli *cli)
{
	int64_t		due[AN_DUE_MAX];
	slot_list	l = {due, 0, AN_DUE_MAX, INT64_MAX};
	int			rc;

	if (!cli->has_schedule)
	{
		an_cli_error("due needs --schedule EXPR: it works out the slots from the schedule, not --slot");
		return AN_EXIT_USAGE;
	}
	if ((rc = an_cli_due_slots(cli, an_cli_now_ms(), due, &l.n)) == AN_EXIT_OK)
		print_slots(&l);
	return rc;
}
