
-- A manual run ("run now"): what anarchon_run_now answers.
CREATE TYPE anarchon.run_now_info AS (
	outcome		text,
	slot		timestamptz,
	token		text,
	attempt		integer,
	lease_until timestamptz
);

-- anarchon_run_now(job [, token, lease_ms, max_late_ms, attempts, overlap,
-- busy_timeout_ms]): one extra run of job, exactly once across the fleet
-- (pg/run_now.c); the optional arguments are anarchon_claim's.  Callers within max_late_ms of one
-- request share its manual slot (one millisecond past a whole second, never
-- a schedule's); one of them gets 'won' and runs the job, then heartbeats and
-- finishes (job, slot, token).  The rights are those of anarchon_claim.
CREATE FUNCTION anarchon.anarchon_run_now(job text, token text DEFAULT NULL,
		lease_ms bigint DEFAULT NULL, max_late_ms bigint DEFAULT NULL,
		attempts integer DEFAULT NULL, overlap text DEFAULT NULL,
		busy_timeout_ms bigint DEFAULT NULL)
	RETURNS anarchon.run_now_info
	AS 'MODULE_PATHNAME', 'anarchon_run_now'
	LANGUAGE C VOLATILE;
