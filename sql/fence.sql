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
SELECT anarchon_fence('fence', 4102444800000, 'tok-a');
SELECT anarchon_fence('fence', '2100-01-01 00:00:01+00'::timestamptz, 'tok-a');
SELECT token FROM fence_work;

-- a read-only transaction cannot hold the run
SELECT anarchon_claim('fence', 4102444801000, 'tok-c');
BEGIN READ ONLY;
SELECT anarchon_fence('fence', 4102444801000, 'tok-c');
ROLLBACK;

-- bad input, as in the other functions
SELECT anarchon_fence(NULL, 4102444800000, 'tok-a');
SELECT anarchon_fence('fence', 4102444800001, 'tok-a');
SELECT anarchon_fence('fence', 4102444800000, 'a b');
DROP TABLE fence_work;
