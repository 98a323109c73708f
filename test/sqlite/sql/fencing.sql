-- Heartbeat and finish change a run only for the token that owns it.
.load ./sqlite/anarchon
.echo on
.parameter set @s "anarchon_now() / 1000 * 1000"
SELECT anarchon_config('attempts', 2), anarchon_config('lease_ms', 100);

SELECT anarchon_claim('fence', @s, 'old');
-- the owner renews its lease; others cannot
SELECT anarchon_heartbeat('fence', @s, 'old'), anarchon_heartbeat('fence', @s, 'intruder');
SELECT lease_until >= claimed_at + 100 AS renewed FROM anarchon_runs;

-- the lease runs out and a backup takes over attempt 2
.shell sleep 0.3
SELECT anarchon_claim('fence', @s, 'new');
-- the old runner is fenced: its heartbeat and finish are refused and change nothing
SELECT anarchon_heartbeat('fence', @s, 'old');
SELECT anarchon_finish('fence', @s, 'old');
SELECT anarchon_finish('fence', @s, 'old', 'failed');
SELECT attempt, token, state, finished_at FROM anarchon_runs;
-- the new owner finishes; after that nobody can heartbeat or finish again
SELECT anarchon_finish('fence', @s, 'new', 'failed');
SELECT anarchon_heartbeat('fence', @s, 'new'), anarchon_finish('fence', @s, 'new');
SELECT attempt, token, state, finished_at IS NOT NULL AS finished FROM anarchon_runs;
-- heartbeat and finish of a run that does not exist
SELECT anarchon_heartbeat('fence', @s + 1000, 'new'), anarchon_finish('fence', @s + 1000, 'new');
