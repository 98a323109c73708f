-- A claim inside the caller's transaction is decided at the caller's commit.
CREATE EXTENSION IF NOT EXISTS anarchon;
TRUNCATE anarchon.runs, anarchon.runs_jobs;
SELECT (extract(epoch FROM date_trunc('second', clock_timestamp())) * 1000)::bigint AS now_ms \gset

-- Won, then rolled back: as if the claim had never been made.
BEGIN;
SELECT anarchon_claim('tx', :now_ms, 'tok-1');
SELECT anarchon_check('tx', :now_ms);
ROLLBACK;
SELECT anarchon_check('tx', :now_ms);
SELECT count(*) AS runs FROM anarchon.runs WHERE job = 'tx';
-- So another instance can win the slot.
SELECT anarchon_claim('tx', :now_ms, 'tok-2');

-- Won, then committed with the caller's other work.
BEGIN;
SELECT anarchon_claim('tx2', :now_ms, 'tok-1');
CREATE TEMP TABLE work_done AS SELECT 1 AS x;
COMMIT;
SELECT anarchon_check('tx2', :now_ms);

-- A savepoint rolled back takes the claim with it.
BEGIN;
SAVEPOINT s;
SELECT anarchon_claim('tx3', :now_ms, 'tok-1');
ROLLBACK TO SAVEPOINT s;
SELECT anarchon_check('tx3', :now_ms);
SELECT anarchon_claim('tx3', :now_ms, 'tok-2');
COMMIT;
SELECT token FROM anarchon.runs WHERE job = 'tx3';

-- Claims in a transaction see the transaction's own earlier claims.
BEGIN;
SELECT anarchon_claim('tx4', :now_ms, 'tok-1');
SELECT anarchon_claim('tx4', :now_ms, 'tok-2');
SELECT anarchon_claim('tx4', :now_ms + 1000, 'tok-2');
COMMIT;

-- An error after the claim aborts the transaction and the claim with it.
BEGIN;
SELECT anarchon_claim('tx5', :now_ms, 'tok-1');
SELECT 1 / 0;
COMMIT;
SELECT anarchon_check('tx5', :now_ms);

-- A claim caught by a PL/pgSQL exception block is undone with its block.
DO $$
BEGIN
	PERFORM anarchon_claim('tx6', (extract(epoch FROM date_trunc('second', clock_timestamp())) * 1000)::bigint, 'tok-1');
	RAISE EXCEPTION 'the job failed to start';
EXCEPTION WHEN OTHERS THEN
	RAISE NOTICE 'caught: %', SQLERRM;
END
$$;
SELECT count(*) AS runs FROM anarchon.runs WHERE job = 'tx6';

-- REPEATABLE READ works too (a claim that races another session's claim of
-- the same job then fails with serialization_failure: doc/postgresql.md).
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT anarchon_claim('tx7', :now_ms, 'tok-1');
SELECT anarchon_claim('tx7', :now_ms, 'tok-2');
COMMIT;
