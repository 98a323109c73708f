-- anarchon_claim_many: one slot of many jobs in one BEGIN IMMEDIATE.  Each
-- row answers as anarchon_claim would; a job's error is its row; errors of
-- the call fail the statement and claim nothing.
.load ./sqlite/anarchon
.echo on
.parameter set @s "anarchon_now() / 1000 * 1000 + 600000"
.parameter set @old "anarchon_now() / 1000 * 1000 - 120000"
SELECT anarchon_config('overlap', 'skip');

-- Rollback-journal mode: the scalar form reads no table and answers JSON.
SELECT anarchon_claim_many('["b", "a", "bad job", "a"]', @s, 'tok-1');
SELECT job, token FROM anarchon_runs ORDER BY job;
-- The table form reads a (virtual) table: refused in this mode, as a claim inside a read is.
SELECT * FROM anarchon_claim_many('["a"]', @s, 'tok-1');

PRAGMA journal_mode = wal;
-- The same states on x-* (claimed together) and y-* (one by one): the same answers.
SELECT anarchon_claim(p || '-running', @s, 'other') FROM (SELECT 'x' AS p UNION ALL SELECT 'y');
SELECT anarchon_claim(p || '-done', @s, 'other'), anarchon_finish(p || '-done', @s, 'other') FROM (SELECT 'x' AS p UNION ALL SELECT 'y');
SELECT anarchon_pause(p || '-paused') FROM (SELECT 'x' AS p UNION ALL SELECT 'y');
SELECT anarchon_claim(p || '-overlap', @s - 60000, 'other') FROM (SELECT 'x' AS p UNION ALL SELECT 'y');
SELECT job, outcome, detail FROM anarchon_claim_many('["x-running", "x-fresh", "x-done", "x-paused", "x-overlap", "x y"]', @s, 'tok-2');
SELECT anarchon_claim('y-done', @s, 'tok-2'), anarchon_claim('y-fresh', @s, 'tok-2'), anarchon_claim('y-overlap', @s, 'tok-2'),
       anarchon_claim('y-paused', @s, 'tok-2'), anarchon_claim('y-running', @s, 'tok-2');
-- A second batch of another token answers what anarchon_claim of that token says.
SELECT job, outcome FROM anarchon_claim_many('["x-running", "x-fresh", "x-done", "x-paused", "x-overlap"]', @s, 'tok-3');
SELECT anarchon_claim('x-done', @s, 'tok-3'), anarchon_claim('x-fresh', @s, 'tok-3'), anarchon_claim('x-overlap', @s, 'tok-3'),
       anarchon_claim('x-paused', @s, 'tok-3'), anarchon_claim('x-running', @s, 'tok-3');
SELECT job, outcome FROM anarchon_claim_many('["x-late"]', @old, 'tok-2');
SELECT anarchon_claim('y-late', @old, 'tok-2');
SELECT count(*) AS rows FROM anarchon_claim_many('[]', @s, 'tok-2');

-- Errors of the call: nothing is claimed.
SELECT * FROM anarchon_claim_many('{"a": 1}', @s, 'tok-4');
SELECT * FROM anarchon_claim_many('["z1", 1]', @s, 'tok-4');
SELECT * FROM anarchon_claim_many('["z1", null]', @s, 'tok-4');
SELECT * FROM anarchon_claim_many('["z1"', @s, 'tok-4');
SELECT * FROM anarchon_claim_many(42, @s, 'tok-4');
SELECT * FROM anarchon_claim_many(NULL, @s, 'tok-4');
SELECT * FROM anarchon_claim_many('["z1"]', 4102444800001, 'tok-4');
SELECT * FROM anarchon_claim_many('["z1"]', NULL, 'tok-4');
SELECT * FROM anarchon_claim_many('["z1"]', @s, '');
SELECT * FROM anarchon_claim_many('["z1"]', @s);
SELECT anarchon_claim_many('["z1"]', @s, NULL);
SELECT count(*) AS z1_runs FROM anarchon_runs WHERE job = 'z1';
-- Inside the caller's write transaction: refused like anarchon_claim.
BEGIN;
CREATE TABLE w(x);
SELECT * FROM anarchon_claim_many('["z1"]', @s, 'tok-4');
ROLLBACK;
