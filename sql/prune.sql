-- anarchon_prune deletes only runs no claim can ask about any more.
CREATE EXTENSION IF NOT EXISTS anarchon;
TRUNCATE anarchon.runs, anarchon.runs_jobs, anarchon.pruned;
SELECT (extract(epoch FROM date_trunc('second', clock_timestamp())) * 1000)::bigint AS now_ms \gset
-- History: runs of old slots, as if claimed long ago.
INSERT INTO anarchon.runs
SELECT 'old', to_timestamp((:now_ms - d * 86400000) / 1000.0), 1, 'tok', 'succeeded',
       now() - d * interval '1 day', now() - d * interval '1 day', now() - d * interval '1 day'
  FROM generate_series(1, 10) AS d;
-- An old slot still running with a live lease (a long job that heartbeats) stays.
INSERT INTO anarchon.runs VALUES ('long', to_timestamp((:now_ms - 86400000) / 1000.0), 1, 'tok',
	'running', now() + interval '1 hour', now() - interval '1 day', NULL);
-- (Claims make each job's lock row; these runs were written by hand.)
INSERT INTO anarchon.runs_jobs VALUES ('old', now()), ('long', now());
-- A recent run stays.
SELECT anarchon_claim('recent', :now_ms, 'tok');
-- Retention by default: max_late_ms + lease_ms * attempts = 90 s.
SELECT anarchon_prune() AS deleted;
SELECT job, count(*) FROM anarchon.runs GROUP BY job ORDER BY job;
-- Restore the history, then keep five days.
INSERT INTO anarchon.runs
SELECT 'old', to_timestamp((:now_ms - d * 86400000) / 1000.0), 1, 'tok', 'succeeded',
       now() - d * interval '1 day', now() - d * interval '1 day', now() - d * interval '1 day'
  FROM generate_series(1, 10) AS d;
SELECT anarchon_prune(keep_ms => 5 * 86400000 + 3600000) AS deleted;
SELECT job, count(*) FROM anarchon.runs GROUP BY job ORDER BY job;
-- A retention shorter than the settings need is refused.
SELECT anarchon_prune(keep_ms => 1000);
-- A pruned slot is answered late, never won a second time.
SELECT anarchon_claim('old', :now_ms - 8 * 86400000, 'tok-2');
-- A kept one is answered as it stands.
SELECT anarchon_claim('old', :now_ms - 2 * 86400000, 'tok-2');

-- Retentions longer than PostgreSQL can count back keep everything.  The
-- cutoff (now - keep_ms) is never computed by overflowing arithmetic: before,
-- anarchon_prune(9223372036854775807) deleted every run, even one finished a
-- second earlier, and its slot could be won again.
SELECT anarchon_claim('fresh', :now_ms, 'tok-1');
SELECT anarchon_finish('fresh', :now_ms, 'tok-1');
-- (a run whose slot is at the very first timestamptz, written by hand)
INSERT INTO anarchon.runs VALUES ('ancient', '4714-11-24 00:00:00+00 BC', 1, 'tok',
	'succeeded', '4714-11-24 00:00:00+00 BC', '4714-11-24 00:00:00+00 BC', NULL);
INSERT INTO anarchon.runs_jobs VALUES ('ancient', now());
SELECT count(*) AS runs FROM anarchon.runs \gset before_
SELECT anarchon_prune(9223372036854775807) AS deleted;
SELECT anarchon_prune(10000000000000000) AS deleted;
-- The first timestamptz is 4714-11-24 BC, 210866803200000 ms before 1970:
-- a cutoff a minute before it is out of range and keeps everything ...
SELECT anarchon_prune(:now_ms + 210866803200000 + 60000) AS deleted;
SELECT count(*) = :before_runs AS every_run_kept FROM anarchon.runs;
-- ... and one a minute after it is in range: only the run before it goes.
SELECT anarchon_prune(:now_ms + 210866803200000 - 60000) AS deleted;
SELECT count(*) = :before_runs - 1 AS all_but_ancient_kept FROM anarchon.runs;
-- The fresh slot is still decided: not won again.
SELECT anarchon_claim('fresh', :now_ms, 'tok-2');
-- The settings' own retention, exactly, is accepted; one ms less is not.
SELECT anarchon_prune(90000) >= 0 AS accepted;
SELECT anarchon_prune(89999);
-- 0 and 1 are refused as too short; negative retentions too, down to the
-- smallest bigint.
SELECT anarchon_prune(0);
SELECT anarchon_prune(1);
SELECT anarchon_prune(-1);
SELECT anarchon_prune(-9223372036854775808);
-- A longer retention of the settings is required of keep_ms too.
SET anarchon.max_late_ms = 31536000000;
SELECT anarchon_prune(31536000000);
SELECT anarchon_prune(9223372036854775807) AS deleted;
RESET anarchon.max_late_ms;
-- (the tests after this one claim old slots: forget how far it pruned)
TRUNCATE anarchon.pruned;
