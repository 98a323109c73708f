-- Settings given before the library is loaded.  Until the first anarchon call
-- of a session loads it, PostgreSQL keeps anarchon.* values unchecked; a value
-- that turns out invalid then makes every function that reads the settings
-- fail, naming the setting, its value and what is allowed, for as long as it
-- is the value in force.  It never runs with the default instead.
CREATE EXTENSION IF NOT EXISTS anarchon;
TRUNCATE anarchon.runs, anarchon.runs_jobs;
SELECT (extract(epoch FROM date_trunc('second', clock_timestamp())) * 1000)::bigint AS now_ms \gset
SELECT current_database() AS db, current_user AS su \gset
CREATE ROLE regress_anarchon_early LOGIN;
-- loaded(): has this session loaded the library (are the GUCs defined)?
CREATE FUNCTION loaded() RETURNS boolean LANGUAGE sql
	AS $$ SELECT EXISTS (SELECT FROM pg_settings WHERE name = 'anarchon.attempts') $$;

-- SET, in a fresh session.
\c
SELECT loaded();
SET anarchon.lease_ms = '10s';
SELECT anarchon_claim('early', :now_ms, 'tok-1');
SELECT loaded();
SELECT anarchon_claim('early', to_timestamp(:now_ms / 1000.0), 'tok-1');
SELECT anarchon_heartbeat('early', :now_ms, 'tok-1');
SELECT anarchon_finish('early', :now_ms, 'tok-1');
SELECT anarchon_check('early', :now_ms);
SELECT anarchon_prune();
SELECT count(*) AS written FROM anarchon.runs WHERE job = 'early';
SHOW anarchon.lease_ms;
-- Now that the library is loaded, a bad value is refused when it is set ...
SET anarchon.lease_ms = '20s';
-- ... and a valid one makes the functions work again.
SET anarchon.lease_ms = 10000;
SELECT anarchon_claim('early', :now_ms, 'tok-1');
SELECT lease_until - claimed_at AS lease FROM anarchon.runs WHERE job = 'early';

-- SET LOCAL, in a fresh session: the bad value holds until the transaction ends.
\c
BEGIN;
SET LOCAL anarchon.max_late_ms = 'a minute';
SELECT anarchon_check('early', :now_ms);
ROLLBACK;
SELECT anarchon_check('early', :now_ms);

-- ALTER DATABASE ... SET, from a session that has not loaded the library.
\c
ALTER DATABASE :"db" SET anarchon.overlap = 'sometimes';
\c
SELECT anarchon_claim('early-db', :now_ms, 'tok-1');
-- A valid SET replaces it for this session; RESET brings the database's back.
SET anarchon.overlap = 'allow';
SELECT anarchon_claim('early-db', :now_ms, 'tok-1');
RESET anarchon.overlap;
SELECT anarchon_claim('early-db', :now_ms, 'tok-1');
ALTER DATABASE :"db" RESET anarchon.overlap;
\c
SELECT anarchon_claim('early-db', :now_ms, 'tok-1');

-- ALTER ROLE ... SET, from a session that has not loaded the library.
\c
ALTER ROLE regress_anarchon_early SET anarchon.attempts = 'three';
ALTER ROLE regress_anarchon_early SET anarchon.store = '';
\c - regress_anarchon_early
SELECT anarchon_claim('early-role', :now_ms, 'tok-1');
SELECT anarchon_token() IS NOT NULL AS token_needs_no_settings;
SELECT anarchon_slot('@hourly', 4102444800000) AS slot_needs_no_settings;
SET anarchon.attempts = 3;
-- (the store is still invalid)
SELECT anarchon_claim('early-role', :now_ms, 'tok-1');
SET anarchon.store = 'local';
SELECT anarchon_claim('early-role', :now_ms, 'tok-1');
\c - :su
ALTER ROLE regress_anarchon_early RESET ALL;
SELECT attempt, token FROM anarchon.runs WHERE job = 'early-role';

-- The opt-in to claims inside a transaction is a setting like the others.
\c
SET anarchon.in_transaction = 'maybe';
SELECT anarchon_claim('early-txn', :now_ms, 'tok-1');

\c
DROP ROLE regress_anarchon_early;
DROP FUNCTION loaded();
