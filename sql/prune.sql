-- anarchon_prune deletes only runs no claim can ask about any more.
CREATE EXTENSION IF NOT EXISTS anarchon;
TRUNCATE anarchon.runs, anarchon.runs_jobs;
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
