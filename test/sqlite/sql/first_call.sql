-- The first anarchon call of a connection, made where the claim cannot run,
-- on a database that has no anarchon_runs yet: a refusal names the function
-- that was called, and a check (which only reads) answers that there is no
-- run, inside the caller's write transaction and on a read-only connection.
-- Heartbeat and finish inside the caller's write transaction are part of it
-- (see anarchon_fence): with no run there, they answer 0.
.load ./sqlite/anarchon
.echo on
.parameter set @s "anarchon_now() / 1000 * 1000"
CREATE TABLE work (id INTEGER PRIMARY KEY);

-- inside the caller's write transaction
BEGIN;
INSERT INTO work VALUES (1);
SELECT anarchon_check('t', @s);
SELECT anarchon_claim('t', @s, 'a');
SELECT anarchon_heartbeat('t', @s, 'a');
SELECT anarchon_finish('t', @s, 'a');
SELECT anarchon_prune();
COMMIT;
SELECT count(*) AS work_rows FROM work;

-- the same connection, after its COMMIT: the claim creates anarchon_runs and wins
SELECT anarchon_claim('t', @s, 'a');
SELECT anarchon_check('t', @s);

-- a read-only connection to a database without anarchon_runs
.open fresh.db
CREATE TABLE work (id INTEGER PRIMARY KEY);
.open --readonly fresh.db
.load ./sqlite/anarchon
.parameter set @s "anarchon_now() / 1000 * 1000"
SELECT anarchon_check('t', @s);
SELECT anarchon_claim('t', @s, 'a');
SELECT count(*) AS tables FROM sqlite_schema WHERE name = 'anarchon_runs';
