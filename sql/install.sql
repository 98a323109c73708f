-- CREATE EXTENSION and DROP EXTENSION are both clean.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS anarchon;
RESET client_min_messages;
CREATE EXTENSION anarchon;
SELECT n.nspname, c.relname, c.relkind
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'anarchon' AND (c.relname LIKE 'runs%' OR c.relname = 'claim_info')
 ORDER BY 2;
-- The indexes that keep claim, check and overlap on index lookups.
SELECT indexdef FROM pg_indexes
 WHERE schemaname = 'anarchon' AND tablename IN ('runs', 'runs_jobs') ORDER BY indexname;
-- No function is SECURITY DEFINER or has a SET clause (each would cost a GUC
-- save and restore per call): the C code runs its queries as the owner of
-- schema anarchon with search_path pinned to pg_catalog (privileges.sql).
SELECT p.proname, p.prosecdef, p.proconfig
  FROM pg_proc p
 WHERE p.pronamespace = 'anarchon'::regnamespace
   AND p.proname IN ('anarchon_claim', 'anarchon_claim_info', 'anarchon_heartbeat',
                     'anarchon_finish', 'anarchon_check', 'anarchon_prune', 'anarchon_token')
 GROUP BY 1, 2, 3 ORDER BY 1;
-- The unqualified names are plain SQL functions calling anarchon.*.
SELECT p.proname, count(*) AS forms, bool_and(l.lanname = 'sql') AS sql
  FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
 WHERE p.pronamespace = 'public'::regnamespace
   AND p.proname IN ('anarchon_claim', 'anarchon_claim_info', 'anarchon_heartbeat',
                     'anarchon_finish', 'anarchon_check', 'anarchon_prune', 'anarchon_token')
 GROUP BY 1 ORDER BY 1;
SELECT length(anarchon_token()) AS len, anarchon_token() ~ '^[0-9a-f]{32}$' AS hex,
       anarchon_token() <> anarchon_token() AS fresh;
DROP EXTENSION anarchon;
-- Nothing is left behind.
SELECT count(*) AS left_behind FROM pg_namespace WHERE nspname = 'anarchon';
SELECT count(*) AS left_behind FROM pg_proc WHERE proname LIKE 'anarchon%';
SELECT count(*) AS left_behind FROM pg_type WHERE typname IN ('claim_info', 'run_state');
SELECT count(*) AS left_behind FROM pg_foreign_data_wrapper WHERE fdwname = 'anarchon';
-- The public names go to the schema the extension is created in.
CREATE SCHEMA regress_app;
CREATE EXTENSION anarchon SCHEMA regress_app;
SELECT count(*) AS forms FROM pg_proc
 WHERE pronamespace = 'regress_app'::regnamespace AND proname = 'anarchon_claim';
SELECT regress_app.anarchon_check('j', 4102444800000::bigint);
-- A session keeps the OIDs of the tables it probes: a primary key rebuilt
-- under a new OID, and below the objects dropped and made again, are found.
REINDEX TABLE CONCURRENTLY anarchon.runs;
SELECT regress_app.anarchon_check('j', 4102444800000::bigint);
DROP EXTENSION anarchon;
DROP SCHEMA regress_app;
-- And again, for the tests that follow.
CREATE EXTENSION anarchon;
SELECT anarchon_check('j', 4102444800000::bigint);
SELECT extname, extversion FROM pg_extension WHERE extname = 'anarchon';
