-- anarchon_check answers every state of a run, and writes nothing.
.load ./sqlite/anarchon
.echo on
.parameter set @s "anarchon_now() / 1000 * 1000"
SELECT anarchon_config('overlap', 'allow');
SELECT anarchon_check('c', @s) AS none;
SELECT anarchon_claim('c', @s, 't1');
SELECT anarchon_check('c', @s) AS running;
SELECT anarchon_config('lease_ms', 50);
SELECT anarchon_claim('c', @s + 1000, 't1'), anarchon_claim('c', @s + 2000, 't1');
.shell sleep 0.2
SELECT anarchon_check('c', @s + 1000) AS expired;
SELECT anarchon_finish('c', @s, 't1');
SELECT anarchon_check('c', @s) AS succeeded;
SELECT anarchon_finish('c', @s + 2000, 't1', 'failed');
SELECT anarchon_check('c', @s + 2000) AS failed;
SELECT anarchon_claim('c', @s + 1000, 't2');
SELECT anarchon_check('c', @s + 1000) AS interrupted;
SELECT slot - @s AS slot, state FROM anarchon_runs ORDER BY slot;
-- a check of a slot that no one claimed leaves no row behind
SELECT anarchon_check('c', @s + 99000), count(*) FROM anarchon_runs;
