-- Calls inside the caller's transactions and statements, WAL mode.
.load ./sqlite/anarchon
.echo on
.parameter set @s "anarchon_now() / 1000 * 1000"
PRAGMA journal_mode = WAL;
SELECT anarchon_config('overlap', 'allow');
CREATE TABLE work (id INTEGER PRIMARY KEY, what TEXT);
INSERT INTO work VALUES (1, 'one'), (2, 'two'), (3, 'three');
CREATE TABLE params AS SELECT @s AS s;

-- during a read of the caller's: works in WAL mode, one committed claim per row
SELECT id, anarchon_claim('w', @s + id * 1000, 'a') FROM work;
SELECT slot - @s AS slot, token, state FROM anarchon_runs ORDER BY slot;

-- inside a read transaction whose snapshot is older than another connection's
-- write (BEGIN IMMEDIATE on the caller's connection would fail with
-- SQLITE_BUSY_SNAPSHOT here): works, on the claim connection, and decides on
-- the latest committed runs, not on the caller's old snapshot
BEGIN;
SELECT count(*) FROM work;
.connection 1
.open ./db.sqlite
.load ./sqlite/anarchon
SELECT anarchon_config('overlap', 'allow');
INSERT INTO work VALUES (4, 'four');
SELECT anarchon_claim('w', (SELECT s FROM params) + 100000, 'b');
.connection 0
SELECT anarchon_claim('w', @s + 100000, 'a'), anarchon_claim('w', @s + 101000, 'a');
SELECT count(*) FROM work;
COMMIT;

-- a write transaction of the caller's: refused, and the caller's work survives
BEGIN;
UPDATE work SET what = 'changed' WHERE id = 1;
SELECT anarchon_claim('w', @s + 200000, 'a');
COMMIT;
SELECT what FROM work WHERE id = 1;
CREATE TABLE log (outcome TEXT);
INSERT INTO log SELECT anarchon_claim('w', @s + 201000, 'a');
SELECT count(*) AS logged FROM log;
SELECT slot - @s AS slot, token, state FROM anarchon_runs ORDER BY slot;
