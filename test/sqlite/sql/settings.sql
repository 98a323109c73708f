-- anarchon_config: every setting, its default, and what it refuses.
.load ./sqlite/anarchon
.echo on
SELECT anarchon_config('lease_ms'), anarchon_config('max_late_ms'), anarchon_config('attempts'),
       anarchon_config('overlap'), anarchon_config('busy_timeout_ms'), anarchon_config('store');
SELECT anarchon_config('lease_ms', 1500), anarchon_config('lease_ms');
SELECT anarchon_config('max_late_ms', '0'), anarchon_config('attempts', 3), anarchon_config('overlap', 'allow'),
       anarchon_config('busy_timeout_ms', 0);
SELECT anarchon_config('store', 'local');
-- refused, and the setting keeps its value
SELECT anarchon_config('lease_ms', -1);
SELECT anarchon_config('lease_ms', 0);
SELECT anarchon_config('lease_ms', '15s');
SELECT anarchon_config('lease_ms', 2.5);
SELECT anarchon_config('lease_ms', NULL);
SELECT anarchon_config('lease_ms', 99999999999999999999);
SELECT anarchon_config('attempts', 0);
SELECT anarchon_config('attempts', 1001);
SELECT anarchon_config('overlap', 'maybe');
SELECT anarchon_config('max_late_ms', -5);
SELECT anarchon_config('busy_timeout_ms', x'3130');
SELECT anarchon_config('lease', 10);
SELECT anarchon_config('LEASE_MS');
SELECT anarchon_config(NULL);
SELECT anarchon_config('store', 'postgres://db');
SELECT anarchon_config('store', '');
SELECT anarchon_config('store', 42);
-- a store that failed to be set is still the connection's store: no claim is
-- decided anywhere else until it is set again
SELECT anarchon_claim('settings-sticky', 4102444800000, 'a');
SELECT anarchon_config('store', 'local');
SELECT anarchon_claim('settings-sticky', 4102444800000, 'a');
-- a number of milliseconds: an integer, a whole real (as JavaScript drivers
-- bind numbers) or text of digits, as for slots; a fraction is refused
SELECT anarchon_config('lease_ms', 60000.0), anarchon_config('lease_ms', '45000');
SELECT anarchon_config('lease_ms', 1.5);
SELECT anarchon_config('lease_ms', 1500);
-- anarchon_prune(NULL) prunes with the default retention, as in PostgreSQL
SELECT anarchon_prune(NULL);
SELECT anarchon_config('lease_ms'), anarchon_config('attempts'), anarchon_config('overlap'), anarchon_config('store');
-- settings belong to the connection: a second connection has the defaults
.connection 1
.load ./sqlite/anarchon
SELECT anarchon_config('lease_ms'), anarchon_config('attempts'), anarchon_config('overlap');
.connection 0
SELECT anarchon_config('lease_ms');
-- tokens: 32 lowercase hex digits, new every time
SELECT length(anarchon_token()), anarchon_token() GLOB '[0-9a-f]*', anarchon_token() <> anarchon_token();
SELECT count(DISTINCT t) FROM (SELECT anarchon_token() AS t FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000) SELECT i FROM n));
-- loading the extension again keeps this connection's settings (and store)
SELECT anarchon_config('lease_ms', 4321), anarchon_config('overlap', 'allow');
.load ./sqlite/anarchon
SELECT anarchon_config('lease_ms'), anarchon_config('overlap'), anarchon_config('store');
