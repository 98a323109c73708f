/*
 * store_admin.c — the duties a store may lack (the operators' controls of
 * an_store_admin, and a run-now): which of them a store has, and the one
 * refusal of those it has not, so that every host says the same thing in the
 * same place.
 */
#include <stdio.h>
#include <string.h>

#include "store.h"

/* Each duty: its bit, the words after "cannot", and the refusal's detail and hint. */
static const struct
{
	unsigned	cap;
	const char *verb;
	const char *detail;
	const char *hint;
}			duties[] = {
	{AN_CAP_PAUSE, "hold a pause",
		"A pause lives in the store, so that every instance sharing it sees the pause.",
	"Pause jobs on the local store, Redis or PostgreSQL, or stop the instances of the job instead."},
	{AN_CAP_PAUSED, "tell whether a job is paused",
		"It decides a pause inside each claim but cannot read one back.",
	"Ask the database that keeps the pauses: SELECT anarchon_paused(job) there."},
	{AN_CAP_PAUSES, "list a job's pauses",
		"It decides a pause inside each claim but cannot list them.",
	"Ask the database that keeps the pauses: SELECT * FROM anarchon_pauses(job, from, to) there."},
	{AN_CAP_RUN_NOW, "run a job now",
		"A run-now needs a store that keeps the runs of a job with leases: it chooses the manual slot under the job's lock.",
	"Use a SQLite or PostgreSQL store, or Redis with strategy=lease, for jobs that are run now."},
	{AN_CAP_PRUNE, "prune runs",
		"Only a store that keeps every run until it is deleted (SQLite, PostgreSQL) has runs to prune; the others forget theirs by themselves.",
	"Nothing to do here: run anarchon_prune in the database that keeps the runs, if any."},
};

int
an_store_can(an_store *st, unsigned cap)
{
	size_t		i;

	if (AN_STORE_HAS(st, cap))
		return 1;
	/* Reading the pauses of a store that cannot hold one: say the larger lack. */
	if ((cap & (AN_CAP_PAUSED | AN_CAP_PAUSES)) && !AN_STORE_HAS(st, AN_CAP_PAUSE))
		cap = AN_CAP_PAUSE;
	for (i = 0; i < sizeof(duties) / sizeof(duties[0]) - 1 && duties[i].cap != cap; i++)
		;
	an_store_fail(st, AN_E_UNSUPPORTED, "the %s store cannot %s%s%s", st->m->name, duties[i].verb,
				  (st->lacks_caps & cap) && st->lacks[0] ? " " : "", (st->lacks_caps & cap) ? st->lacks : "");
	an_store_detailf(st, "%s", duties[i].detail);
	an_store_hintf(st, "%s", duties[i].hint);
	return 0;
}

const an_store_admin *
an_store_admin_for(an_store *st, unsigned cap)
{
	return an_store_can(st, cap) ? st->m->admin : NULL;
}

void
an_store_lacks(an_store *st, unsigned cap, const char *why)
{
	st->caps &= ~(cap & AN_CAP_DUTIES);
	st->lacks_caps |= cap & AN_CAP_DUTIES;
	snprintf(st->lacks, sizeof(st->lacks), "%s", why);
}
