-- Live counters of the store calls, one row per store (pg/stats.c,
-- core/stats.h; doc/running-to-the-end.md), and what monitoring reads of the
-- history (doc/operating.md).  Shared by every backend when the
-- library is in shared_preload_libraries (scope 'server'), else each
-- backend's own (scope 'backend').  Readable by pg_monitor, so that
-- postgres_exporter can scrape the view as it is; reset by the owner only.
CREATE FUNCTION anarchon.anarchon_stats()
	RETURNS TABLE (store text, kind text, scope text,
		claims_won bigint, claims_running bigint, claims_done bigint,
		claims_late bigint, claims_overlap bigint, claims_lost bigint,
		claims_paused bigint,
		errors_timeout bigint, errors_connection bigint, errors_configuration bigint,
		errors_busy bigint, errors_other bigint,
		heartbeats bigint, heartbeats_fenced bigint, finishes bigint, finishes_fenced bigint,
		checks bigint, fences bigint, fences_refused bigint,
		calls bigint, latency_p50_ms double precision, latency_p99_ms double precision,
		latency_sum_ms double precision, clock_offset_ms bigint, clock_seen timestamptz, stats_reset timestamptz)
	AS 'MODULE_PATHNAME', 'anarchon_stats'
	LANGUAGE C VOLATILE ROWS 4;

-- The latency histogram of each store, cumulative: the calls that took at
-- most le_ms, at every power of two of microseconds from 16 us to 33.6 s and
-- at 'Infinity' (every call).  These are boundaries of the histogram the
-- counters keep, so the counts are exact; 23 rows per store.
CREATE FUNCTION anarchon.anarchon_stats_latency()
	RETURNS TABLE (store text, le_ms double precision, count bigint)
	AS 'MODULE_PATHNAME', 'anarchon_stats_latency'
	LANGUAGE C VOLATILE ROWS 92;

CREATE FUNCTION anarchon.anarchon_stats_reset()
	RETURNS void
	AS 'MODULE_PATHNAME', 'anarchon_stats_reset'
	LANGUAGE C VOLATILE;

CREATE VIEW anarchon.stats AS SELECT * FROM anarchon.anarchon_stats();

REVOKE EXECUTE ON FUNCTION anarchon.anarchon_stats() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION anarchon.anarchon_stats_latency() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION anarchon.anarchon_stats_reset() FROM PUBLIC;
REVOKE ALL ON anarchon.stats FROM PUBLIC;
GRANT EXECUTE ON FUNCTION anarchon.anarchon_stats() TO pg_monitor;
GRANT EXECUTE ON FUNCTION anarchon.anarchon_stats_latency() TO pg_monitor;
GRANT SELECT ON anarchon.stats TO pg_monitor;

-- What monitoring asks of the history (doc/operating.md, "Metrics"): bounded
-- to a recent window, so that a scrape costs the same on the first day and
-- after years of history.

-- The runs of each job whose slot is at most `within` old (future slots
-- included), by state: running (its lease still holds), expired (running,
-- but its lease ran out: no heartbeat came, and a claim would take it over or
-- mark it interrupted), succeeded, failed, interrupted, replaced.  Jobs without a run
-- in the window are left out.  The cost: one probe of runs_jobs's primary key
-- per job the local store ever claimed for, and one range scan of runs's
-- primary key over each job's runs in the window; no table is read whole.
-- Tokens are never read: pg_monitor may run it (anarchon.runs is readable to
-- it, all but the tokens).
CREATE FUNCTION anarchon.runs_by_state(within interval DEFAULT interval '24 hours')
	RETURNS TABLE (job text, state text, runs bigint)
	LANGUAGE plpgsql STABLE
	SET search_path = pg_catalog, pg_temp
	AS $$
BEGIN
	IF within IS NULL OR within <= interval '0' OR within > interval '7 days' THEN
		RAISE EXCEPTION 'anarchon.runs_by_state: within must be more than 0 and at most 7 days, not %',
			coalesce(within::text, 'NULL')
			USING ERRCODE = 'invalid_parameter_value',
				HINT = 'For longer spans, query anarchon.runs itself.';
	END IF;
	RETURN QUERY
		SELECT j.job, s.state, s.runs
		  FROM anarchon.runs_jobs j
		 CROSS JOIN LATERAL (
			SELECT count(*) FILTER (WHERE r.state = 'running' AND r.lease_until >= now()) AS running,
			       count(*) FILTER (WHERE r.state = 'running' AND r.lease_until < now()) AS expired,
			       count(*) FILTER (WHERE r.state = 'succeeded') AS succeeded,
			       count(*) FILTER (WHERE r.state = 'failed') AS failed,
			       count(*) FILTER (WHERE r.state = 'interrupted') AS interrupted,
			       count(*) FILTER (WHERE r.state = 'replaced') AS replaced,
			       count(*) AS total
			  FROM anarchon.runs r
			 WHERE r.job = j.job AND r.slot >= now() - within) c
		 CROSS JOIN LATERAL (VALUES ('running', c.running), ('expired', c.expired),
			('succeeded', c.succeeded), ('failed', c.failed),
			('interrupted', c.interrupted), ('replaced', c.replaced)) AS s (state, runs)
		 WHERE c.total > 0
		 ORDER BY 1, 2;
END
$$;
REVOKE ALL ON FUNCTION anarchon.runs_by_state(interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION anarchon.runs_by_state(interval) TO pg_monitor;

-- The number of missed slots of each job anarchon.run runs (the jobs whose
-- schedule anarchon.run_schedules knows), over the last `within` and not
-- before anarchon.run first ran the job with its schedule: anarchon.missed_runs
-- counted, over a window of one's choice.  A job that cannot be asked (see
-- anarchon.missed_runs) gives missed NULL and the reason in `problem`.  The
-- cost, per job: its slots of the window listed (86 400 a day for a schedule
-- of every second; over 1 000 000 is that job's problem, not an answer), one
-- range scan of its runs, and a subtransaction; so `within` is at most 7 days.
-- The store is the session's (anarchon.store), as for anarchon.missed_runs.
CREATE FUNCTION anarchon.missed_runs_count(within interval DEFAULT interval '24 hours')
	RETURNS TABLE (job text, schedule text, missed bigint, problem text)
	LANGUAGE plpgsql STABLE
	SET search_path = pg_catalog, pg_temp
	AS $$
DECLARE
	r	record;
BEGIN
	IF within IS NULL OR within <= interval '0' OR within > interval '7 days' THEN
		RAISE EXCEPTION 'anarchon.missed_runs_count: within must be more than 0 and at most 7 days, not %',
			coalesce(within::text, 'NULL')
			USING ERRCODE = 'invalid_parameter_value',
				HINT = 'For longer spans, call anarchon_missed(job, schedule, from, to) job by job.';
	END IF;
	FOR r IN SELECT w.job, w.schedule, w.since FROM anarchon.run_schedules w ORDER BY w.job LOOP
		job := r.job;
		schedule := r.schedule;
		BEGIN
			SELECT count(*) INTO missed
			  FROM anarchon.anarchon_missed(r.job, r.schedule,
					GREATEST(r.since, now() - within), now());
			problem := NULL;
		EXCEPTION WHEN OTHERS THEN
			missed := NULL;
			problem := SQLERRM;
		END;
		RETURN NEXT;
	END LOOP;
END
$$;
REVOKE ALL ON FUNCTION anarchon.missed_runs_count(interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION anarchon.missed_runs_count(interval) TO pg_monitor;
