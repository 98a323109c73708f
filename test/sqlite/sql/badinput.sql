-- Bad input: a clear error naming what is allowed, and nothing stored changes.
.load ./sqlite/anarchon
.echo on
.parameter set @s "anarchon_now() / 1000 * 1000"
SELECT anarchon_claim('keep', @s, 'owner');
CREATE TEMP TABLE before AS SELECT * FROM anarchon_runs;
-- job
SELECT anarchon_claim(NULL, @s, 't');
SELECT anarchon_claim('', @s, 't');
SELECT anarchon_claim(printf('%.*c', 1000000, 'a'), @s, 't');
SELECT anarchon_claim(printf('%.*c', 129, 'a'), @s, 't');
SELECT length(printf('%.*c', 128, 'a')), anarchon_check(printf('%.*c', 128, 'a'), @s);
SELECT anarchon_claim('_leading', @s, 't');
SELECT anarchon_claim('-leading', @s, 't');
SELECT anarchon_claim('has space', @s, 't');
SELECT anarchon_claim('semi;colon', @s, 't');
SELECT anarchon_claim('star*', @s, 't');
SELECT anarchon_claim('naïve', @s, 't');
SELECT anarchon_claim('nul' || char(0) || 'x', @s, 't');
SELECT anarchon_claim(x'6a6f62', @s, 't');
SELECT anarchon_claim(42, @s, 't');
-- slot
SELECT anarchon_claim('keep', NULL, 't');
SELECT anarchon_claim('keep', -1, 't');
SELECT anarchon_claim('keep', 253402300800000, 't');
SELECT anarchon_claim('keep', 9223372036854775807, 't');
SELECT anarchon_claim('keep', 1.5, 't');
SELECT anarchon_claim('keep', 1e300, 't');
SELECT anarchon_claim('keep', '1791633610000', 't');
SELECT anarchon_claim('keep', 'tomorrow', 't');
SELECT anarchon_claim('keep', x'00', 't');
-- a slot is a whole second from 10^11 ms: a reading of the clock is refused,
-- and so is a slot in seconds (the limits themselves are fine)
SELECT anarchon_claim('keep', 1796180400001, 't');
SELECT anarchon_claim('keep', 1796180400500.0, 't');
SELECT anarchon_claim('keep', -1.5, 't');
SELECT anarchon_heartbeat('keep', 253402300799999, 't');
SELECT anarchon_finish('keep', 4102444800010, 't');
SELECT anarchon_check('keep', 4102444800999);
SELECT anarchon_claim('keep', 1796180400, 't');
SELECT anarchon_claim('keep', 99999999000, 't');
SELECT anarchon_claim('keep', 0, 't');
SELECT anarchon_check('keep', 100000000000), anarchon_check('keep', 253402300799000), anarchon_check('keep', 1796180400000.0);
-- token
SELECT anarchon_claim('keep', @s, NULL);
SELECT anarchon_claim('keep', @s, '');
SELECT anarchon_claim('keep', @s, printf('%.*c', 65, 'a'));
SELECT anarchon_claim('keep', @s, 'has space');
SELECT anarchon_claim('keep', @s, 'dot.ted');
SELECT anarchon_claim('keep', @s, x'6f776e6572');
SELECT anarchon_heartbeat('keep', @s, '');
SELECT anarchon_finish('keep', @s, 'owner', 'done');
SELECT anarchon_finish('keep', @s, 'owner', NULL);
SELECT anarchon_finish('keep', @s, 'owner', 'running');
SELECT anarchon_check('keep', 'x');
-- a token of 64 bytes and a job of 128 are fine
SELECT anarchon_claim(printf('%.*c', 128, 'j'), @s, printf('%.*c', 64, 'T'));
-- wrong numbers of arguments
SELECT anarchon_claim('keep', @s);
SELECT anarchon_check('keep');
-- nothing stored changed
SELECT count(*) AS changed FROM (SELECT * FROM anarchon_runs WHERE job = 'keep' EXCEPT SELECT * FROM before);
SELECT job, state FROM anarchon_runs ORDER BY job;
