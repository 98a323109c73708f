-- What monitoring reads of the history over a recent window:
-- anarchon.runs_by_state (runs by state per job) and anarchon.missed_runs_count
-- (missed slots per job whose schedule anarchon.run recorded).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS anarchon;
RESET client_min_messages;
TRUNCATE anarchon.runs, anarchon.runs_jobs, anarchon.run_schedules;
SET anarchon.overlap = 'allow';
SELECT (extract(epoch FROM date_trunc('second', clock_timestamp())) * 1000)::bigint AS now_ms \gset

-- job m: one run of each state, through the functions; a run whose lease of
-- 1 ms ran out is 'expired' (running, and a claim would take it over)
SELECT anarchon_claim('m', :now_ms - 4000, 'tok-a'), anarchon_claim('m', :now_ms - 3000, 'tok-a'),
       anarchon_claim('m', :now_ms - 2000, 'tok-a'),
       anarchon_claim('m', :now_ms - 1000, 'tok-a', lease_ms => 1);
SELECT anarchon_finish('m', :now_ms - 4000, 'tok-a'),
       anarchon_finish('m', :now_ms - 3000, 'tok-a', 'failed');
SELECT pg_sleep(0.01);
-- and, written as the owner: an interrupted run, a run two days old (outside
-- the window), and job o whose only run is two days old (left out)
INSERT INTO anarchon.runs VALUES
	('m', to_timestamp((:now_ms - 5000) / 1000.0), 1, 't', 'interrupted', now(), now(), now()),
	('m', now() - interval '2 days', 1, 't', 'succeeded', now(), now(), now()),
	('o', now() - interval '2 days', 1, 't', 'succeeded', now(), now(), now());
INSERT INTO anarchon.runs_jobs VALUES ('o', now());
SELECT * FROM anarchon.runs_by_state();
SELECT * FROM anarchon.runs_by_state(interval '3 days') WHERE runs > 0;
-- the window is bounded
SELECT * FROM anarchon.runs_by_state(interval '8 days');
SELECT * FROM anarchon.runs_by_state(interval '0');
SELECT * FROM anarchon.runs_by_state(NULL);
-- one range scan of the primary key per job, never the whole history (the
-- query of anarchon.runs_by_state for one job; enable_seqscan is off so that
-- an unusable index shows up as a Seq Scan)
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF)
SELECT count(*) FILTER (WHERE r.state = 'running' AND r.lease_until >= now()) AS running, count(*)
  FROM anarchon.runs r WHERE r.job = 'm' AND r.slot >= now() - interval '24 hours';
RESET enable_seqscan;
RESET enable_bitmapscan;

-- missed slots: job h runs hourly since 3 hours before the hour that has
-- begun; the runs of the second and of the current and next hours are
-- there, so exactly two slots are missed whatever the time
INSERT INTO anarchon.run_schedules (job, schedule, since)
	VALUES ('h', '0 * * * *', date_trunc('hour', now()) - interval '3 hours'),
	       ('bad job', '* * * * *', now() - interval '1 hour'),
	       ('badsched', 'not a schedule', now() - interval '1 hour');
INSERT INTO anarchon.runs VALUES
	('h', date_trunc('hour', now()) - interval '2 hours', 1, 't', 'succeeded', now(), now(), now()),
	('h', date_trunc('hour', now()), 1, 't', 'succeeded', now(), now(), now()),
	('h', date_trunc('hour', now()) + interval '1 hour', 1, 't', 'succeeded', now(), now(), now());
SELECT job, schedule, missed, problem IS NOT NULL AS has_problem FROM anarchon.missed_runs_count();
SELECT job, problem FROM anarchon.missed_runs_count() WHERE problem IS NOT NULL;
-- the window: the last hour holds no missed slot of h; 'since' bounds a longer one
SELECT missed FROM anarchon.missed_runs_count(interval '30 minutes') WHERE job = 'h';
SELECT missed FROM anarchon.missed_runs_count(interval '7 days') WHERE job = 'h';
SELECT * FROM anarchon.missed_runs_count(interval '7 days 1 second');

-- who may: pg_monitor, and nobody else unless granted
CREATE ROLE regress_anarchon_metrics_mon LOGIN IN ROLE pg_monitor;
CREATE ROLE regress_anarchon_metrics_app LOGIN;
SET ROLE regress_anarchon_metrics_mon;
SELECT count(*) AS rows FROM anarchon.runs_by_state();
SELECT count(*) AS rows FROM anarchon.missed_runs_count();
RESET ROLE;
SET ROLE regress_anarchon_metrics_app;
SELECT count(*) FROM anarchon.runs_by_state();
SELECT count(*) FROM anarchon.missed_runs_count();
RESET ROLE;
DROP ROLE regress_anarchon_metrics_mon;
DROP ROLE regress_anarchon_metrics_app;
TRUNCATE anarchon.runs, anarchon.runs_jobs, anarchon.run_schedules;
