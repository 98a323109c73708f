-- Bad input: a clear error with a fitting SQLSTATE, and nothing stored changes.
CREATE EXTENSION IF NOT EXISTS anarchon;
TRUNCATE anarchon.runs, anarchon.runs_jobs;
SELECT (extract(epoch FROM date_trunc('second', clock_timestamp())) * 1000)::bigint AS now_ms \gset
-- err(q): the SQLSTATE and message of q's error, then its detail and hint.
CREATE FUNCTION pg_temp.err(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	detail text;
	hint text;
BEGIN
	EXECUTE q;
	RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
	RETURN concat_ws(E'\n', SQLSTATE || ' ' || SQLERRM, 'DETAIL: ' || nullif(detail, ''),
					 'HINT: ' || nullif(hint, ''));
END
$$;
SELECT anarchon_claim('good', :now_ms, 'tok-1');

-- NULLs.
SELECT pg_temp.err($$SELECT anarchon_claim(NULL, 4102444800000::bigint, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', NULL::bigint, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', NULL::timestamptz, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', 4102444800000::bigint, NULL)$$);
SELECT pg_temp.err($$SELECT anarchon_heartbeat(NULL, 4102444800000::bigint, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_finish('j', 4102444800000::bigint, 't', NULL)$$);
SELECT pg_temp.err($$SELECT anarchon_check('j', NULL::bigint)$$);
-- Job names.
SELECT pg_temp.err($$SELECT anarchon_claim('', 4102444800000::bigint, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim(repeat('a', 1048576), 4102444800000::bigint, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim(repeat('a', 129), 4102444800000::bigint, 't')$$);
-- (the limits themselves are fine)
SELECT pg_temp.err($$SELECT anarchon_check(repeat('a', 128), 4102444800000::bigint)$$);
SELECT pg_temp.err($$SELECT anarchon_claim('a b', 4102444800000::bigint, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim('-job', 4102444800000::bigint, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim('job*', 4102444800000::bigint, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim('jöb', 4102444800000::bigint, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim(E'job\n', 4102444800000::bigint, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_check('a:b', 4102444800000::bigint)$$);
-- Slots: a scheduled time, a whole second from 10^11 ms (1973) to 9999-12-31.
SELECT pg_temp.err($$SELECT anarchon_claim('j', -1::bigint, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', 253402300800000, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', 9223372036854775807, 't')$$);
-- (the limits themselves are fine)
SELECT pg_temp.err($$SELECT anarchon_check('j', 253402300799000)$$);
SELECT pg_temp.err($$SELECT anarchon_check('j', 100000000000)$$);
SELECT pg_temp.err($$SELECT anarchon_check('j', '9999-12-31 23:59:59+00'::timestamptz)$$);
SELECT pg_temp.err($$SELECT anarchon_check('j', '1973-03-03 09:46:40+00'::timestamptz)$$);
-- Not a whole second: a reading of a clock, not a schedule's time.
SELECT pg_temp.err($$SELECT anarchon_check('j', 253402300799999)$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', 4102444800001, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', 4102444800500::bigint, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_heartbeat('j', 4102444800999, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_finish('j', 4102444800010, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_check('j', '9999-12-31 23:59:59.999+00'::timestamptz)$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', '2030-01-01 00:00:00.5+00'::timestamptz, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', '2030-01-01 00:00:00.0001+00'::timestamptz, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', now(), 't')$$) ~ 'not a whole second' OR
       extract(microseconds FROM now())::bigint % 1000000 = 0 AS now_refused;
-- Below 10^11: seconds where milliseconds were meant.
SELECT pg_temp.err($$SELECT anarchon_claim('j', 4102444800::bigint, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', 99999999000, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', 0::bigint, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', '1973-03-03 09:46:39+00'::timestamptz, 't')$$);
-- Out of range as timestamptz.
SELECT pg_temp.err($$SELECT anarchon_claim('j', 'infinity'::timestamptz, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', '-infinity'::timestamptz, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', '1969-12-31 23:59:59.999+00'::timestamptz, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', '4714-11-24 00:00:00+00 BC'::timestamptz, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', '10000-01-01 00:00:00+00'::timestamptz, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', '294276-12-31 23:59:59+00'::timestamptz, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_check('j', 'infinity'::timestamptz)$$);
-- Tokens.
SELECT pg_temp.err($$SELECT anarchon_claim('j', 4102444800000::bigint, '')$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', 4102444800000::bigint, repeat('t', 65))$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', 4102444800000::bigint, repeat('t', 1048576))$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', 4102444800000::bigint, 'tok en')$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', 4102444800000::bigint, 'tok.en')$$);
SELECT pg_temp.err($$SELECT anarchon_heartbeat('j', 4102444800000::bigint, 'tok''')$$);
SELECT pg_temp.err($$SELECT anarchon_finish('j', 4102444800000::bigint, '')$$);
-- Status, settings and overrides.
SELECT pg_temp.err($$SELECT anarchon_finish('j', 4102444800000::bigint, 't', 'done')$$);
SELECT pg_temp.err($$SELECT anarchon_finish('j', 4102444800000::bigint, 't', 'running')$$);
SELECT pg_temp.err($$SET anarchon.lease_ms = -5$$);
SELECT pg_temp.err($$SET anarchon.attempts = 'many'$$);
SELECT pg_temp.err($$SET anarchon.overlap = 'SKIP'$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', 4102444800000::bigint, 't', max_late_ms => -1)$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', 4102444800000::bigint, 't', overlap => repeat('x', 1048576))$$);
SELECT pg_temp.err($$SELECT anarchon_prune(0)$$);
SELECT pg_temp.err($$SELECT anarchon_prune(-1)$$);
SELECT pg_temp.err($$SELECT anarchon_prune(-9223372036854775808)$$);
-- A slot given as text must be typed: two forms exist.
SELECT pg_temp.err($$SELECT anarchon_claim('j', '2030-01-01', 't')$$);

-- Nothing stored changed.
SELECT count(*) AS runs FROM anarchon.runs;
SELECT job, token, state FROM anarchon.runs;
SELECT job FROM anarchon.runs_jobs;
