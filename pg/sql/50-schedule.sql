-- Schedules: cron expressions and intervals as slots, and a whole run of a
-- job for pg_cron (doc/pg_cron.md).

-- The latest scheduled time at or before the instant (default: the database
-- clock), in UTC; NULL when there is none from 1970 on.  With an instant the
-- answer depends on the arguments and the server's time-zone data (STABLE:
-- a tzdata upgrade may move a CRON_TZ schedule's slots); without one it reads
-- the clock.  Not STRICT: a NULL argument is an error that says so.
CREATE FUNCTION anarchon.anarchon_slot(schedule text)
	RETURNS timestamptz
	AS 'MODULE_PATHNAME', 'anarchon_slot'
	LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE FUNCTION anarchon.anarchon_slot(schedule text, at timestamptz)
	RETURNS timestamptz
	AS 'MODULE_PATHNAME', 'anarchon_slot'
	LANGUAGE C STABLE PARALLEL SAFE;

CREATE FUNCTION anarchon.anarchon_slot(schedule text, at bigint)
	RETURNS bigint
	AS 'MODULE_PATHNAME', 'anarchon_slot_ms'
	LANGUAGE C STABLE PARALLEL SAFE;

-- The earliest scheduled time after the instant; NULL when there is none
-- up to 9999-12-31.
CREATE FUNCTION anarchon.anarchon_next_slot(schedule text)
	RETURNS timestamptz
	AS 'MODULE_PATHNAME', 'anarchon_next_slot'
	LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE FUNCTION anarchon.anarchon_next_slot(schedule text, after timestamptz)
	RETURNS timestamptz
	AS 'MODULE_PATHNAME', 'anarchon_next_slot'
	LANGUAGE C STABLE PARALLEL SAFE;

CREATE FUNCTION anarchon.anarchon_next_slot(schedule text, after bigint)
	RETURNS bigint
	AS 'MODULE_PATHNAME', 'anarchon_next_slot_ms'
	LANGUAGE C STABLE PARALLEL SAFE;

-- What anarchon.run did, one row per call: the claim's outcome and, for the
-- call that won, how the command ended.  anarchon.runs says who won each
-- slot; this table adds what the other callers were told and the error text
-- of a failed command.
CREATE TABLE anarchon.run_log (
	id			bigserial PRIMARY KEY,
	job			text NOT NULL,
	slot		timestamptz NOT NULL,
	-- the claim's answer (won, running, done, late, overlap, lost), or
	-- 'error' when the claim itself failed (the store could not decide)
	outcome		text NOT NULL,
	-- only when outcome = 'won': succeeded, failed, fenced (the run was
	-- no longer ours when the command ended; its effects were rolled back),
	-- or replaced (fenced because a later slot won under overlap 'replace';
	-- the keep-alive cancelled the command)
	status		text CHECK (status IN ('succeeded', 'failed', 'fenced', 'replaced')),
	error		text,
	run_by		name NOT NULL,
	-- the caller's application_name ('pg_cron' for pg_cron's jobs)
	application_name text,
	started_at	timestamptz NOT NULL,
	finished_at timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp()
);
COMMENT ON TABLE anarchon.run_log IS 'anarchon: one row per CALL anarchon.run, with the outcome and the command''s error';
CREATE INDEX run_log_job_slot_idx ON anarchon.run_log (job, slot);
SELECT pg_catalog.pg_extension_config_dump('anarchon.run_log', '');
SELECT pg_catalog.pg_extension_config_dump('anarchon.run_log_id_seq', '');
REVOKE ALL ON anarchon.run_log FROM PUBLIC;
GRANT SELECT ON anarchon.run_log TO pg_monitor;

-- run_log_add: the one way anarchon.run writes its log (callers may not
-- write the table themselves; pg/run_record.c writes it as the table's owner,
-- for a job the caller may act on only).  run_by is the session's user: the
-- pg_cron job's owner, or the application's role; application_name is the
-- session's.
CREATE FUNCTION anarchon.run_log_add(job text, slot timestamptz, outcome text,
		status text, error text, started_at timestamptz)
	RETURNS void
	AS 'MODULE_PATHNAME', 'anarchon_run_log_add'
	LANGUAGE C VOLATILE;

-- The schedule anarchon.run was last called with, for each job, and since
-- when: what anarchon.missed_runs (55-slots.sql) checks for missed slots.  A
-- call with another schedule replaces it and starts the watch again.
CREATE TABLE anarchon.run_schedules (
	job			text PRIMARY KEY,
	schedule	text NOT NULL,
	since		timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp()
);
COMMENT ON TABLE anarchon.run_schedules IS 'anarchon: the schedule of each job anarchon.run runs, for anarchon.missed_runs';
SELECT pg_catalog.pg_extension_config_dump('anarchon.run_schedules', '');
REVOKE ALL ON anarchon.run_schedules FROM PUBLIC;
GRANT SELECT ON anarchon.run_schedules TO pg_monitor;

-- run_schedule_note: record job's schedule, writing only when it changed (so
-- that a fleet calling anarchon.run every minute costs one index probe); for
-- a job the caller may act on only (pg/run_record.c).
CREATE FUNCTION anarchon.run_schedule_note(job text, schedule text)
	RETURNS void
	AS 'MODULE_PATHNAME', 'anarchon_run_schedule_note'
	LANGUAGE C VOLATILE;

-- run_command_check(command): the command of anarchon.run is one SQL
-- statement; an empty one, or two (which EXECUTE would both run), are refused
-- before anything is claimed or recorded (pg/run_command.c).
CREATE FUNCTION anarchon.run_command_check(command text)
	RETURNS void
	AS 'MODULE_PATHNAME', 'anarchon_run_command_check'
	LANGUAGE C STRICT STABLE;

-- The keep-alive of anarchon.run (pg/keepalive.c): a background worker that
-- heartbeats the run every lease_ms / 3 while its command works, and stops
-- when told, when the transaction that started it ends, when the backend is
-- gone, when the run is no longer this token's, or when the lease could end
-- (the last confirmed renewal's send + lease_ms - a margin) before a newer
-- renewal was confirmed; the last two cancel the command.
CREATE FUNCTION anarchon.keepalive_start(job text, slot timestamptz, token text,
		lease_ms bigint DEFAULT NULL)
	RETURNS boolean
	AS 'MODULE_PATHNAME', 'anarchon_keepalive_start'
	LANGUAGE C VOLATILE;
CREATE FUNCTION anarchon.keepalive_stop()
	RETURNS boolean
	AS 'MODULE_PATHNAME', 'anarchon_keepalive_stop'
	LANGUAGE C VOLATILE;
-- keepalive_fenced(): did this backend's keep-alive find its run fenced, and
-- so cancel the command?  (How anarchon.run tells that cancel from others.)
CREATE FUNCTION anarchon.keepalive_fenced()
	RETURNS boolean
	AS 'MODULE_PATHNAME', 'anarchon_keepalive_fenced'
	LANGUAGE C VOLATILE;
-- keepalive_lost(): did this backend's keep-alive cancel the command because
-- no renewal was confirmed in time and the lease could end?
CREATE FUNCTION anarchon.keepalive_lost()
	RETURNS boolean
	AS 'MODULE_PATHNAME', 'anarchon_keepalive_lost'
	LANGUAGE C VOLATILE;

-- anarchon.run(job, schedule, command [, lease_ms]) claims the slots that
-- anarchon_due answers, oldest first -- the current slot of schedule, and
-- under anarchon.catch_up the missed ones of the last catch_up_ms before it
-- -- and for each: commits, runs command on 'won', then finishes the run
-- 'succeeded' or 'failed' and commits again.  The outcome comes back as the
-- INOUT parameter (CALL shows it; pg_cron ignores it): 'won' when any slot
-- was won, else the last slot's.  Every slot claimed leaves a row in
-- anarchon.run_log.  A command that failed, or a run that was fenced, is
-- raised once its row is committed, so that the caller (pg_cron's
-- cron.job_run_details) sees the failure too; the slots after it are left
-- to the next call (or to another instance, which claims them alike).
--
-- It commits, so it must be CALLed at top level (as pg_cron does), not
-- inside BEGIN ... COMMIT; for the same reason it cannot be SECURITY
-- DEFINER: the command runs as the caller.  While the command runs,
-- anarchon_run.job, anarchon_run.slot and anarchon_run.token (set_config,
-- local to the transaction) say which run it is; the token lets the command
-- fence its writes (anarchon_fence).
CREATE PROCEDURE anarchon.run(job text, schedule text, command text,
		lease_ms bigint DEFAULT NULL, INOUT outcome text DEFAULT NULL)
	LANGUAGE plpgsql
	AS $$
DECLARE
	v_started	timestamptz := pg_catalog.clock_timestamp();
	v_slot		timestamptz;
	v_token		text;
	v_status	text;
	v_error		text;
	v_state		text;
	v_cmd_state text;
	v_slots		timestamptz[];
	v_outcome	text;
	v_lost		boolean;
	v_fenced	boolean;
BEGIN
	IF job IS NULL OR schedule IS NULL OR command IS NULL THEN
		RAISE EXCEPTION 'anarchon.run: job, schedule and command must not be NULL'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	v_slot := anarchon.anarchon_slot(schedule);
	IF v_slot IS NULL THEN
		RAISE EXCEPTION 'anarchon.run: schedule "%" has no scheduled time before now', schedule
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	-- Nothing is recorded before the job name and the command are known to be
	-- good: a bad row in anarchon.run_schedules would be watched for ever.
	-- (anarchon_fire_at checks the job as every function does, and asks no store.)
	PERFORM anarchon.anarchon_fire_at(job, v_slot, 0);
	PERFORM anarchon.run_command_check(command);
	-- The slots to claim, oldest first (anarchon_due: catch-up is a setting).
	-- A current slot already late is not due; it is claimed anyway when
	-- nothing else is, so that its 'late' is logged as it always was.
	v_slots := ARRAY(SELECT d.slot FROM anarchon.anarchon_due(job, schedule) AS d);
	IF pg_catalog.cardinality(v_slots) = 0 THEN
		v_slots := ARRAY[v_slot];
	END IF;
	PERFORM anarchon.run_schedule_note(job, schedule);

	FOREACH v_slot IN ARRAY v_slots LOOP
		v_token := anarchon.anarchon_token();
		v_error := NULL;
		v_state := NULL;
		v_status := NULL;
		v_cmd_state := NULL;
		v_lost := false;
		v_fenced := false;

		-- The claim is made inside this procedure, so it must opt in to being part
		-- of the transaction; that transaction is committed right after it,
		-- before the command runs.  Inside a caller's transaction block the
		-- COMMIT fails (a procedure cannot commit there), so a claim that is not
		-- committed never runs the command.
		PERFORM pg_catalog.set_config('anarchon.in_transaction', 'on', true);

		-- A store that cannot decide: log it, commit the log, then fail the call
		-- (so pg_cron's job_run_details shows the error too).
		BEGIN
			v_outcome := anarchon.anarchon_claim(job, v_slot, v_token, lease_ms => lease_ms);
		EXCEPTION WHEN OTHERS THEN
			v_state := SQLSTATE;
			v_error := SQLERRM;
		END;
		IF v_error IS NOT NULL THEN
			outcome := 'error';
			PERFORM anarchon.run_log_add(job, v_slot, outcome, NULL, v_state || ': ' || v_error, v_started);
			COMMIT;
			RAISE EXCEPTION 'anarchon.run: the claim of job "%" slot % failed: %', job, v_slot, v_error
				USING ERRCODE = v_state;
		END IF;

		IF outcome IS DISTINCT FROM 'won' THEN
			outcome := v_outcome;
		END IF;
		IF v_outcome <> 'won' THEN
			PERFORM anarchon.run_log_add(job, v_slot, v_outcome, NULL, NULL, v_started);
			COMMIT;
			v_started := pg_catalog.clock_timestamp();
			-- 'overlap': another caller holds a run of the job and claims the
			-- later slots once it ends.  Claiming them now could win one in
			-- the moment between its finish and its next claim, which would
			-- then answer 'overlap' too: a missed slot skipped by everyone.
			EXIT WHEN v_outcome IN ('overlap', 'paused');	-- 'paused': so would every later slot
			CONTINUE;
		END IF;

		-- The decision is visible to every other claimer from here on.
		COMMIT;

		-- The lease is kept alive while the command works (a heartbeat every
		-- lease_ms / 3, from a background worker), so a command may run longer
		-- than lease_ms; the worker stops with this transaction at the latest,
		-- and cancels the command when the lease could end.
		PERFORM anarchon.keepalive_start(job, v_slot, v_token, lease_ms);

		-- The command runs in a subtransaction, so that its failure is caught,
		-- its effects undone, and the run finished 'failed' with the error text.
		BEGIN
			PERFORM pg_catalog.set_config('anarchon_run.job', job, true);
			PERFORM pg_catalog.set_config('anarchon_run.slot', v_slot::text, true);
			PERFORM pg_catalog.set_config('anarchon_run.token', v_token, true);
			EXECUTE command;
			v_status := 'succeeded';
		EXCEPTION
			-- The keep-alive cancels a command whose run is no longer ours
			-- (replaced by a later slot, or taken over); its finish is
			-- refused below.  Any other cancel (the user's, a
			-- statement_timeout) still ends the call.
			-- It also cancels one whose lease could end before a renewal was
			-- confirmed (the store frozen, unreachable, the run's row locked).
			WHEN query_canceled THEN
				IF anarchon.keepalive_lost() THEN
					v_lost := true;
					v_error := 'the keep-alive cancelled the command: no renewal of the lease was confirmed in time, and the lease could end';
				ELSIF NOT anarchon.keepalive_fenced() THEN
					RAISE;
				ELSE
					v_fenced := true;
					v_error := 'the keep-alive cancelled the command: a heartbeat found the run no longer ours';
				END IF;
				v_status := 'failed';
			WHEN OTHERS THEN
				v_status := 'failed';
				v_cmd_state := SQLSTATE;
				v_error := SQLSTATE || ': ' || SQLERRM;
		END;
		PERFORM anarchon.keepalive_stop();

		-- Fenced: the lease ran out and the run was taken over or marked
		-- interrupted.  Roll the command's effects back (with the local store
		-- they and the finish commit together or not at all).
		-- Replaced: a later slot won under overlap 'replace' (anarchon_check
		-- says so); the same roll-back, recorded as what it is.
		-- Lost: the lease could end, so the run is given up as it stands (no
		-- finish): a backup with attempts left takes it over once the lease
		-- has ended, as after a fence; the command's effects are rolled back.
		IF v_lost THEN
			ROLLBACK;
			v_error := v_error || '; its effects were rolled back and the run is left to its lease';
			v_status := 'fenced';
		-- Fenced by the keep-alive: a heartbeat was refused (a later slot
		-- replaced the run, another caller took it over, or the lease ended
		-- before the renewal came).  The run is not finished by this call even
		-- when nobody has taken it over yet: it is rolled back and left to its
		-- lease, as a refused heartbeat says, and a backup with attempts left
		-- runs it.
		ELSIF v_fenced OR NOT anarchon.anarchon_finish(job, v_slot, v_token, v_status) THEN
			ROLLBACK;
			IF anarchon.anarchon_check(job, v_slot) = 'replaced' THEN
				v_error := pg_catalog.concat_ws('; ', v_error,
					'a later slot of the job won under overlap ''replace'' and replaced this run: its effects were rolled back');
				v_status := 'replaced';
			ELSE
				v_error := pg_catalog.concat_ws('; ', v_error,
					'the lease ran out before the command ended and the run was no longer ours: its effects were rolled back (raise lease_ms above the longest run)');
				v_status := 'fenced';
			END IF;
		END IF;
		PERFORM anarchon.run_log_add(job, v_slot, v_outcome, v_status, v_error, v_started);
		COMMIT;
		v_started := pg_catalog.clock_timestamp();

		-- Recorded; now the caller hears of it too, so that pg_cron's
		-- cron.job_run_details says failed, not succeeded.
		IF v_status = 'failed' THEN
			RAISE EXCEPTION 'anarchon.run: the command of job "%" failed in slot %', job, v_slot
				USING ERRCODE = v_cmd_state, DETAIL = v_error,
					HINT = 'The run is finished ''failed'' and the command''s effects were undone; anarchon.run_log has the error.';
		ELSIF v_status = 'replaced' THEN
			RAISE EXCEPTION 'anarchon.run: job "%" slot % was replaced by a later slot while its command ran', job, v_slot
				USING ERRCODE = 'AN001', DETAIL = v_error,
					HINT = 'anarchon.overlap is ''replace'': each new slot that is won ends the runs of the job still going. Use ''skip'' to let a run finish first.';
		ELSIF v_lost THEN
			RAISE EXCEPTION 'anarchon.run: job "%" slot % lost its lease while its command ran', job, v_slot
				USING ERRCODE = 'AN001', DETAIL = v_error,
					HINT = 'The store did not confirm a renewal in time (unreachable, frozen, or the run''s row locked by another session); the server log has the keep-alive''s errors.';
		ELSIF v_status = 'fenced' THEN
			RAISE EXCEPTION 'anarchon.run: job "%" slot % was no longer this call''s run when its command ended', job, v_slot
				USING ERRCODE = 'AN001', DETAIL = v_error,
					HINT = 'The command''s effects were rolled back; another caller took the run over or it was marked interrupted.';
		END IF;
	END LOOP;
END
$$;
COMMENT ON PROCEDURE anarchon.run(text, text, text, bigint, text) IS
	'anarchon: claim the due slots of a schedule (the current one, and missed ones under catch_up), run a command once fleet-wide for each, record how it ended';
