-- Jobs belong to someone: a role acts only on jobs it owns (or whose owner it
-- is a member of); the first claimer of a job nobody owns takes it; limits
-- that only a superuser raises.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS anarchon;
RESET client_min_messages;
TRUNCATE anarchon.runs, anarchon.runs_jobs, anarchon.job_owners, anarchon.run_log, anarchon.run_schedules;
SET anarchon.overlap = 'allow';
SELECT (extract(epoch FROM date_trunc('second', clock_timestamp())) * 1000)::bigint AS now_ms \gset
CREATE ROLE regress_own_app;
CREATE ROLE regress_own_other;
CREATE ROLE regress_own_fleet_member IN ROLE regress_own_app;
CREATE ROLE regress_own_mon IN ROLE pg_monitor;
\set VERBOSITY default

-- the application's role claims first: the job is its own, nothing to configure
SET ROLE regress_own_app;
SELECT anarchon_claim('nightly', :now_ms, 'tok-a');
SELECT anarchon_heartbeat('nightly', :now_ms, 'tok-a');
RESET ROLE;
SELECT job, owner::regrole FROM anarchon.job_owners;

-- another role can neither claim, heartbeat, finish, fence, check, keep alive,
-- record nor ask for missed slots of it (42501), and nothing changes
SET ROLE regress_own_other;
\set VERBOSITY sqlstate
SELECT anarchon_claim('nightly', :now_ms + 60000, 'tok-b');
SELECT anarchon_claim('nightly', :now_ms, 'tok-a');
SELECT anarchon_heartbeat('nightly', :now_ms, 'tok-a');
SELECT anarchon_finish('nightly', :now_ms, 'tok-a');
BEGIN;
SELECT anarchon_fence('nightly', :now_ms, 'tok-a');
ROLLBACK;
SELECT anarchon_check('nightly', :now_ms);
SELECT * FROM anarchon_missed('nightly', '* * * * *', now() - interval '5 minutes', now());
SELECT anarchon.keepalive_start('nightly', to_timestamp(:now_ms / 1000.0), 'tok-a');
SELECT anarchon.run_log_add('nightly', now(), 'won', 'succeeded', NULL, now());
SELECT anarchon.run_schedule_note('nightly', '0 0 1 1 *');
\set VERBOSITY default
SELECT anarchon_claim('nightly', :now_ms + 60000, 'tok-b');
-- its own job is its own
SELECT anarchon_claim('other-job', :now_ms, 'tok-b');
RESET ROLE;
SELECT job, slot = to_timestamp(:now_ms / 1000.0) AS first_slot, token, state FROM anarchon.runs ORDER BY job, slot;
SELECT count(*) AS forged_log FROM anarchon.run_log;
SELECT count(*) AS forged_schedules FROM anarchon.run_schedules;

-- a member of the owner acts on it; pg_monitor reads its state
SET ROLE regress_own_fleet_member;
SELECT anarchon_claim('nightly', :now_ms, 'tok-a'), anarchon_finish('nightly', :now_ms, 'tok-a');
RESET ROLE;
SET ROLE regress_own_mon;
SELECT anarchon_check('nightly', :now_ms);
\set VERBOSITY sqlstate
SELECT anarchon_claim('nightly', :now_ms + 120000, 'tok-m');
\set VERBOSITY default
RESET ROLE;

-- inside a SECURITY DEFINER function the definer's rights count (the current
-- user, as postgres_fdw checks), not the caller's: the owner's definer
-- lends its rights, another role's definer takes them away
CREATE FUNCTION pg_temp.as_app_check() RETURNS text LANGUAGE sql SECURITY DEFINER
	AS $$ SELECT anarchon_check('nightly', 4102444800000) $$;
ALTER FUNCTION pg_temp.as_app_check() OWNER TO regress_own_app;
CREATE FUNCTION pg_temp.as_other_check() RETURNS text LANGUAGE sql SECURITY DEFINER
	AS $$ SELECT anarchon_check('nightly', 4102444800000) $$;
ALTER FUNCTION pg_temp.as_other_check() OWNER TO regress_own_other;
SET ROLE regress_own_other;
SELECT pg_temp.as_app_check();
RESET ROLE;
SET ROLE regress_own_app;
\set VERBOSITY sqlstate
SELECT pg_temp.as_other_check();
\set VERBOSITY default
RESET ROLE;
DROP FUNCTION pg_temp.as_app_check(), pg_temp.as_other_check();
-- an index expression that ANALYZE evaluates runs as the table's owner (a
-- security-restricted operation), not as the superuser who runs ANALYZE: the
-- table's owner has no rights on the job, so the check is refused.  (Named
-- with its schema: from PostgreSQL 17 on, such operations search pg_catalog
-- and pg_temp only.)
CREATE FUNCTION regress_own_check(x int) RETURNS text LANGUAGE sql IMMUTABLE
	AS $$ SELECT anarchon.anarchon_check('nightly', 4102444800000) || x $$;
CREATE TABLE regress_own_t (x int);
ALTER TABLE regress_own_t OWNER TO regress_own_other;
CREATE INDEX ON regress_own_t (regress_own_check(x));
INSERT INTO regress_own_t VALUES (1);
ANALYZE regress_own_t;
DROP TABLE regress_own_t;
DROP FUNCTION regress_own_check(int);

-- an administrator gives a job to another role
SELECT anarchon.set_job_owner('nightly', 'regress_own_other');
SET ROLE regress_own_other;
SELECT anarchon_claim('nightly', :now_ms + 60000, 'tok-b');
RESET ROLE;
SET ROLE regress_own_app;
\set VERBOSITY sqlstate
SELECT anarchon_claim('nightly', :now_ms + 180000, 'tok-a');
SELECT anarchon.set_job_owner('nightly', 'regress_own_app');
\set VERBOSITY default
RESET ROLE;

-- limits only a superuser raises: a year-long lease, a slot far ahead, many jobs
SET ROLE regress_own_app;
SELECT anarchon_claim('limits', :now_ms, 'tok-a', lease_ms => 31536000000);
SELECT anarchon_claim('limits', 4102444800000, 'tok-a');
SELECT anarchon_claim('limits', :now_ms, 'tok-a', lease_ms => 3600000);
SELECT anarchon_heartbeat('limits', :now_ms, 'tok-a', lease_ms => 31536000000);
SET anarchon.max_lease_ms = 0;
RESET ROLE;
SET anarchon.max_jobs_per_role = 3;
SET ROLE regress_own_app;
SELECT anarchon_claim('limit-1', :now_ms, 'tok-a');
SELECT anarchon_claim('limit-2', :now_ms, 'tok-a');
SELECT anarchon_claim('limit-3', :now_ms, 'tok-a');
RESET ROLE;
RESET anarchon.max_jobs_per_role;
-- a superuser is not held to them
SELECT anarchon_claim('limits-su', :now_ms, 'tok-a', lease_ms => 31536000000);

-- with own_new_jobs off, only an administrator gives jobs
SET anarchon.own_new_jobs = off;
SET ROLE regress_own_app;
SELECT anarchon_claim('not-given', :now_ms, 'tok-a');
RESET ROLE;
RESET anarchon.own_new_jobs;

RESET ROLE;
TRUNCATE anarchon.runs, anarchon.runs_jobs, anarchon.job_owners;
DROP ROLE regress_own_app, regress_own_other, regress_own_fleet_member, regress_own_mon;
