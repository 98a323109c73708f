-- Heartbeat and finish change a run only for the token that owns it, while it runs.
CREATE EXTENSION IF NOT EXISTS anarchon;
TRUNCATE anarchon.runs, anarchon.runs_jobs;
SELECT (extract(epoch FROM date_trunc('second', clock_timestamp())) * 1000)::bigint AS now_ms \gset
CREATE FUNCTION pg_temp.expire(j text) RETURNS void LANGUAGE sql
	AS $$ UPDATE anarchon.runs SET lease_until = lease_until - interval '1 hour' WHERE job = j $$;

SELECT anarchon_claim('hb', :now_ms, 'tok-1', attempts => 2);
-- The owner's heartbeat renews the lease to now + lease_ms.
SELECT anarchon_heartbeat('hb', :now_ms, 'tok-1', lease_ms => 3600000);
SELECT lease_until > now() + interval '59 minutes' AS renewed FROM anarchon.runs WHERE job = 'hb';
SELECT anarchon_heartbeat('hb', :now_ms, 'tok-1');
SELECT lease_until < now() + interval '59 minutes' AS default_lease FROM anarchon.runs WHERE job = 'hb';
-- Anyone else's is refused and changes nothing.
SELECT anarchon_heartbeat('hb', :now_ms, 'tok-2');
SELECT anarchon_finish('hb', :now_ms, 'tok-2');
SELECT token, state FROM anarchon.runs WHERE job = 'hb';
-- A heartbeat for a run that does not exist.
SELECT anarchon_heartbeat('hb', :now_ms + 1000, 'tok-1');
SELECT anarchon_finish('hb', :now_ms + 1000, 'tok-1');
-- A lease that ran out is not renewed, even when nobody took it over: its
-- owner may have stopped (a finish is still accepted, below the takeover).
SELECT pg_temp.expire('hb');
SELECT anarchon_heartbeat('hb', :now_ms, 'tok-1');
-- After a takeover the old token is fenced off.
SELECT pg_temp.expire('hb');
SELECT anarchon_claim('hb', :now_ms, 'tok-2', attempts => 2);
SELECT anarchon_heartbeat('hb', :now_ms, 'tok-1');
SELECT anarchon_finish('hb', :now_ms, 'tok-1');
SELECT attempt, token, state FROM anarchon.runs WHERE job = 'hb';
-- The new owner finishes; then nobody can change the run any more.
SELECT anarchon_finish('hb', :now_ms, 'tok-2', status => 'failed');
SELECT anarchon_finish('hb', :now_ms, 'tok-2');
SELECT anarchon_heartbeat('hb', :now_ms, 'tok-2');
SELECT attempt, token, state, finished_at IS NOT NULL AS finished FROM anarchon.runs WHERE job = 'hb';
-- An interrupted run cannot be finished by its last owner.
SELECT anarchon_claim('int', :now_ms, 'tok-1');
SELECT pg_temp.expire('int');
SELECT anarchon_claim('int', :now_ms, 'tok-2');
SELECT anarchon_finish('int', :now_ms, 'tok-1');
SELECT state FROM anarchon.runs WHERE job = 'int';
-- timestamptz forms.
SELECT anarchon_claim('ts', to_timestamp(:now_ms / 1000.0), 'tok-1');
SELECT anarchon_heartbeat('ts', to_timestamp(:now_ms / 1000.0), 'tok-1'),
       anarchon_finish('ts', to_timestamp(:now_ms / 1000.0), 'tok-1', 'succeeded');
