-- anarchon_fence: the fencing token checked where the work lands, inside the
-- caller's write transaction.  The owner's fenced writes and its finish
-- commit together; another token's fence is an error, and its transaction is
-- rolled back with nothing written.
.load ./sqlite/anarchon
.echo on
.parameter set @s "anarchon_now() / 1000 * 1000"
CREATE TABLE work (job TEXT, slot INTEGER, token TEXT);
SELECT anarchon_claim('f', @s, 'a');

-- outside a transaction: refused, it would hold nothing
SELECT anarchon_fence('f', @s, 'a');

-- the owner: fence, write, finish, commit
BEGIN IMMEDIATE;
SELECT anarchon_fence('f', @s, 'a');
INSERT INTO work VALUES ('f', @s, 'a');
SELECT anarchon_finish('f', @s, 'a');
COMMIT;
SELECT job, slot = @s AS this_slot, token FROM work;
SELECT anarchon_check('f', @s);

-- another token: an error; the caller rolls back and nothing is written
BEGIN IMMEDIATE;
SELECT anarchon_fence('f', @s, 'b');
ROLLBACK;
-- the owner again, now that the run is finished: an error too
BEGIN IMMEDIATE;
SELECT anarchon_fence('f', @s, 'a');
ROLLBACK;
-- a run nobody claimed
BEGIN;
SELECT anarchon_fence('f', @s + 1000, 'a');
ROLLBACK;
SELECT count(*) AS work_rows FROM work;

-- bad input: each argument is checked as in the other functions
SELECT anarchon_fence(NULL, @s, 'a');
SELECT anarchon_fence('f', 1.5, 'a');
SELECT anarchon_fence('f', @s, 'a b');
