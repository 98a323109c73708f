-- Remote stores chosen from PostgreSQL: the wrapper's validation, anarchon.store,
-- privileges.  (Claims through a live store are in test/pg/remote.sh.)
CREATE EXTENSION IF NOT EXISTS anarchon;
-- Servers take a url and nothing else; credentials never go in the url.
CREATE SERVER st_bad FOREIGN DATA WRAPPER anarchon;
CREATE SERVER st_bad FOREIGN DATA WRAPPER anarchon OPTIONS (url 'redis://127.0.0.1:1', host 'x');
CREATE SERVER st_bad FOREIGN DATA WRAPPER anarchon OPTIONS (url 'redis://app:secret@127.0.0.1:1');
CREATE SERVER st_bad FOREIGN DATA WRAPPER anarchon OPTIONS (url 'ftp://127.0.0.1:1');
CREATE SERVER st_bad FOREIGN DATA WRAPPER anarchon OPTIONS (url 'not a url');
CREATE SERVER st_bad FOREIGN DATA WRAPPER anarchon OPTIONS (url 'redis://127.0.0.1:99999');
CREATE SERVER st_bad FOREIGN DATA WRAPPER anarchon OPTIONS (url '');
ALTER FOREIGN DATA WRAPPER anarchon OPTIONS (url 'redis://127.0.0.1:1');
CREATE SERVER st_bad FOREIGN DATA WRAPPER anarchon OPTIONS (url 'local');
-- What the store itself would refuse in its url is refused here too, without
-- connecting: strategy, parameters, ranges, the path.
CREATE SERVER st_bad FOREIGN DATA WRAPPER anarchon OPTIONS (url 'redis://127.0.0.1:6379/0?strategy=leases');
CREATE SERVER st_bad FOREIGN DATA WRAPPER anarchon OPTIONS (url 'redis://127.0.0.1:6379/0?strategy=lease&window_ms=1000');
CREATE SERVER st_bad FOREIGN DATA WRAPPER anarchon OPTIONS (url 'redis://127.0.0.1:6379/0?strategy=script&window_ms=0');
CREATE SERVER st_bad FOREIGN DATA WRAPPER anarchon OPTIONS (url 'redis://127.0.0.1:6379/0?prefx=jobs');
CREATE SERVER st_bad FOREIGN DATA WRAPPER anarchon OPTIONS (url 'redis://127.0.0.1:6379/zero');
CREATE SERVER st_bad FOREIGN DATA WRAPPER anarchon OPTIONS (url 'amqp://127.0.0.1/?slot_ttl_ms=5');
CREATE SERVER st_bad FOREIGN DATA WRAPPER anarchon OPTIONS (url 'nats://127.0.0.1:4222/jobs');
CREATE SERVER st_bad FOREIGN DATA WRAPPER anarchon OPTIONS (url 'nats://127.0.0.1:4222?stream=a.b');
-- Good ones of every store are accepted (nothing connects).
CREATE SERVER st_ok1 FOREIGN DATA WRAPPER anarchon OPTIONS (url 'redis://127.0.0.1:6379/2?strategy=script&window_ms=600000&prefix=jobs');
CREATE SERVER st_ok2 FOREIGN DATA WRAPPER anarchon OPTIONS (url 'amqp://127.0.0.1:5672/%2F?slot_ttl_ms=120000');
CREATE SERVER st_ok3 FOREIGN DATA WRAPPER anarchon OPTIONS (url 'nats://127.0.0.1:4222?stream=CRON&duplicate_window_ms=120000');
DROP SERVER st_ok1, st_ok2, st_ok3;
-- A good one: nothing listens on port 1 of the loopback.
CREATE SERVER st_down FOREIGN DATA WRAPPER anarchon OPTIONS (url 'redis://127.0.0.1:1/0?strategy=lease');
ALTER SERVER st_down OPTIONS (DROP url);
ALTER SERVER st_down OPTIONS (SET url 'redis://127.0.0.1:1/0?strategy=stream-id');
-- A refused ALTER leaves the server as it was.
ALTER SERVER st_down OPTIONS (SET url 'redis://127.0.0.1:1/0?strategy=streamid');
SELECT srvoptions FROM pg_foreign_server WHERE srvname = 'st_down';
-- User mappings take credentials only: user, password, the TLS and NATS files, Sentinel's.
CREATE USER MAPPING FOR PUBLIC SERVER st_down OPTIONS (url 'x');
CREATE USER MAPPING FOR PUBLIC SERVER st_down OPTIONS (user '');
CREATE USER MAPPING FOR PUBLIC SERVER st_down OPTIONS (user 'app', password 's3cret:@/');
-- anarchon.store names a server; one that does not exist is a clear error.
SET anarchon.store = 'st_missing';
SELECT anarchon_claim('r', 4102444800000, 'tok');
SELECT anarchon_check('r', 4102444800000);
SET anarchon.store = 'Jobs Store';
SELECT anarchon_claim('r', 4102444800000, 'tok');
-- A url where a server's name belongs: the hint shows the commands meant,
-- and never a password.
SET anarchon.store = 'redis://127.0.0.1:6379/0?strategy=lease';
SELECT anarchon_claim('r', 4102444800000, 'tok');
SET anarchon.store = 'nats://s3cr3t-token@127.0.0.1:4222';
SELECT anarchon_claim('r', 4102444800000, 'tok');
SET anarchon.store = 'amqp://app:s3cret@127.0.0.1/jobs?slot_ttl_ms=120000';
SELECT anarchon_check('r', 4102444800000);
-- A secret in the query, with no user or password (a short value, so it
-- reaches this hint): hidden too, in the hint and so in the server's log.
SET anarchon.store = 'redis+sentinel://127.0.0.1/m?sentinel_password=S3CRET';
SELECT anarchon_check('r', 4102444800000);
SET anarchon.store = 'redis://u:p@ss-S3CRET@127.0.0.1:6379/0';
SELECT anarchon_check('r', 4102444800000);
-- A server of another wrapper is refused.
CREATE FOREIGN DATA WRAPPER st_other_wrapper;
CREATE SERVER st_other FOREIGN DATA WRAPPER st_other_wrapper;
SET anarchon.store = 'st_other';
SELECT anarchon_claim('r', 4102444800000, 'tok');
-- A store that cannot be reached: connection_failure, with no password in the message.
CREATE FUNCTION pg_temp.err(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE q;
	RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ' ' || SQLERRM;
END
$$;
SET anarchon.store = 'st_down';
SELECT pg_temp.err($$SELECT anarchon_claim('r', 4102444800000, 'tok')$$);
-- A user and password holding '@', '/', '?', '#', '%' and ':' never show,
-- neither in an error nor in the stats view.
ALTER USER MAPPING FOR PUBLIC SERVER st_down OPTIONS (SET user 'u@s/e?r#1%', SET password 'p?w#x%25y@z/:S3CRET');
SELECT pg_temp.err($$SELECT anarchon_claim('r', 4102444800000, 'tok')$$) LIKE '%S3CRET%' AS error_shows_secret,
       pg_temp.err($$SELECT anarchon_claim('r', 4102444800000, 'tok')$$) LIKE '%127.0.0.1:1%' AS error_names_server;
SELECT count(*) AS stats_rows_with_secret FROM anarchon.stats WHERE store LIKE '%S3CRET%' OR store LIKE '%u@s%';
ALTER USER MAPPING FOR PUBLIC SERVER st_down OPTIONS (SET user 'app', SET password 's3cret:@/');
-- Bad input is refused before any store is asked.
SELECT anarchon_claim('r r', 4102444800000, 'tok');
RESET anarchon.store;
-- Privileges: a role needs USAGE on the server, and never sees the PUBLIC
-- mapping's password.
CREATE ROLE regress_anarchon_remote;
-- (slots of 2100 from a role that is not a superuser: no limit on how far ahead)
SET anarchon.max_ahead_ms = 0;
SET ROLE regress_anarchon_remote;
SET anarchon.store = 'st_down';
SELECT anarchon_claim('r', 4102444800000, 'tok');
SELECT srvname, umoptions FROM pg_user_mappings WHERE srvname = 'st_down';
RESET ROLE;
GRANT USAGE ON FOREIGN SERVER st_down TO regress_anarchon_remote;
SET ROLE regress_anarchon_remote;
SELECT anarchon_claim('r', 4102444800000, 'tok');
SELECT srvname, umoptions FROM pg_user_mappings WHERE srvname = 'st_down';
-- (A role with USAGE may map itself, as in any wrapper; then it sees its own options.)
CREATE USER MAPPING FOR regress_anarchon_remote SERVER st_down OPTIONS (user 'me');
SELECT srvname, usename, umoptions FROM pg_user_mappings WHERE srvname = 'st_down' ORDER BY usename;
DROP USER MAPPING FOR regress_anarchon_remote SERVER st_down;
-- Options that name a file the backend would read are a superuser's to set
-- (as postgres_fdw's sslcert and sslkey), in a mapping or in a server's url.
CREATE USER MAPPING FOR regress_anarchon_remote SERVER st_down OPTIONS (key '/etc/ssl/private/ssl-cert-snakeoil.key');
CREATE USER MAPPING FOR regress_anarchon_remote SERVER st_down OPTIONS (creds '/etc/passwd');
RESET ROLE;
GRANT USAGE ON FOREIGN DATA WRAPPER anarchon TO regress_anarchon_remote;
SET ROLE regress_anarchon_remote;
CREATE SERVER st_files FOREIGN DATA WRAPPER anarchon OPTIONS (url 'rediss://127.0.0.1:1/0?ca=/etc/passwd');
CREATE SERVER st_files FOREIGN DATA WRAPPER anarchon OPTIONS (url 'tls://127.0.0.1:1?nkey=/etc/passwd');
RESET ROLE;
REVOKE USAGE ON FOREIGN DATA WRAPPER anarchon FROM regress_anarchon_remote;
SET ROLE regress_anarchon_remote;
RESET anarchon.store;
-- The local store is unaffected.
SELECT anarchon_check('r', 4102444800000);
RESET ROLE;
-- A secret never goes in a server's url, which every role can read.
CREATE SERVER st_bad FOREIGN DATA WRAPPER anarchon OPTIONS (url 'rediss+sentinel://127.0.0.1:1/mymaster?sentinel_password=S3CRET');
-- A superuser may name files; the mapping's go into the store's url, and a
-- parameter set both there and in the server's url is refused at use.
CREATE SERVER st_tls FOREIGN DATA WRAPPER anarchon OPTIONS (url 'rediss://127.0.0.1:1/0?strategy=lease&ca=/nonexistent/ca.crt');
CREATE USER MAPPING FOR PUBLIC SERVER st_tls OPTIONS (user 'app', password 'S3CRET', cert '/nonexistent/client.crt', key '/nonexistent/client.key');
SET anarchon.store = 'st_tls';
SELECT pg_temp.err($$SELECT anarchon_claim('r', 4102444800000, 'tok')$$) LIKE '%S3CRET%' AS error_shows_secret;
ALTER SERVER st_tls OPTIONS (SET url 'rediss://127.0.0.1:1/0?strategy=lease&cert=/nonexistent/other.crt&key=/nonexistent/other.key');
SELECT anarchon_claim('r', 4102444800000, 'tok');
RESET anarchon.store;
DROP SERVER st_tls CASCADE;
REVOKE USAGE ON FOREIGN SERVER st_down FROM regress_anarchon_remote;
DROP ROLE regress_anarchon_remote;
DROP SERVER st_down CASCADE;
DROP SERVER st_other;
DROP FOREIGN DATA WRAPPER st_other_wrapper;
-- The wrapper goes with the extension; servers of it must go first.
SELECT fdwname FROM pg_foreign_data_wrapper WHERE fdwname = 'anarchon';
