-- An in-memory database cannot be opened twice: the claim runs on the
-- caller's own connection, outside any transaction of the caller's.
.open :memory:
.load ./sqlite/anarchon
.echo on
.parameter set @s "anarchon_now() / 1000 * 1000"
SELECT anarchon_claim('m', @s, 'a'), anarchon_claim('m', @s, 'b');
SELECT anarchon_check('m', @s), anarchon_finish('m', @s, 'a'), anarchon_check('m', @s);
BEGIN;
SELECT anarchon_claim('m', @s + 1000, 'a');
COMMIT;
SELECT job, slot - @s AS slot, attempt, token, state FROM anarchon_runs;
