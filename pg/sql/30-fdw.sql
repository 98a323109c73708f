-- Remote stores: the address of a store lives in a foreign server of the
-- wrapper anarchon, its credentials in a user mapping, each with PostgreSQL's
-- own privileges.  anarchon.store names the server.
--
--   CREATE SERVER jobs_redis FOREIGN DATA WRAPPER anarchon
--       OPTIONS (url 'redis://10.0.0.5:6379/0?strategy=lease');
--   CREATE USER MAPPING FOR PUBLIC SERVER jobs_redis
--       OPTIONS (user 'app', password 'secret');
--   GRANT USAGE ON FOREIGN SERVER jobs_redis TO app;
--   SET anarchon.store = 'jobs_redis';
--
-- The wrapper has no handler: it holds no foreign tables, only servers.

-- Checks the options of servers (url) and user mappings (user, password).
CREATE FUNCTION anarchon.fdw_validator(text[], oid)
	RETURNS void
	AS 'MODULE_PATHNAME', 'anarchon_fdw_validator'
	LANGUAGE C STRICT;

CREATE FOREIGN DATA WRAPPER anarchon VALIDATOR anarchon.fdw_validator;
COMMENT ON FOREIGN DATA WRAPPER anarchon IS 'anarchon: servers are remote stores (Redis, RabbitMQ, NATS) that decide claims';
