-- Schedules as lists: every slot of a range, the slots every instance
-- missed, when to act on a slot, and the time zones a schedule may name
-- (pg/slots.c, pg/schedule.c; doc/schedules.md).

-- Every slot of the schedule with from <= slot < to, in order.  More than
-- 1 000 000 slots is an error (nothing is returned), a reversed range too;
-- from = to is an empty range.
CREATE FUNCTION anarchon.anarchon_slots(schedule text, from_at timestamptz, to_at timestamptz)
	RETURNS TABLE (slot timestamptz)
	AS 'MODULE_PATHNAME', 'anarchon_slots'
	LANGUAGE C STABLE PARALLEL SAFE ROWS 1000;

CREATE FUNCTION anarchon.anarchon_slots(schedule text, from_ms bigint, to_ms bigint)
	RETURNS TABLE (slot bigint)
	AS 'MODULE_PATHNAME', 'anarchon_slots_ms'
	LANGUAGE C STABLE PARALLEL SAFE ROWS 1000;

-- The slots of the range that can no longer be claimed (older than
-- anarchon.max_late_ms on the database clock) and of which the store holds
-- no run: the local store, or Redis with strategy=lease.  Reads the clock and
-- the runs: VOLATILE.
CREATE FUNCTION anarchon.anarchon_missed(job text, schedule text, from_at timestamptz, to_at timestamptz)
	RETURNS TABLE (slot timestamptz)
	AS 'MODULE_PATHNAME', 'anarchon_missed'
	LANGUAGE C VOLATILE ROWS 10;

CREATE FUNCTION anarchon.anarchon_missed(job text, schedule text, from_ms bigint, to_ms bigint)
	RETURNS TABLE (slot bigint)
	AS 'MODULE_PATHNAME', 'anarchon_missed_ms'
	LANGUAGE C VOLATILE ROWS 10;

-- The slots an instance should claim now under anarchon.catch_up, oldest
-- first (doc/operating.md, "Catch-up"): under 'latest' the newest slot of
-- [now - catch_up_ms, current slot) of which the store holds no run (the
-- filter of anarchon_missed), under 'all' up to catch_up_max of the newest,
-- under 'none' none; then the current slot (the latest slot <= now) while it
-- is not late.  now NULL is the database clock.  catch_up_ms longer than
-- max_late_ms is refused here (22023).  Reads the clock and the runs:
-- VOLATILE; open to the job's owner and pg_monitor, as anarchon_missed.
CREATE FUNCTION anarchon.anarchon_due(job text, schedule text, now_at timestamptz DEFAULT NULL)
	RETURNS TABLE (slot timestamptz)
	AS 'MODULE_PATHNAME', 'anarchon_due'
	LANGUAGE C VOLATILE ROWS 2;

CREATE FUNCTION anarchon.anarchon_due(job text, schedule text, now_ms bigint)
	RETURNS TABLE (slot bigint)
	AS 'MODULE_PATHNAME', 'anarchon_due_ms'
	LANGUAGE C VOLATILE ROWS 2;

-- The slot plus an offset in [0, max_jitter_ms) hashed from (job, slot): every
-- instance computes the same time.  max_jitter_ms may not exceed
-- anarchon.max_late_ms (a later claim would be 'late'), so it reads a GUC:
-- STABLE.
CREATE FUNCTION anarchon.anarchon_fire_at(job text, slot timestamptz, max_jitter_ms bigint)
	RETURNS timestamptz
	AS 'MODULE_PATHNAME', 'anarchon_fire_at'
	LANGUAGE C STABLE PARALLEL SAFE;

CREATE FUNCTION anarchon.anarchon_fire_at(job text, slot bigint, max_jitter_ms bigint)
	RETURNS bigint
	AS 'MODULE_PATHNAME', 'anarchon_fire_at_ms'
	LANGUAGE C STABLE PARALLEL SAFE;

-- The names CRON_TZ accepts, and where the time-zone data comes from (the
-- server's own, as AT TIME ZONE reads it: version and directory).
CREATE FUNCTION anarchon.anarchon_zones()
	RETURNS TABLE (name text)
	AS 'MODULE_PATHNAME', 'anarchon_zones'
	LANGUAGE C STABLE PARALLEL SAFE ROWS 600;

CREATE FUNCTION anarchon.anarchon_tzdata_version()
	RETURNS text
	AS 'MODULE_PATHNAME', 'anarchon_tzdata_version'
	LANGUAGE C STABLE PARALLEL SAFE;

-- The dead-man's switch for the jobs anarchon.run runs: their missed slots of
-- the last 7 days (and not before anarchon.run first ran the job with its
-- current schedule).  A slot that every instance missed leaves no trace
-- anywhere else.  For another range, call anarchon_missed yourself.
--
-- One job must never break the view for every reader: each job is asked in
-- a subtransaction of its own, and a job whose question fails (its store
-- forgets runs sooner than 7 days, the store cannot be reached, a schedule
-- that no longer parses) gives one row with slot NULL and the reason in
-- `problem` instead.  anarchon.unwatch(job) stops watching a job.
CREATE FUNCTION anarchon.missed_runs_report()
	RETURNS TABLE (job text, schedule text, slot timestamptz, problem text)
	LANGUAGE plpgsql STABLE
	SET search_path = pg_catalog, pg_temp
	AS $$
DECLARE
	r	record;
BEGIN
	FOR r IN SELECT w.job, w.schedule, w.since FROM anarchon.run_schedules w ORDER BY w.job LOOP
		job := r.job;
		schedule := r.schedule;
		BEGIN
			RETURN QUERY
				SELECT r.job, r.schedule, m.slot, NULL::text
				  FROM anarchon.anarchon_missed(r.job, r.schedule,
						GREATEST(r.since, now() - interval '7 days'), now()) AS m;
		EXCEPTION WHEN OTHERS THEN
			slot := NULL;
			problem := SQLERRM;
			RETURN NEXT;
		END;
	END LOOP;
END
$$;
REVOKE ALL ON FUNCTION anarchon.missed_runs_report() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION anarchon.missed_runs_report() TO pg_monitor;

-- unwatch(job): stop watching job in anarchon.missed_runs (a job retired, or
-- renamed).  The next CALL anarchon.run of the job watches it again, from
-- then on.  true when the job was watched.  Not for PUBLIC: grant it to the
-- roles that operate the schedules.
CREATE FUNCTION anarchon.unwatch(job text)
	RETURNS boolean
	LANGUAGE sql VOLATILE STRICT SECURITY DEFINER SET search_path = pg_catalog, pg_temp
	AS $$
	WITH gone AS (DELETE FROM anarchon.run_schedules r WHERE r.job = $1 RETURNING 1)
	SELECT count(*) > 0 FROM gone
	$$;
REVOKE ALL ON FUNCTION anarchon.unwatch(text) FROM PUBLIC;

CREATE VIEW anarchon.missed_runs AS
	SELECT job, schedule, slot, problem FROM anarchon.missed_runs_report();
COMMENT ON VIEW anarchon.missed_runs IS 'anarchon: slots of the last 7 days that no instance ran, for the jobs anarchon.run runs; a job that cannot be asked gives one row with its problem';
REVOKE ALL ON anarchon.missed_runs FROM PUBLIC;
GRANT SELECT ON anarchon.missed_runs TO pg_monitor;
