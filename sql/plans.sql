-- The queries of a claim and a check are index lookups, however long the
-- history: the plans below (the same text as pg/local_store.c's queries) use
-- the primary key and the partial index of running runs.  enable_seqscan is
-- off so that an unusable index shows up as a Seq Scan.
CREATE EXTENSION IF NOT EXISTS anarchon;
SET enable_seqscan = off;
-- check, and the claim's read of the run
EXPLAIN (COSTS OFF) SELECT attempt, token, state, lease_until FROM anarchon.runs
	WHERE job = 'j' AND slot = now() FOR UPDATE;
-- the overlap test: another running run of the job with a live lease
EXPLAIN (COSTS OFF) SELECT 1 FROM anarchon.runs
	WHERE job = 'j' AND state = 'running' AND lease_until >= now() AND slot <> now() LIMIT 1;
-- heartbeat and finish
EXPLAIN (COSTS OFF) UPDATE anarchon.runs SET lease_until = now()
	WHERE job = 'j' AND slot = now() AND token = 't' AND state = 'running';
-- the job's lock
EXPLAIN (COSTS OFF) INSERT INTO anarchon.runs_jobs (job, last_claim_at) VALUES ('j', now())
	ON CONFLICT (job) DO UPDATE SET last_claim_at = EXCLUDED.last_claim_at;
RESET enable_seqscan;
