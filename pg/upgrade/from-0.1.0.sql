-- from-0.1.0.sql — what a database whose SQL objects say 0.1.0 needs before
-- the install pieces run again (pg/upgrade/rerun.awk, pg/pg.mk): the changes
-- that CREATE OR REPLACE and IF NOT EXISTS cannot make.
--
-- "0.1.0" is the release (44733c6) and also every development build before
-- it, which called itself 0.1.0 while its objects changed.  So each step
-- looks at what is there and does nothing when it is already current: this
-- file, like the whole upgrade script, may run on any of them.
--
-- To add a step (a change to a stored format in this release):
--   - a new table, index, function, type: nothing here, the piece's
--     CREATE makes it (rerun.awk);
--   - a new column of an existing table: add it last in the piece's CREATE
--     TABLE and here `ALTER TABLE ... ADD COLUMN IF NOT EXISTS ...` with the
--     same definition (so that a fresh install and an update agree);
--   - a changed CHECK of a table, a changed default: drop and add it here;
--   - a function whose result type, OUT columns or argument names changed:
--     drop it here (and the views and the public wrapper that depend on
--     it), when its old form is there; the piece creates it anew;
--   - an object that is gone: drop it here, IF EXISTS.
-- test/upgrade/run.sh compares every catalog of an updated database with a
-- fresh install's: a forgotten step is a failed test, not a silent drift.
-- Changes of the next release go into a new from-<that release>.sql.

-- anarchon.run_log.status gained 'replaced' (overlap 'replace').
DO $an_step$
BEGIN
	IF pg_catalog.to_regclass('anarchon.run_log') IS NOT NULL THEN
		ALTER TABLE anarchon.run_log DROP CONSTRAINT IF EXISTS run_log_status_check;
		ALTER TABLE anarchon.run_log ADD CONSTRAINT run_log_status_check
			CHECK (status IN ('succeeded', 'failed', 'fenced', 'replaced'));
	END IF;
END
$an_step$;

-- anarchon_stats() gained the column claims_paused (pause): a function's
-- result cannot be replaced, so the old one goes, with the view over it and
-- its public wrapper; 60-stats.sql and 90-public-names.sql make them again.
DO $an_step$
BEGIN
	IF pg_catalog.to_regprocedure('anarchon.anarchon_stats()') IS NOT NULL
	   AND pg_catalog.pg_get_function_result('anarchon.anarchon_stats()'::pg_catalog.regprocedure)
			NOT LIKE '%claims_paused bigint%' THEN
		DROP VIEW IF EXISTS anarchon.stats;
		DROP FUNCTION IF EXISTS @extschema@.anarchon_stats();
		DROP FUNCTION anarchon.anarchon_stats();
	END IF;
END
$an_step$;
