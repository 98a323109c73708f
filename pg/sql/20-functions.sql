-- The functions of the claim (C, in anarchon.so).
--
-- They write anarchon.runs on behalf of roles that may not, so they run as
-- their owner (SECURITY DEFINER) with search_path pinned to pg_catalog: the
-- caller's search_path can never change what their queries mean.  None is
-- STRICT: a NULL argument is an error that says so, not a silent NULL.
-- Arguments after the third are optional and override a setting (the GUC
-- anarchon.<name>) for this one call; NULL means "use the GUC".

-- What anarchon_claim_info answers: the outcome with the attempt number and
-- the lease end (NULL when nothing was claimed).
CREATE TYPE anarchon.claim_info AS (
	outcome		text,
	attempt		integer,
	lease_until timestamptz
);

CREATE FUNCTION anarchon.anarchon_claim(job text, slot timestamptz, token text,
		lease_ms bigint DEFAULT NULL, max_late_ms bigint DEFAULT NULL,
		attempts integer DEFAULT NULL, overlap text DEFAULT NULL,
		busy_timeout_ms bigint DEFAULT NULL)
	RETURNS text
	AS 'MODULE_PATHNAME', 'anarchon_claim'
	LANGUAGE C VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION anarchon.anarchon_claim(job text, slot bigint, token text,
		lease_ms bigint DEFAULT NULL, max_late_ms bigint DEFAULT NULL,
		attempts integer DEFAULT NULL, overlap text DEFAULT NULL,
		busy_timeout_ms bigint DEFAULT NULL)
	RETURNS text
	AS 'MODULE_PATHNAME', 'anarchon_claim_ms'
	LANGUAGE C VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION anarchon.anarchon_claim_info(job text, slot timestamptz, token text,
		lease_ms bigint DEFAULT NULL, max_late_ms bigint DEFAULT NULL,
		attempts integer DEFAULT NULL, overlap text DEFAULT NULL,
		busy_timeout_ms bigint DEFAULT NULL)
	RETURNS anarchon.claim_info
	AS 'MODULE_PATHNAME', 'anarchon_claim_info'
	LANGUAGE C VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION anarchon.anarchon_claim_info(job text, slot bigint, token text,
		lease_ms bigint DEFAULT NULL, max_late_ms bigint DEFAULT NULL,
		attempts integer DEFAULT NULL, overlap text DEFAULT NULL,
		busy_timeout_ms bigint DEFAULT NULL)
	RETURNS anarchon.claim_info
	AS 'MODULE_PATHNAME', 'anarchon_claim_info_ms'
	LANGUAGE C VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION anarchon.anarchon_heartbeat(job text, slot timestamptz, token text,
		lease_ms bigint DEFAULT NULL)
	RETURNS boolean
	AS 'MODULE_PATHNAME', 'anarchon_heartbeat'
	LANGUAGE C VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION anarchon.anarchon_heartbeat(job text, slot bigint, token text,
		lease_ms bigint DEFAULT NULL)
	RETURNS boolean
	AS 'MODULE_PATHNAME', 'anarchon_heartbeat_ms'
	LANGUAGE C VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION anarchon.anarchon_finish(job text, slot timestamptz, token text,
		status text DEFAULT 'succeeded')
	RETURNS boolean
	AS 'MODULE_PATHNAME', 'anarchon_finish'
	LANGUAGE C VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION anarchon.anarchon_finish(job text, slot bigint, token text,
		status text DEFAULT 'succeeded')
	RETURNS boolean
	AS 'MODULE_PATHNAME', 'anarchon_finish_ms'
	LANGUAGE C VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION anarchon.anarchon_check(job text, slot timestamptz)
	RETURNS text
	AS 'MODULE_PATHNAME', 'anarchon_check'
	LANGUAGE C VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION anarchon.anarchon_check(job text, slot bigint)
	RETURNS text
	AS 'MODULE_PATHNAME', 'anarchon_check_ms'
	LANGUAGE C VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp;

-- A fresh token: 16 bytes from pg_strong_random as 32 hex digits.
CREATE FUNCTION anarchon.anarchon_token()
	RETURNS text
	AS 'MODULE_PATHNAME', 'anarchon_token'
	LANGUAGE C VOLATILE PARALLEL SAFE;

-- Delete runs no claim can ask about any more (older than the retention of
-- the current settings, or keep_ms when that is longer).  Returns the count.
CREATE FUNCTION anarchon.anarchon_prune(keep_ms bigint DEFAULT NULL)
	RETURNS bigint
	AS 'MODULE_PATHNAME', 'anarchon_prune'
	LANGUAGE C VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp;

-- Deleting history is for the database owner and whom it grants.
REVOKE EXECUTE ON FUNCTION anarchon.anarchon_prune(bigint) FROM PUBLIC;
