-- The history of runs, and the lock table that serialises the claims of one job.

-- One row per (job, slot): who won which attempt, and how it ended.  It is the
-- history, so it grows with every slot; every query the functions run on it
-- is an index lookup (primary key, the live-lease index, the slot index).
CREATE TABLE anarchon.runs (
	job			text NOT NULL,
	slot		timestamptz NOT NULL,
	attempt		integer NOT NULL CHECK (attempt >= 1),
	token		text NOT NULL,
	state		text NOT NULL
				CHECK (state IN ('running', 'succeeded', 'failed', 'interrupted')),
	lease_until timestamptz NOT NULL,
	claimed_at	timestamptz NOT NULL,
	finished_at timestamptz,
	PRIMARY KEY (job, slot)
);
COMMENT ON TABLE anarchon.runs IS 'anarchon: one row per claimed (job, slot), the history of runs';

-- The overlap test ("does another run of this job hold a live lease?") reads
-- only running runs of one job from their lease end on: a partial index keeps
-- it a short range scan however many finished runs the job has.
CREATE INDEX runs_live_idx ON anarchon.runs (job, lease_until) WHERE state = 'running';

-- anarchon_prune deletes by slot across all jobs.
CREATE INDEX runs_slot_idx ON anarchon.runs (slot);

-- One row per job name.  Every claim first upserts its job's row and holds
-- that row lock until its transaction ends: claims of one job take turns,
-- claims of different jobs never wait on each other.  The upsert writes
-- last_claim_at (a HOT update: no index changes), so that a REPEATABLE READ
-- claim whose snapshot predates another claim of the job fails with a
-- serialization error instead of deciding on a stale view.
CREATE TABLE anarchon.runs_jobs (
	job			text PRIMARY KEY,
	last_claim_at timestamptz NOT NULL
);
COMMENT ON TABLE anarchon.runs_jobs IS 'anarchon: one lock row per job; a claim holds its row until commit';

-- pg_dump keeps the history (extension tables are not dumped otherwise).
SELECT pg_catalog.pg_extension_config_dump('anarchon.runs', '');
SELECT pg_catalog.pg_extension_config_dump('anarchon.runs_jobs', '');

-- Nobody writes these tables but the functions (SECURITY DEFINER).  Monitoring
-- (pg_monitor) may read the history, all but the tokens: a token is what lets
-- its holder heartbeat or finish a run.
REVOKE ALL ON anarchon.runs, anarchon.runs_jobs FROM PUBLIC;
GRANT SELECT (job, slot, attempt, state, lease_until, claimed_at, finished_at)
	ON anarchon.runs TO pg_monitor;
GRANT SELECT ON anarchon.runs_jobs TO pg_monitor;
