-- anarchon_prune deletes the runs no claim can ask about any more, and only those.
.load ./sqlite/anarchon
.echo on
.parameter set @now "anarchon_now()"
SELECT anarchon_config('overlap', 'allow'), anarchon_config('max_late_ms', 1000), anarchon_config('lease_ms', 1000);
-- retention = max_late_ms + lease_ms × attempts = 2000 ms
-- (a slot is a whole second: the next one)
SELECT anarchon_claim('p', @now / 1000 * 1000 + 1000, 'fresh');
-- old runs are written directly: no claim could make them any more
INSERT INTO anarchon_runs VALUES ('p', @now - 10000, 1, 't', 'succeeded', @now - 9000, @now - 10000, @now - 9500);
INSERT INTO anarchon_runs VALUES ('p', @now - 9000, 1, 't', 'interrupted', @now - 8000, @now - 9000, @now - 7000);
-- an old run that still holds a live lease (a long job heartbeating) is kept
INSERT INTO anarchon_runs VALUES ('p', @now - 8000, 1, 't', 'running', @now + 60000, @now - 8000, NULL);
-- an old run whose lease ran out long ago goes
INSERT INTO anarchon_runs VALUES ('p', @now - 7000, 1, 't', 'running', @now - 6000, @now - 7000, NULL);
SELECT anarchon_prune(1999);
SELECT anarchon_prune('a while');
SELECT anarchon_prune(0);
SELECT anarchon_prune(1);
SELECT anarchon_prune(-1);
SELECT anarchon_prune(-9223372036854775808);
-- a retention longer than any time can count back keeps every run (in SQLite
-- times are integers: the largest keep_ms, 2^63 - 1, is the edge of the range)
SELECT anarchon_prune(9223372036854775807), anarchon_prune(10000000000000000);
SELECT count(*) FROM anarchon_runs;
SELECT anarchon_prune();
SELECT iif(token = 'fresh', 'fresh', slot - @now) AS slot, state FROM anarchon_runs ORDER BY slot;
SELECT anarchon_prune(7500);
SELECT iif(token = 'fresh', 'fresh', slot - @now) AS slot, state FROM anarchon_runs ORDER BY slot;
SELECT anarchon_prune();
