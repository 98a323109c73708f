-- Pausing a job (pg/pause.c, pg/local_pause.c; doc/operating.md, "Pause and
-- resume").  The pause lives in the store anarchon.store names: this table
-- for the local store, the server for a remote one.

-- Every pause of a job on the local store, kept after it ends so that
-- anarchon_missed and anarchon_due skip the slots that fell inside it:
-- [since, until), until NULL while the job stays paused until resumed.
CREATE TABLE anarchon.pauses (
	job			text NOT NULL,
	since		timestamptz NOT NULL,
	until		timestamptz,
	PRIMARY KEY (job, since)
);
COMMENT ON TABLE anarchon.pauses IS 'anarchon: the pauses of jobs on the local store, past and current';
SELECT pg_catalog.pg_extension_config_dump('anarchon.pauses', '');
REVOKE ALL ON anarchon.pauses FROM PUBLIC;
GRANT SELECT ON anarchon.pauses TO pg_monitor;

-- Pause job until `until`, or until anarchon_resume when it is NULL.  Claims
-- of the job that start afterwards answer 'paused'.  Only the job's owner
-- (its members, superusers) may pause it, and only a job that has an owner.
CREATE FUNCTION anarchon.anarchon_pause(job text, until timestamptz DEFAULT NULL)
	RETURNS void
	AS 'MODULE_PATHNAME', 'anarchon_pause'
	LANGUAGE C VOLATILE;

-- End the job's pause now: true when it was paused, false when it was not.
CREATE FUNCTION anarchon.anarchon_resume(job text)
	RETURNS boolean
	AS 'MODULE_PATHNAME', 'anarchon_resume'
	LANGUAGE C VOLATILE;

-- When the job's pause ends ('infinity': when it is resumed), or NULL when
-- the job is not paused.  Open to the job's owner and pg_monitor.
CREATE FUNCTION anarchon.anarchon_paused(job text)
	RETURNS timestamptz
	AS 'MODULE_PATHNAME', 'anarchon_paused'
	LANGUAGE C VOLATILE;

-- The pauses of the job, past and current, that overlap [from_at, to_at):
-- what anarchon_missed and anarchon_due skip.  until is 'infinity' while the
-- job stays paused until resumed.  Open to the job's owner and pg_monitor.
CREATE FUNCTION anarchon.anarchon_pauses(job text, from_at timestamptz, to_at timestamptz)
	RETURNS TABLE (since timestamptz, until timestamptz)
	AS 'MODULE_PATHNAME', 'anarchon_pauses'
	LANGUAGE C VOLATILE ROWS 10;
