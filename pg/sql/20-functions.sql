-- The functions of the claim (C, in anarchon.so).
--
-- They write anarchon.runs on behalf of roles that may not.  They are not
-- SECURITY DEFINER (fmgr's wrapper costs a GUC save and restore per call):
-- the C code runs its queries as the owner of schema anarchon, the role that
-- created the extension and owns the tables, with search_path pinned to
-- pg_catalog alone, so the caller's search_path can never change what they
-- mean; anarchon_check reads the primary key directly, with no query at all.
-- None is STRICT: a NULL argument is an error that says so, not a silent NULL.
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
	LANGUAGE C VOLATILE;

CREATE FUNCTION anarchon.anarchon_claim(job text, slot bigint, token text,
		lease_ms bigint DEFAULT NULL, max_late_ms bigint DEFAULT NULL,
		attempts integer DEFAULT NULL, overlap text DEFAULT NULL,
		busy_timeout_ms bigint DEFAULT NULL)
	RETURNS text
	AS 'MODULE_PATHNAME', 'anarchon_claim_ms'
	LANGUAGE C VOLATILE;

CREATE FUNCTION anarchon.anarchon_claim_info(job text, slot timestamptz, token text,
		lease_ms bigint DEFAULT NULL, max_late_ms bigint DEFAULT NULL,
		attempts integer DEFAULT NULL, overlap text DEFAULT NULL,
		busy_timeout_ms bigint DEFAULT NULL)
	RETURNS anarchon.claim_info
	AS 'MODULE_PATHNAME', 'anarchon_claim_info'
	LANGUAGE C VOLATILE;

CREATE FUNCTION anarchon.anarchon_claim_info(job text, slot bigint, token text,
		lease_ms bigint DEFAULT NULL, max_late_ms bigint DEFAULT NULL,
		attempts integer DEFAULT NULL, overlap text DEFAULT NULL,
		busy_timeout_ms bigint DEFAULT NULL)
	RETURNS anarchon.claim_info
	AS 'MODULE_PATHNAME', 'anarchon_claim_info_ms'
	LANGUAGE C VOLATILE;

-- One slot of many jobs in one statement (pg/claim_many.c): one row per
-- distinct job, its outcome what anarchon_claim would have answered, or
-- 'error' with the message in detail; jobs claimed in byte order of their
-- names, so overlapping batches never deadlock.
CREATE FUNCTION anarchon.anarchon_claim_many(jobs text[], slot timestamptz, token text,
		lease_ms bigint DEFAULT NULL, max_late_ms bigint DEFAULT NULL,
		attempts integer DEFAULT NULL, overlap text DEFAULT NULL,
		busy_timeout_ms bigint DEFAULT NULL)
	RETURNS TABLE (job text, outcome text, detail text)
	AS 'MODULE_PATHNAME', 'anarchon_claim_many'
	LANGUAGE C VOLATILE ROWS 10;

CREATE FUNCTION anarchon.anarchon_claim_many(jobs text[], slot bigint, token text,
		lease_ms bigint DEFAULT NULL, max_late_ms bigint DEFAULT NULL,
		attempts integer DEFAULT NULL, overlap text DEFAULT NULL,
		busy_timeout_ms bigint DEFAULT NULL)
	RETURNS TABLE (job text, outcome text, detail text)
	AS 'MODULE_PATHNAME', 'anarchon_claim_many_ms'
	LANGUAGE C VOLATILE ROWS 10;

CREATE FUNCTION anarchon.anarchon_heartbeat(job text, slot timestamptz, token text,
		lease_ms bigint DEFAULT NULL)
	RETURNS boolean
	AS 'MODULE_PATHNAME', 'anarchon_heartbeat'
	LANGUAGE C VOLATILE;

CREATE FUNCTION anarchon.anarchon_heartbeat(job text, slot bigint, token text,
		lease_ms bigint DEFAULT NULL)
	RETURNS boolean
	AS 'MODULE_PATHNAME', 'anarchon_heartbeat_ms'
	LANGUAGE C VOLATILE;

CREATE FUNCTION anarchon.anarchon_finish(job text, slot timestamptz, token text,
		status text DEFAULT 'succeeded')
	RETURNS boolean
	AS 'MODULE_PATHNAME', 'anarchon_finish'
	LANGUAGE C VOLATILE;

CREATE FUNCTION anarchon.anarchon_finish(job text, slot bigint, token text,
		status text DEFAULT 'succeeded')
	RETURNS boolean
	AS 'MODULE_PATHNAME', 'anarchon_finish_ms'
	LANGUAGE C VOLATILE;

-- true, or SQLSTATE AN001 when token does not own the running run; with the
-- local store the run stays this token's until the caller's transaction ends.
CREATE FUNCTION anarchon.anarchon_fence(job text, slot timestamptz, token text)
	RETURNS boolean
	AS 'MODULE_PATHNAME', 'anarchon_fence'
	LANGUAGE C VOLATILE;

CREATE FUNCTION anarchon.anarchon_fence(job text, slot bigint, token text)
	RETURNS boolean
	AS 'MODULE_PATHNAME', 'anarchon_fence_ms'
	LANGUAGE C VOLATILE;

CREATE FUNCTION anarchon.anarchon_check(job text, slot timestamptz)
	RETURNS text
	AS 'MODULE_PATHNAME', 'anarchon_check'
	LANGUAGE C VOLATILE;

CREATE FUNCTION anarchon.anarchon_check(job text, slot bigint)
	RETURNS text
	AS 'MODULE_PATHNAME', 'anarchon_check_ms'
	LANGUAGE C VOLATILE;

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
	LANGUAGE C VOLATILE;

-- Deleting history is for the database owner and whom it grants.
REVOKE EXECUTE ON FUNCTION anarchon.anarchon_prune(bigint) FROM PUBLIC;
