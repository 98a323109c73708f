-- A local claim answers 'won' only where no rollback can take it back: as a
-- statement of its own in autocommit.  Anywhere else it is refused (25001)
-- unless the caller opts in with anarchon.in_transaction = on; then it is
-- part of the caller's transaction and commits (or rolls back) with it.
CREATE EXTENSION IF NOT EXISTS anarchon;
TRUNCATE anarchon.runs, anarchon.runs_jobs;
SELECT (extract(epoch FROM date_trunc('second', clock_timestamp())) * 1000)::bigint AS now_ms \gset
-- For the DO blocks and functions below, which cannot see psql variables.
SELECT set_config('regress.now_ms', :'now_ms', false) IS NOT NULL AS ok;

-- In autocommit the statement is the transaction: committed when it answers.
SELECT anarchon_claim('tx0', :now_ms, 'tok-1');

-- Inside BEGIN: refused, with the way to call it.  Nothing is written.
BEGIN;
SELECT anarchon_claim('tx', :now_ms, 'tok-1');
ROLLBACK;
-- The same with the timestamptz form and anarchon_claim_info.
BEGIN;
SELECT * FROM anarchon_claim_info('tx', to_timestamp(:now_ms / 1000.0), 'tok-1');
ROLLBACK;
-- A query string of several statements is one transaction: refused too.
SELECT anarchon_claim('tx', :now_ms, 'tok-1') \; SELECT 'after';
-- A function, procedure or DO block can still fail after the claim.
DO $$ BEGIN PERFORM anarchon_claim('tx', current_setting('regress.now_ms')::bigint, 'tok-1'); END $$;
CREATE FUNCTION claim_in_plpgsql(j text) RETURNS text LANGUAGE plpgsql
	AS $$ BEGIN RETURN anarchon_claim(j, current_setting('regress.now_ms')::bigint, 'tok-1'); END $$;
SELECT claim_in_plpgsql('tx');
DROP FUNCTION claim_in_plpgsql(text);
DO $$ DECLARE r record;
BEGIN
	FOR r IN SELECT anarchon_claim('tx', current_setting('regress.now_ms')::bigint, 'tok-1') LOOP END LOOP;
END $$;
-- (So is EXECUTE of a prepared statement: use a plain SELECT, or the protocol's prepared statements.)
PREPARE claim_tx AS SELECT anarchon_claim('tx', $1::bigint, 'tok-1');
EXECUTE claim_tx(:now_ms);
DEALLOCATE claim_tx;
SELECT count(*) AS runs FROM anarchon.runs WHERE job = 'tx';

-- Heartbeat, finish and check work inside transactions: a heartbeat or finish
-- that is rolled back did not happen.
BEGIN;
SELECT anarchon_heartbeat('tx0', :now_ms, 'tok-1'), anarchon_check('tx0', :now_ms);
SELECT anarchon_finish('tx0', :now_ms, 'tok-1');
ROLLBACK;
SELECT anarchon_check('tx0', :now_ms);

-- Opted in: won, then rolled back, as if the claim had never been made.
BEGIN;
SET LOCAL anarchon.in_transaction = on;
SELECT anarchon_claim('tx1', :now_ms, 'tok-1');
SELECT anarchon_check('tx1', :now_ms);
ROLLBACK;
SELECT anarchon_check('tx1', :now_ms);
SELECT count(*) AS runs FROM anarchon.runs WHERE job = 'tx1';
-- So another instance can win the slot.
SELECT anarchon_claim('tx1', :now_ms, 'tok-2');
-- SET LOCAL ended with the transaction: the next one is refused again.
BEGIN;
SELECT anarchon_claim('tx1', :now_ms + 1000, 'tok-2');
ROLLBACK;

-- Won, then committed with the caller's other work.
BEGIN;
SET LOCAL anarchon.in_transaction = on;
SELECT anarchon_claim('tx2', :now_ms, 'tok-1');
CREATE TEMP TABLE work_done AS SELECT 1 AS x;
COMMIT;
SELECT anarchon_check('tx2', :now_ms);

-- A savepoint rolled back takes the claim with it.
BEGIN;
SET LOCAL anarchon.in_transaction = on;
SAVEPOINT s;
SELECT anarchon_claim('tx3', :now_ms, 'tok-1');
ROLLBACK TO SAVEPOINT s;
SELECT anarchon_check('tx3', :now_ms);
SELECT anarchon_claim('tx3', :now_ms, 'tok-2');
COMMIT;
SELECT token FROM anarchon.runs WHERE job = 'tx3';

-- Claims in a transaction see the transaction's own earlier claims.
BEGIN;
SET LOCAL anarchon.in_transaction = on;
SELECT anarchon_claim('tx4', :now_ms, 'tok-1');
SELECT anarchon_claim('tx4', :now_ms, 'tok-2');
SELECT anarchon_claim('tx4', :now_ms + 1000, 'tok-2');
COMMIT;

-- An error after the claim aborts the transaction and the claim with it.
BEGIN;
SET LOCAL anarchon.in_transaction = on;
SELECT anarchon_claim('tx5', :now_ms, 'tok-1');
SELECT 1 / 0;
COMMIT;
SELECT anarchon_check('tx5', :now_ms);

-- A claim caught by a PL/pgSQL exception block is undone with its block.
DO $$
BEGIN
	SET LOCAL anarchon.in_transaction = on;
	PERFORM anarchon_claim('tx6', current_setting('regress.now_ms')::bigint, 'tok-1');
	RAISE EXCEPTION 'the job failed to start';
EXCEPTION WHEN OTHERS THEN
	RAISE NOTICE 'caught: %', SQLERRM;
END
$$;
SELECT count(*) AS runs FROM anarchon.runs WHERE job = 'tx6';
-- A DO block that opts in claims and commits with its own work.
DO $$
BEGIN
	SET LOCAL anarchon.in_transaction = on;
	IF anarchon_claim('tx6', current_setting('regress.now_ms')::bigint, 'tok-2') = 'won' THEN
		INSERT INTO work_done VALUES (6);
	END IF;
END
$$;
SELECT anarchon_check('tx6', :now_ms), (SELECT count(*) FROM work_done WHERE x = 6) AS work;

-- REPEATABLE READ works too (a claim that races another session's claim of
-- the same job then fails with serialization_failure: doc/postgresql.md).
BEGIN ISOLATION LEVEL REPEATABLE READ;
SET LOCAL anarchon.in_transaction = on;
SELECT anarchon_claim('tx7', :now_ms, 'tok-1');
SELECT anarchon_claim('tx7', :now_ms, 'tok-2');
COMMIT;

-- The opt-in is checked like every setting: a bad value is refused when set.
SET anarchon.in_transaction = 'sometimes';
SHOW anarchon.in_transaction;
