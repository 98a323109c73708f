/*
 * log.c — `run --log-format json`: one JSON object per slot claimed, on
 * stderr, for log shippers and the journal: the job, the slot, the claim's
 * outcome, the attempt (null unless won), the exit status this slot gave and
 * how long the claim and the command took.
 *
 * Only the outcome is structured: anarchon's own errors stay one text line
 * "anarchon: ..." (doc/cli.md), printed before the object of their slot, so
 * that a reader of either format finds them the same way.  Every value is
 * one the command made (a job name of A-Z a-z 0-9 _ . -, a formatted time,
 * numbers): nothing needs escaping.
 */
#include <stdio.h>

#include "cli.h"

void
an_cli_log_slot(const an_cli *cli, int64_t slot, const char *outcome, int32_t attempt, int status,
				int64_t duration_ms)
{
	an_cli_log_job_slot(cli, cli->job, slot, outcome, attempt, status, duration_ms);
}

void
an_cli_log_job_slot(const an_cli *cli, const char *job, int64_t slot, const char *outcome, int32_t attempt,
					int status, int64_t duration_ms)
{
	char		line[512],
				when[40],
				att[16] = "null";
	int			n;

	if (!cli->log_json)
		return;
	an_cli_format_time(slot, when, sizeof(when));
	if (attempt > 0)
		snprintf(att, sizeof(att), "%d", (int) attempt);
	n = snprintf(line, sizeof(line),
				 "{\"job\":\"%s\",\"slot\":\"%s\",\"slot_ms\":%lld,\"outcome\":\"%s\",\"attempt\":%s,"
				 "\"exit\":%d,\"duration_ms\":%lld}\n",
				 job, when, (long long) slot, outcome, att, status, (long long) duration_ms);
	/* One write: hosts sharing a log must not interleave their lines (open.c). */
	if (n > 0 && n < (int) sizeof(line))
		fwrite(line, 1, (size_t) n, stderr);
}
