-- app_loop.sql — a job loop for PostgreSQL clients (doc/app-loop.md).
--
-- Every instance of the application runs
--     CALL app_loop('report', '10 seconds');
-- on its own connection (at top level, not inside BEGIN: the loop commits).
-- For each slot exactly one instance wins and does the work, step by step,
-- renewing its lease between steps; the others sleep to the next slot.
-- Each slot's outcome is reported as a NOTICE: "<slot> <outcome>".

-- The work of one run, one step at a time; false when there is no more.
-- (Here: record each step.  Replace with the application's own.)
CREATE TABLE IF NOT EXISTS app_work_done (job text, slot timestamptz, step int, pid int);
CREATE OR REPLACE FUNCTION app_work(job text, slot timestamptz, step int)
	RETURNS boolean LANGUAGE sql AS $$
	INSERT INTO app_work_done VALUES (job, slot, step, pg_backend_pid());
	SELECT step < 3;
$$;

CREATE OR REPLACE PROCEDURE app_loop(job text, schedule text, slots int DEFAULT NULL)
	LANGUAGE plpgsql AS $$
DECLARE
	v_slot		timestamptz;
	v_token		text;
	v_outcome	text;
	v_status	text;
	v_more		boolean;
	v_step		int;
	n			int := 0;
BEGIN
	WHILE slots IS NULL OR n < slots LOOP
		n := n + 1;

		-- Sleep to the next slot by the database clock, committing at least
		-- once a minute so that a long sleep holds no snapshot.
		v_slot := anarchon_next_slot(schedule);
		COMMIT;
		WHILE clock_timestamp() < v_slot LOOP
			PERFORM pg_sleep(least(60, extract(epoch FROM v_slot - clock_timestamp())));
			COMMIT;
		END LOOP;

		-- Claim, and commit at once: the other instances see the decision.
		-- Inside a procedure the claim is part of the procedure's transaction,
		-- which a claim accepts only when asked to (SET LOCAL lasts until the
		-- COMMIT right after it).
		v_token := anarchon_token();
		SET LOCAL anarchon.in_transaction = on;
		v_outcome := anarchon_claim(job, v_slot, v_token);
		COMMIT;
		RAISE NOTICE '% %', v_slot, v_outcome;
		CONTINUE WHEN v_outcome <> 'won';

		-- The work, one step per transaction.  After each step: renew the
		-- lease; if the run is no longer ours (the lease ran out and another
		-- instance took over), roll the step back and stop.
		v_status := 'succeeded';
		v_step := 1;
		LOOP
			BEGIN
				v_more := app_work(job, v_slot, v_step);
			EXCEPTION WHEN OTHERS THEN
				RAISE WARNING 'job % slot %: step % failed: %', job, v_slot, v_step, SQLERRM;
				v_status := 'failed';
			END;
			EXIT WHEN v_status = 'failed' OR NOT v_more;
			IF NOT anarchon_heartbeat(job, v_slot, v_token) THEN
				ROLLBACK;
				v_status := 'fenced';
				RAISE NOTICE '% fenced', v_slot;
				EXIT;
			END IF;
			COMMIT;
			v_step := v_step + 1;
		END LOOP;
		CONTINUE WHEN v_status = 'fenced';

		-- Finish with the last step's work in the same transaction.
		IF NOT anarchon_finish(job, v_slot, v_token, v_status) THEN
			ROLLBACK;
			RAISE NOTICE '% fenced', v_slot;
		END IF;
		COMMIT;
	END LOOP;
END
$$;
