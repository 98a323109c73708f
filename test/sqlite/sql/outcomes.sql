-- Every row of the claim's decision table, on the local store.
.load ./sqlite/anarchon
.echo on
.parameter set @s "anarchon_now() / 1000 * 1000"
.parameter set @old "anarchon_now() / 1000 * 1000 - 120000"
SELECT anarchon_config('lease_ms', 60000), anarchon_config('attempts', 2);

-- none, more than max_late_ms after its slot: late, nothing written
SELECT anarchon_claim('sync', @old, 'tok-a');
SELECT count(*) AS runs FROM anarchon_runs;

-- none: attempt 1 for this token
SELECT anarchon_claim('sync', @s, 'tok-a');
SELECT job, slot - @s AS slot, attempt, token, state, lease_until - claimed_at AS lease, finished_at FROM anarchon_runs;

-- running with this token (a resent claim): still won, nothing changes
SELECT anarchon_claim('sync', @s, 'tok-a');
-- running, lease alive: running
SELECT anarchon_claim('sync', @s, 'tok-b');

-- none, overlap skip, another run of the job holds a live lease: overlap, nothing written
SELECT anarchon_claim('sync', @s + 10000, 'tok-b');
SELECT count(*) AS runs FROM anarchon_runs;
-- ... but a run of another job is not in the way
SELECT anarchon_claim('other', @s + 10000, 'tok-b');
-- overlap allow: runs may overlap
SELECT anarchon_config('overlap', 'allow');
SELECT anarchon_claim('sync', @s + 10000, 'tok-b');
SELECT anarchon_config('overlap', 'skip');

-- a late claim of a run that exists is answered by the run, not by lateness
SELECT anarchon_config('max_late_ms', 0);
SELECT anarchon_claim('sync', @s, 'tok-a'), anarchon_claim('sync', @s, 'tok-c');
SELECT anarchon_config('max_late_ms', 60000);

-- running, lease ran out, attempts left: the next attempt, for the new token
SELECT anarchon_config('lease_ms', 100);
SELECT anarchon_claim('short', @s, 'tok-a');
.shell sleep 0.3
SELECT anarchon_check('short', @s);
SELECT anarchon_claim('short', @s, 'tok-b');
SELECT attempt, token, state FROM anarchon_runs WHERE job = 'short';

-- running, lease ran out, no attempts left: interrupted, answered done
.shell sleep 0.3
SELECT anarchon_claim('short', @s, 'tok-c');
SELECT attempt, token, state, finished_at IS NOT NULL AS finished FROM anarchon_runs WHERE job = 'short';
SELECT anarchon_check('short', @s);

-- succeeded, failed, interrupted: done
SELECT anarchon_finish('sync', @s, 'tok-a');
SELECT anarchon_claim('sync', @s, 'tok-a'), anarchon_claim('sync', @s, 'tok-z');
SELECT anarchon_finish('other', @s + 10000, 'tok-b', 'failed');
SELECT anarchon_claim('other', @s + 10000, 'tok-z');
SELECT anarchon_claim('short', @s, 'tok-z');
SELECT job, slot - @s AS slot, attempt, token, state, finished_at IS NOT NULL AS finished FROM anarchon_runs ORDER BY job, slot;
