-- The GUCs anarchon.*: defaults, validation, the reserved prefix, per-call overrides.
CREATE EXTENSION IF NOT EXISTS anarchon;
TRUNCATE anarchon.runs, anarchon.runs_jobs;
SELECT (extract(epoch FROM date_trunc('second', clock_timestamp())) * 1000)::bigint AS now_ms \gset
-- The GUCs exist once the library is loaded: by the first anarchon call of a
-- session, by LOAD, or at connection with session_preload_libraries.
LOAD 'anarchon';
SELECT name, setting, context FROM pg_settings WHERE name LIKE 'anarchon.%' ORDER BY name;
-- Valid values are taken.
SET anarchon.lease_ms = 1000;
SET anarchon.max_late_ms = '0';
SET anarchon.attempts = 1000;
SET anarchon.overlap = allow;
SET anarchon.busy_timeout_ms = 0;
SELECT name, setting FROM pg_settings WHERE name LIKE 'anarchon.%' ORDER BY name;
RESET ALL;
-- Bad values are refused with what is allowed; the old value stays.
SET anarchon.lease_ms = 0;
SET anarchon.lease_ms = 31536000001;
SET anarchon.lease_ms = 'soon';
SET anarchon.lease_ms = '1.5';
SET anarchon.lease_ms = '';
SET anarchon.max_late_ms = -1;
SET anarchon.attempts = 0;
SET anarchon.attempts = 1001;
SET anarchon.overlap = 'sometimes';
SET anarchon.busy_timeout_ms = 2147483648;
SET anarchon.store = '';
SHOW anarchon.lease_ms;
-- A value too long to be a server's name (a URL with its password, most
-- likely) is refused at use, never repeated in an error.
SET anarchon.store = 'redis://user:S3CRET-PASSWORD@cache.example.internal:6379/0?strategy=lease';
SELECT anarchon_claim('s', :now_ms, 'tok-1');
RESET anarchon.store;
-- The prefix is reserved: a misspelt setting is an error, not a placeholder.
SET anarchon.lese_ms = 10;
-- The settings decide claims: a lease of lease_ms.
SET anarchon.lease_ms = 3600000;
SELECT anarchon_claim('s', :now_ms, 'tok-1');
SELECT lease_until - claimed_at AS lease FROM anarchon.runs WHERE job = 's';
RESET anarchon.lease_ms;
-- max_late_ms.
SET anarchon.max_late_ms = 1000;
SELECT anarchon_claim('s2', :now_ms - 5000, 'tok-1');
RESET anarchon.max_late_ms;
SELECT anarchon_claim('s2', :now_ms - 5000, 'tok-1');
-- Named arguments override a setting for one call only.
SELECT anarchon_claim('s3', :now_ms, 'tok-1', lease_ms => 7000);
SELECT lease_until - claimed_at AS lease FROM anarchon.runs WHERE job = 's3';
SELECT anarchon_claim('s3', :now_ms + 1000, 'tok-1', overlap => 'allow', lease_ms => 1);
SELECT lease_until - claimed_at AS lease FROM anarchon.runs WHERE job = 's3' AND slot > to_timestamp(:now_ms / 1000.0);
-- Overrides are checked like the GUCs.
SELECT anarchon_claim('s4', :now_ms, 'tok-1', lease_ms => 0);
SELECT anarchon_claim('s4', :now_ms, 'tok-1', attempts => 0);
SELECT anarchon_claim('s4', :now_ms, 'tok-1', overlap => 'never');
SELECT anarchon_claim('s4', :now_ms, 'tok-1', busy_timeout_ms => -1);
SELECT anarchon_heartbeat('s4', :now_ms, 'tok-1', lease_ms => 0);
SELECT count(*) AS written FROM anarchon.runs WHERE job = 's4';
-- Settings per role or database work as for any GUC.
CREATE ROLE regress_anarchon_settings;
ALTER ROLE regress_anarchon_settings SET anarchon.lease_ms = 12345;
SELECT setconfig FROM pg_db_role_setting WHERE setrole = 'regress_anarchon_settings'::regrole;
ALTER ROLE regress_anarchon_settings SET anarchon.lease_ms = 0;
DROP ROLE regress_anarchon_settings;
