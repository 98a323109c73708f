-- The history of runs, and the lock table that serialises the claims of one job.

-- The state of a run.  A domain rather than a table CHECK: PostgreSQL keeps a
-- domain's check compiled, while a table's CHECK is re-read on every INSERT,
-- which is a measurable part of a claim.
CREATE DOMAIN anarchon.run_state AS text
	CHECK (VALUE IN ('running', 'succeeded', 'failed', 'interrupted', 'replaced'));

-- One row per (job, slot): who won which attempt, and how it ended.  It is the
-- history, so it grows with every slot; every query the functions run on it
-- is an index lookup (the primary key, or the live-lease index below).
CREATE TABLE anarchon.runs (
	job			text NOT NULL,
	slot		timestamptz NOT NULL,
	attempt		integer NOT NULL,
	token		text NOT NULL,
	state		anarchon.run_state NOT NULL,
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

-- No index on slot alone: anarchon_prune walks the primary key job by job
-- (the jobs are in runs_jobs), so every claim pays for two indexes, not three.

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

-- How far anarchon_prune has deleted: the largest cutoff any prune used, one
-- row in all (prune deletes the old runs of every job in one statement).  It
-- is written in the prune's transaction before its DELETE, and a first claim
-- of an older slot answers late, whatever the claimer's max_late_ms: hosts
-- may differ, and a run deleted by one that keeps runs for less must not be
-- won again by one that would still claim its slot.  No race with a claim:
-- a claim that reads no run either saw the prune's DELETE committed (its
-- read of the run waited for it), so its next statement reads the cutoff
-- too, or the run was never there to prune.
CREATE TABLE anarchon.pruned (
	id			integer PRIMARY KEY CHECK (id = 1),
	slot_before timestamptz NOT NULL
);
COMMENT ON TABLE anarchon.pruned IS 'anarchon: the largest cutoff anarchon_prune used; a first claim of an older slot is late';

-- pg_dump keeps the history (extension tables are not dumped otherwise).
SELECT pg_catalog.pg_extension_config_dump('anarchon.runs', '');
SELECT pg_catalog.pg_extension_config_dump('anarchon.runs_jobs', '');
SELECT pg_catalog.pg_extension_config_dump('anarchon.pruned', '');

-- Nobody writes these tables but the functions (as their owner).  Monitoring
-- (pg_monitor) may read the history, all but the tokens: a token is what lets
-- its holder heartbeat or finish a run.
REVOKE ALL ON anarchon.runs, anarchon.runs_jobs, anarchon.pruned FROM PUBLIC;
GRANT SELECT (job, slot, attempt, state, lease_until, claimed_at, finished_at)
	ON anarchon.runs TO pg_monitor;
GRANT SELECT ON anarchon.runs_jobs, anarchon.pruned TO pg_monitor;
