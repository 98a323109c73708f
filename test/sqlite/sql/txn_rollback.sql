-- Calls inside the caller's transactions and statements, rollback-journal mode.
-- The claim commits on a connection of its own; where that would deadlock on
-- the caller's own lock, it is refused before anything is written.
.load ./sqlite/anarchon
.echo on
.parameter set @s "anarchon_now() / 1000 * 1000"
PRAGMA journal_mode;
SELECT anarchon_config('overlap', 'allow');
CREATE TABLE work (id INTEGER PRIMARY KEY, what TEXT);
INSERT INTO work VALUES (1, 'kept');

-- inside BEGIN before anything was read: works, and is committed at once;
-- the caller's ROLLBACK does not take the claim back
BEGIN;
SELECT anarchon_claim('t', @s, 'a');
ROLLBACK;
SELECT token, state FROM anarchon_runs WHERE slot = @s;

-- inside BEGIN after a write: the claim is refused; the caller's transaction
-- goes on, and heartbeat and finish are part of it (see anarchon_fence): the
-- run is finished when the caller commits
BEGIN;
INSERT INTO work VALUES (2, 'in the transaction');
SELECT anarchon_claim('t', @s + 1000, 'a');
SELECT anarchon_heartbeat('t', @s, 'a');
SELECT anarchon_finish('t', @s, 'a');
INSERT INTO work VALUES (3, 'after the refusal');
COMMIT;
SELECT * FROM work;
SELECT count(*) AS claimed FROM anarchon_runs WHERE slot = @s + 1000;

-- INSERT … SELECT anarchon_claim(…): refused; the statement inserts nothing, earlier rows stay
CREATE TABLE log (outcome TEXT);
INSERT INTO log SELECT anarchon_claim('t', @s + 2000, 'a');
SELECT count(*) AS logged FROM log;
SELECT count(*) AS claimed FROM anarchon_runs WHERE slot = @s + 2000;
SELECT * FROM work;

-- during a read of the caller's (a claim per row of a table): refused in this mode
SELECT id, anarchon_claim('t', @s + (10 + id) * 1000, 'a') FROM work;
SELECT count(*) AS claimed FROM anarchon_runs WHERE slot > @s + 10000;
-- inside a transaction that has read: refused as well
BEGIN;
SELECT count(*) FROM work;
SELECT anarchon_claim('t', @s + 3000, 'a');
COMMIT;
-- check is a read: it works anywhere
SELECT id, anarchon_check('t', @s) FROM work WHERE id = 1;

-- another connection holds the write lock: the claim waits busy_timeout_ms, then says so
.connection 1
.open ./db.sqlite
.load ./sqlite/anarchon
BEGIN IMMEDIATE;
INSERT INTO work VALUES (4, 'other connection');
.connection 0
SELECT anarchon_config('busy_timeout_ms', 100);
SELECT anarchon_claim('t', @s + 4000, 'a');
.connection 1
COMMIT;
.connection 0
SELECT anarchon_claim('t', @s + 4000, 'a');
