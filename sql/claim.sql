-- Every row of the claim's decision table, in order, through anarchon_claim(_info).
CREATE EXTENSION IF NOT EXISTS anarchon;
TRUNCATE anarchon.runs, anarchon.runs_jobs;
SELECT (extract(epoch FROM date_trunc('second', clock_timestamp())) * 1000)::bigint AS now_ms \gset
-- Leases that ran out, without waiting: move a run's lease end an hour back.
CREATE FUNCTION pg_temp.expire(j text) RETURNS void LANGUAGE sql
	AS $$ UPDATE anarchon.runs SET lease_until = lease_until - interval '1 hour' WHERE job = j $$;

-- none, now - slot > max_late_ms: late, nothing written.
SELECT anarchon_claim('late-job', :now_ms - 66000, 'a');
SELECT count(*) AS written FROM anarchon.runs WHERE job = 'late-job';
-- A slot just inside max_late_ms is still claimable.
SELECT anarchon_claim('late-job', :now_ms - 30000, 'a');
-- The same as timestamptz.
SELECT anarchon_claim('late-job', to_timestamp((:now_ms - 3600000) / 1000.0), 'a');

-- none: insert attempt 1 for this token, won.
SELECT outcome, attempt, lease_until > now() AS leased
  FROM anarchon_claim_info('sync', :now_ms, 'tok-a');
SELECT job, attempt, token, state FROM anarchon.runs WHERE job = 'sync';

-- running with this token: won (our own claim, sent again); still attempt 1.
SELECT outcome, attempt FROM anarchon_claim_info('sync', :now_ms, 'tok-a');
-- running, lease_until >= now: running.
SELECT anarchon_claim('sync', :now_ms, 'tok-b');
SELECT count(*) AS runs FROM anarchon.runs WHERE job = 'sync';

-- none, overlap=skip, another run of the job holds a live lease: overlap, nothing written.
SELECT anarchon_claim('sync', :now_ms + 1000, 'tok-b');
SELECT count(*) AS written FROM anarchon.runs WHERE job = 'sync' AND slot = to_timestamp((:now_ms + 1000) / 1000.0);
-- Other jobs are not affected by it.
SELECT anarchon_claim('other', :now_ms + 1000, 'tok-b');
-- overlap=allow: runs may overlap.
SELECT anarchon_claim('sync', :now_ms + 1000, 'tok-b', overlap => 'allow');
SET anarchon.overlap = 'allow';
SELECT anarchon_claim('sync', :now_ms + 2000, 'tok-b');
RESET anarchon.overlap;
-- A run whose lease ran out does not block a new run.
SELECT pg_temp.expire('sync');
SELECT anarchon_claim('sync', :now_ms + 3000, 'tok-c');
-- Nor does a finished one.
SELECT anarchon_finish('sync', :now_ms + 3000, 'tok-c');
SELECT anarchon_claim('sync', :now_ms + 4000, 'tok-d');

-- running, lease ran out, attempts left: attempt + 1 for this token, won.
SELECT anarchon_claim('retry', :now_ms, 'tok-1', attempts => 3);
SELECT pg_temp.expire('retry');
SELECT outcome, attempt FROM anarchon_claim_info('retry', :now_ms, 'tok-2', attempts => 3);
SELECT attempt, token, state FROM anarchon.runs WHERE job = 'retry';
-- The old token is no longer ours: its resent claim answers running.
SELECT anarchon_claim('retry', :now_ms, 'tok-1', attempts => 3);
SELECT pg_temp.expire('retry');
SELECT outcome, attempt FROM anarchon_claim_info('retry', :now_ms, 'tok-3', attempts => 3);

-- running, lease ran out, none left: interrupted, done.
SELECT pg_temp.expire('retry');
SELECT outcome, attempt FROM anarchon_claim_info('retry', :now_ms, 'tok-4', attempts => 3);
SELECT attempt, token, state, finished_at IS NOT NULL AS finished FROM anarchon.runs WHERE job = 'retry';
-- attempts = 1 (the default): the first lease running out ends the run.
SELECT anarchon_claim('once', :now_ms, 'tok-1');
SELECT pg_temp.expire('once');
SELECT anarchon_claim('once', :now_ms, 'tok-2');
SELECT state FROM anarchon.runs WHERE job = 'once';

-- succeeded, failed or interrupted: done, whoever asks.
SELECT anarchon_claim('fin', :now_ms, 'tok-1');
SELECT anarchon_finish('fin', :now_ms, 'tok-1');
SELECT anarchon_claim('fin', :now_ms, 'tok-1'), anarchon_claim('fin', :now_ms, 'tok-2');
SELECT anarchon_claim('fin2', :now_ms, 'tok-1');
SELECT anarchon_finish('fin2', :now_ms, 'tok-1', 'failed');
SELECT anarchon_claim('fin2', :now_ms, 'tok-2');
SELECT outcome, attempt FROM anarchon_claim_info('retry', :now_ms, 'tok-5', attempts => 5);

-- Lateness only stops a first claim: a run that exists is answered as it stands.
SELECT anarchon_claim('old', :now_ms - 10000, 'tok-1');
SELECT anarchon_claim('old', :now_ms - 10000, 'tok-2', max_late_ms => 0);
SELECT anarchon_claim('old', :now_ms - 10000, 'tok-1', max_late_ms => 0);
-- late and overlap report no attempt and no lease.
SELECT * FROM anarchon_claim_info('old2', :now_ms - 10000, 'tok-1', max_late_ms => 0);

-- The same slot as timestamptz and as bigint is the same run.
SELECT anarchon_claim('both', to_timestamp(:now_ms / 1000.0), 'tok-1'),
       anarchon_claim('both', :now_ms, 'tok-2');
SELECT count(*) AS runs FROM anarchon.runs WHERE job = 'both';
-- Every claim of a job went through its lock row.
SELECT job FROM anarchon.runs_jobs ORDER BY job;
