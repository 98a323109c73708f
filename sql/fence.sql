-- anarchon_fence(job, slot, token): true while token owns the running run;
-- otherwise SQLSTATE AN001, and the caller's transaction is rolled back.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS anarchon;
RESET client_min_messages;
TRUNCATE anarchon.runs, anarchon.runs_jobs;
SET anarchon.overlap = 'allow';
\set VERBOSITY default
CREATE TABLE fence_work (token text);

SELECT anarchon_claim('fence', 4102444800000, 'tok-a');

-- the owner, inside its transaction: true, and its writes commit with the finish
BEGIN;
SELECT anarchon_fence('fence', 4102444800000, 'tok-a');
INSERT INTO fence_work VALUES ('tok-a');
SELECT anarchon_finish('fence', 4102444800000, 'tok-a');
COMMIT;
SELECT token, state FROM anarchon.runs WHERE job = 'fence';

-- another token: AN001; nothing it writes commits
\set VERBOSITY sqlstate
BEGIN;
INSERT INTO fence_work VALUES ('tok-b');
SELECT anarchon_fence('fence', 4102444800000, 'tok-b');
ROLLBACK;
\set VERBOSITY default
-- the owner of a finished run, and a run nobody claimed
BEGIN;
SELECT anarchon_fence('fence', 4102444800000, 'tok-a');
ROLLBACK;
BEGIN;
SELECT anarchon_fence('fence', '2100-01-01 00:00:01+00'::timestamptz, 'tok-a');
ROLLBACK;
SELECT token FROM fence_work;

-- in autocommit a fence commits on its own and protects nothing: refused
-- (25P01), even for the owner of the running run, as in SQLite; from a
-- function the fence and the writes share the statement's transaction
SELECT anarchon_claim('fence', 4102444802000, 'tok-d');
\set VERBOSITY sqlstate
SELECT anarchon_fence('fence', 4102444802000, 'tok-d');
\set VERBOSITY default
SELECT anarchon_fence('fence', 4102444802000, 'tok-d');
CREATE FUNCTION pg_temp.fenced_write(t text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
	PERFORM anarchon_fence('fence', 4102444802000, t);
	INSERT INTO fence_work VALUES (t);
	RETURN true;
END $$;
SELECT pg_temp.fenced_write('tok-d');
SELECT token FROM fence_work ORDER BY token;

-- a read-only transaction cannot hold the run
SELECT anarchon_claim('fence', 4102444801000, 'tok-c');
BEGIN READ ONLY;
SELECT anarchon_fence('fence', 4102444801000, 'tok-c');
ROLLBACK;

-- bad input, as in the other functions (checked before the transaction rule)
SELECT anarchon_fence(NULL, 4102444800000, 'tok-a');
SELECT anarchon_fence('fence', 4102444800002, 'tok-a');
SELECT anarchon_fence('fence', 4102444800000, 'a b');
DROP TABLE fence_work;
