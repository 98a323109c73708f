-- Hosts may differ: a host whose settings keep runs for 2 s prunes a run that
-- a host with max_late_ms 60000 could still claim.  That claim must not win
-- the slot a second time: a slot below what anarchon_prune has deleted is
-- late, whatever the claimer's max_late_ms (anarchon.pruned).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS anarchon;
RESET client_min_messages;
SET anarchon.overlap = 'allow';
SELECT (extract(epoch FROM date_trunc('second', clock_timestamp())) * 1000)::bigint - 30000 AS slot \gset
-- the demanding host (max_late_ms 60000) wins a slot 30 s old and finishes it
SET anarchon.max_late_ms = 60000;
SET anarchon.lease_ms = 30000;
SELECT anarchon_claim('rp', :slot, 'long1'), anarchon_finish('rp', :slot, 'long1');
-- the short host (max_late_ms 1000, lease_ms 1000) prunes with its own retention
SET anarchon.max_late_ms = 1000;
SET anarchon.lease_ms = 1000;
SELECT anarchon_prune() >= 1 AS deleted;
SELECT count(*) AS runs FROM anarchon.runs WHERE job = 'rp';
-- the demanding host claims the slot again, 30 s late: within its
-- max_late_ms, but the run may be gone, so late (never won twice)
SET anarchon.max_late_ms = 60000;
SET anarchon.lease_ms = 30000;
SELECT anarchon_claim('rp', :slot, 'long2');
-- so is any job's: the cutoff is the prune's, not one job's
SELECT anarchon_claim('rp-other', :slot, 'long2');
-- a slot newer than the prune's cutoff is still claimed as ever (the
-- second the test began: the cutoff, 2 s before the prune, is older unless
-- the statements above took a second)
SELECT anarchon_claim('rp', :slot + 30000, 'long3');
-- the record keeps the largest cutoff: a later prune with a longer
-- retention does not lower it
SELECT anarchon_prune(3600000) AS deleted;
SELECT anarchon_claim('rp', :slot, 'long4');
-- only the functions write it: the table's owner, not PUBLIC
SELECT has_table_privilege('public', 'anarchon.pruned', 'INSERT') AS public_may_insert,
       has_table_privilege('public', 'anarchon.pruned', 'UPDATE') AS public_may_update,
       has_table_privilege('pg_monitor', 'anarchon.pruned', 'SELECT') AS monitor_may_read;
-- a dump keeps it (an extension's table is dumped only when marked)
SELECT c.relname FROM pg_extension e, unnest(e.extconfig) AS t(oid)
  JOIN pg_class c ON c.oid = t.oid
 WHERE e.extname = 'anarchon' AND c.relname = 'pruned';
RESET anarchon.max_late_ms;
RESET anarchon.lease_ms;
RESET anarchon.overlap;
-- (the tests after this one claim old slots: forget the cutoff, as only a
-- superuser can)
TRUNCATE anarchon.pruned;
