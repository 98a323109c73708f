-- anarchon_check: every state, read with one SELECT and no lock.
CREATE EXTENSION IF NOT EXISTS anarchon;
TRUNCATE anarchon.runs, anarchon.runs_jobs;
SELECT (extract(epoch FROM date_trunc('second', clock_timestamp())) * 1000)::bigint AS now_ms \gset
CREATE FUNCTION pg_temp.expire(j text) RETURNS void LANGUAGE sql
	AS $$ UPDATE anarchon.runs SET lease_until = lease_until - interval '1 hour' WHERE job = j $$;

SELECT anarchon_check('c', :now_ms) AS none;
SELECT anarchon_claim('c', :now_ms, 'tok-1', attempts => 2);
SELECT anarchon_check('c', :now_ms) AS running;
SELECT pg_temp.expire('c');
SELECT anarchon_check('c', :now_ms) AS expired;
-- check never takes over: the run is still attempt 1 of tok-1.
SELECT attempt, token, state FROM anarchon.runs WHERE job = 'c';
SELECT anarchon_claim('c', :now_ms, 'tok-2', attempts => 2);
SELECT anarchon_check('c', :now_ms) AS running_again;
SELECT anarchon_finish('c', :now_ms, 'tok-2');
SELECT anarchon_check('c', :now_ms) AS succeeded;
SELECT anarchon_claim('f', :now_ms, 'tok-1');
SELECT anarchon_finish('f', :now_ms, 'tok-1', 'failed');
SELECT anarchon_check('f', to_timestamp(:now_ms / 1000.0)) AS failed;
SELECT anarchon_claim('i', :now_ms, 'tok-1');
SELECT pg_temp.expire('i');
SELECT anarchon_claim('i', :now_ms, 'tok-2');
SELECT anarchon_check('i', :now_ms) AS interrupted;
-- check writes nothing: no lock row for a job only checked.
SELECT anarchon_check('never-claimed', :now_ms);
SELECT count(*) AS lock_rows FROM anarchon.runs_jobs WHERE job = 'never-claimed';
-- It is a plain SELECT: it works in a read-only transaction, where a claim cannot.
BEGIN TRANSACTION READ ONLY;
SELECT anarchon_check('c', :now_ms);
SET LOCAL anarchon.in_transaction = on;
SELECT anarchon_claim('c', :now_ms, 'tok-3');
ROLLBACK;
-- The same in autocommit, in a session whose transactions are read-only.
SET default_transaction_read_only = on;
SELECT anarchon_check('c', :now_ms);
SELECT anarchon_claim('c', :now_ms, 'tok-3');
RESET default_transaction_read_only;
