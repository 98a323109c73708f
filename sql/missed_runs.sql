-- anarchon.missed_runs never raises because of one job, anarchon.run records
-- nothing it would then fail on, and anarchon.unwatch stops watching a job.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS anarchon;
RESET client_min_messages;
TRUNCATE anarchon.runs, anarchon.runs_jobs, anarchon.run_schedules;
\set VERBOSITY default

-- a bad job name, an empty command, two statements: refused before anything
-- is claimed or recorded
CALL anarchon.run('bad job', '* * * * *', 'SELECT 1');
CALL anarchon.run('good', '* * * * *', '');
CALL anarchon.run('good', '* * * * *', ' -- nothing but a comment');
CALL anarchon.run('good', '* * * * *', 'SELECT 1; SELECT 2');
SELECT count(*) AS recorded FROM anarchon.run_schedules;
SELECT count(*) AS claimed FROM anarchon.runs;
-- one statement, with or without its semicolon, runs
CALL anarchon.run('good', '* * * * *', 'SELECT 1;');
SELECT job, schedule FROM anarchon.run_schedules;

-- rows that cannot be asked about (left by an older version, or a store that
-- forgets sooner than the view's 7 days): one row each with the problem, and
-- every other job still listed
INSERT INTO anarchon.run_schedules (job, schedule, since)
	VALUES ('bad job', '* * * * *', now() - interval '3 minutes'),
	       ('badsched', 'not a schedule', now() - interval '3 minutes'),
	       ('quiet', '* * * * *', now() - interval '150 seconds');
SELECT job, schedule, slot IS NULL AS no_slot, problem IS NOT NULL AS has_problem
  FROM anarchon.missed_runs WHERE job <> 'quiet' ORDER BY job;
SELECT job, problem FROM anarchon.missed_runs WHERE problem IS NOT NULL ORDER BY job;
-- 'quiet' ran never: its slots of the last 150 s that can no longer be claimed
SELECT count(*) BETWEEN 1 AND 2 AS quiet_missed FROM anarchon.missed_runs WHERE job = 'quiet';

-- a store that cannot answer: a problem row per job, not an error for the
-- view; and each failed open counts in anarchon.stats although the store
-- never connected
CREATE SERVER regress_missed_down FOREIGN DATA WRAPPER anarchon
	OPTIONS (url 'redis://127.0.0.1:1?strategy=lease');
SELECT anarchon_stats_reset();
SET anarchon.store = 'regress_missed_down';
SELECT job, slot IS NULL AS no_slot, problem LIKE '%127.0.0.1:1%' AS says_where
  FROM anarchon.missed_runs ORDER BY job;
SELECT anarchon_claim('good', 4102444800000, 'tok');
RESET anarchon.store;
SELECT store, kind, errors_connection, claims_won FROM anarchon.stats WHERE store = 'regress_missed_down';
SET anarchon.store = 'regress_no_such_server';
SELECT anarchon_claim('good', 4102444800000, 'tok');
RESET anarchon.store;
SELECT store, kind, errors_configuration FROM anarchon.stats WHERE kind = 'unknown';
DROP SERVER regress_missed_down;

-- unwatch: the job leaves the view; a second time there is nothing to stop
SELECT anarchon.unwatch('bad job'), anarchon.unwatch('badsched'), anarchon.unwatch('quiet');
SELECT anarchon.unwatch('quiet');
SELECT count(*) AS problems FROM anarchon.missed_runs WHERE problem IS NOT NULL;
SELECT job FROM anarchon.run_schedules;

-- who may: pg_monitor reads the view; nobody else unwatches unless granted
CREATE ROLE regress_anarchon_watcher LOGIN IN ROLE pg_monitor;
SET ROLE regress_anarchon_watcher;
SELECT count(*) >= 0 AS readable FROM anarchon.missed_runs;
SELECT anarchon.unwatch('good');
RESET ROLE;
DROP ROLE regress_anarchon_watcher;
TRUNCATE anarchon.run_schedules, anarchon.run_log;
