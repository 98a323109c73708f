-- An ordinary role calls the functions but cannot write the tables; pg_monitor reads the history.
CREATE EXTENSION IF NOT EXISTS anarchon;
TRUNCATE anarchon.runs, anarchon.runs_jobs;
SELECT (extract(epoch FROM date_trunc('second', clock_timestamp())) * 1000)::bigint AS now_ms \gset
CREATE ROLE regress_anarchon_app;
CREATE ROLE regress_anarchon_mon IN ROLE pg_monitor;

SET ROLE regress_anarchon_app;
SELECT anarchon_claim('p', :now_ms, 'tok-1');
SELECT anarchon.anarchon_claim('p', :now_ms, 'tok-2');
SELECT anarchon_check('p', :now_ms);
SELECT anarchon_heartbeat('p', :now_ms, 'tok-1');
SELECT anarchon_finish('p', :now_ms, 'tok-1');
SELECT length(anarchon_token());
-- No direct access to the tables.
INSERT INTO anarchon.runs VALUES ('p', now(), 1, 'x', 'running', now(), now(), NULL);
UPDATE anarchon.runs SET state = 'running';
DELETE FROM anarchon.runs;
SELECT count(*) FROM anarchon.runs;
INSERT INTO anarchon.runs_jobs VALUES ('x', now());
DELETE FROM anarchon.runs_jobs;
TRUNCATE anarchon.runs;
-- Deleting history is for the owner and whom it grants.
SELECT anarchon_prune();
SELECT anarchon.anarchon_prune();
-- A caller's search_path cannot change what the functions' queries mean.
CREATE TEMP TABLE runs (x int);
SET search_path = pg_temp, public;
SELECT anarchon_claim('p2', :now_ms, 'tok-1');
RESET search_path;
DROP TABLE pg_temp.runs;
RESET ROLE;

-- Monitoring reads the history, all but the tokens.
SET ROLE regress_anarchon_mon;
SELECT job, attempt, state, finished_at IS NOT NULL AS finished FROM anarchon.runs ORDER BY job;
SELECT token FROM anarchon.runs;
UPDATE anarchon.runs SET state = 'failed';
RESET ROLE;

-- The owner can grant prune.
GRANT EXECUTE ON FUNCTION anarchon.anarchon_prune(bigint) TO regress_anarchon_app;
SET ROLE regress_anarchon_app;
SELECT anarchon_prune() >= 0 AS pruned;
RESET ROLE;
REVOKE EXECUTE ON FUNCTION anarchon.anarchon_prune(bigint) FROM regress_anarchon_app;
-- Nor can operators and functions of a schema the caller owns, put ahead of
-- pg_catalog: an "=" that is always true, a clock stuck in 1999.
CREATE SCHEMA regress_evil AUTHORIZATION regress_anarchon_app;
SET ROLE regress_anarchon_app;
CREATE FUNCTION regress_evil.always(text, text) RETURNS boolean
	LANGUAGE sql IMMUTABLE AS 'SELECT true';
CREATE OPERATOR regress_evil.= (LEFTARG = text, RIGHTARG = text, FUNCTION = regress_evil.always);
CREATE FUNCTION regress_evil.clock_timestamp() RETURNS timestamptz
	LANGUAGE sql AS $$SELECT timestamptz '1999-01-01 00:00Z'$$;
SET search_path = regress_evil, pg_catalog, public;
SELECT anarchon_claim('p3', :now_ms, 'tok-1');
SELECT anarchon_claim('p3', :now_ms, 'tok-2');
SELECT anarchon_check('p3', :now_ms), anarchon_check('p4', :now_ms);
SELECT anarchon_heartbeat('p3', :now_ms, 'tok-2'), anarchon_finish('p4', :now_ms, 'tok-1');
RESET search_path;
RESET ROLE;
SELECT job, attempt, token, state FROM anarchon.runs WHERE job LIKE 'p_' ORDER BY job;
SELECT count(*) FROM anarchon.runs_jobs WHERE last_claim_at < '2000-01-01';
-- After a call the caller has its own role and search_path again, also one
-- set for its transaction only (on PostgreSQL 17 and later the path is
-- pinned through a nested setting level, which must end where it began).
SET ROLE regress_anarchon_app;
SET search_path = regress_evil, pg_catalog, public;
SELECT anarchon_claim('q1', :now_ms, 'tok-1');
SELECT current_user, current_setting('search_path');
BEGIN;
SET LOCAL search_path = pg_temp, public;
SELECT anarchon_heartbeat('q1', :now_ms, 'tok-1'), anarchon_check('q1', :now_ms);
SELECT current_user, current_setting('search_path');
COMMIT;
SELECT current_user, current_setting('search_path');
RESET search_path;
RESET ROLE;
SET client_min_messages = warning;
DROP SCHEMA regress_evil CASCADE;
RESET client_min_messages;
DROP ROLE regress_anarchon_app;
DROP ROLE regress_anarchon_mon;
