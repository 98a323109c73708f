-- Hosts may differ: a host whose settings keep runs for 2 s prunes a run that a
-- host with max_late_ms 60000 could still claim.  That claim must not win the
-- slot a second time: a slot below what anarchon_prune has deleted is late.
.load ./sqlite/anarchon
.echo on
.parameter set @slot "(anarchon_now() / 1000 - 30) * 1000"
-- the demanding host (max_late_ms 60000) wins a slot 30 s old and finishes it
SELECT anarchon_claim('r', @slot, 'long1'), anarchon_finish('r', @slot, 'long1');
-- the short host (max_late_ms 1000, lease_ms 1000) prunes with its own retention
SELECT anarchon_config('max_late_ms', 1000), anarchon_config('lease_ms', 1000);
SELECT anarchon_prune() AS deleted;
-- the demanding host claims the slot again, 30 s late: within its max_late_ms,
-- but the run may be gone, so late (never won twice)
SELECT anarchon_config('max_late_ms', 60000), anarchon_config('lease_ms', 30000);
SELECT anarchon_claim('r', @slot, 'long2');
-- a slot newer than the prune's cutoff is still claimed as ever (the
-- second the test began: the cutoff, 2 s before the prune, is older unless
-- the statements above took a second)
SELECT anarchon_claim('r', @slot + 30000, 'long3');
-- the record keeps the largest cutoff: a later prune with a longer retention does not lower it
SELECT anarchon_prune(3600000) AS deleted;
SELECT anarchon_claim('r', @slot, 'long4');
