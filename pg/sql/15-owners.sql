-- Who each job belongs to (pg/job_rights.c).  A role acts on a job -- claims,
-- heartbeats, finishes, fences, checks, keeps alive, records or asks for its
-- missed slots -- only with the privileges of the job's owner: as the owner,
-- a member of it, or a superuser.  A job nobody owns becomes the first
-- claimer's (anarchon.own_new_jobs), so a fleet whose instances connect as
-- one role needs no configuration.
CREATE TABLE anarchon.job_owners (
	job			text PRIMARY KEY,
	owner		oid NOT NULL,
	since		timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp()
);
CREATE INDEX job_owners_owner_idx ON anarchon.job_owners (owner);
COMMENT ON TABLE anarchon.job_owners IS 'anarchon: the role each job belongs to; other roles act on it only as members of that role';
SELECT pg_catalog.pg_extension_config_dump('anarchon.job_owners', '');
REVOKE ALL ON anarchon.job_owners FROM PUBLIC;
GRANT SELECT ON anarchon.job_owners TO pg_monitor;

-- set_job_owner(job, owner): give a job to a role (or take it from the role
-- that claimed it first).  For administrators: not granted to PUBLIC.
CREATE FUNCTION anarchon.set_job_owner(job text, owner regrole)
	RETURNS void
	LANGUAGE sql VOLATILE STRICT SECURITY DEFINER SET search_path = pg_catalog, pg_temp
	AS $$
	INSERT INTO anarchon.job_owners AS o (job, owner) VALUES ($1, $2::oid)
	ON CONFLICT (job) DO UPDATE SET owner = excluded.owner, since = excluded.since
	$$;
REVOKE ALL ON FUNCTION anarchon.set_job_owner(text, regrole) FROM PUBLIC;
