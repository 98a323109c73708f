-- Bad input: a clear error with a fitting SQLSTATE, and nothing stored changes.
CREATE EXTENSION IF NOT EXISTS anarchon;
TRUNCATE anarchon.runs, anarchon.runs_jobs;
SELECT (extract(epoch FROM date_trunc('second', clock_timestamp())) * 1000)::bigint AS now_ms \gset
-- err(q): the SQLSTATE and message of q's error.
CREATE FUNCTION pg_temp.err(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE q;
	RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ' ' || SQLERRM;
END
$$;
SELECT anarchon_claim('good', :now_ms, 'tok-1');

-- NULLs.
SELECT pg_temp.err($$SELECT anarchon_claim(NULL, 0::bigint, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', NULL::bigint, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', NULL::timestamptz, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', 0::bigint, NULL)$$);
SELECT pg_temp.err($$SELECT anarchon_heartbeat(NULL, 0::bigint, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_finish('j', 0::bigint, 't', NULL)$$);
SELECT pg_temp.err($$SELECT anarchon_check('j', NULL::bigint)$$);
-- Job names.
SELECT pg_temp.err($$SELECT anarchon_claim('', 0::bigint, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim(repeat('a', 1048576), 0::bigint, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim(repeat('a', 129), 0::bigint, 't')$$);
-- (the limits themselves are fine)
SELECT pg_temp.err($$SELECT anarchon_check(repeat('a', 128), 0::bigint)$$);
SELECT pg_temp.err($$SELECT anarchon_claim('a b', 0::bigint, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim('-job', 0::bigint, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim('job*', 0::bigint, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim('jöb', 0::bigint, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim(E'job\n', 0::bigint, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_check('a:b', 0::bigint)$$);
-- Slots.
SELECT pg_temp.err($$SELECT anarchon_claim('j', -1::bigint, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', 253402300800000, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_check('j', 253402300799999)$$);
SELECT pg_temp.err($$SELECT anarchon_check('j', '9999-12-31 23:59:59.999+00'::timestamptz)$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', 'infinity'::timestamptz, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', '-infinity'::timestamptz, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', '1969-12-31 23:59:59.999+00'::timestamptz, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', '10000-01-01 00:00:00+00'::timestamptz, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', '2030-01-01 00:00:00.0001+00'::timestamptz, 't')$$);
SELECT pg_temp.err($$SELECT anarchon_check('j', 'infinity'::timestamptz)$$);
-- Tokens.
SELECT pg_temp.err($$SELECT anarchon_claim('j', 0::bigint, '')$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', 0::bigint, repeat('t', 65))$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', 0::bigint, repeat('t', 1048576))$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', 0::bigint, 'tok en')$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', 0::bigint, 'tok.en')$$);
SELECT pg_temp.err($$SELECT anarchon_heartbeat('j', 0::bigint, 'tok''')$$);
SELECT pg_temp.err($$SELECT anarchon_finish('j', 0::bigint, '')$$);
-- Status, settings and overrides.
SELECT pg_temp.err($$SELECT anarchon_finish('j', 0::bigint, 't', 'done')$$);
SELECT pg_temp.err($$SELECT anarchon_finish('j', 0::bigint, 't', 'running')$$);
SELECT pg_temp.err($$SET anarchon.lease_ms = -5$$);
SELECT pg_temp.err($$SET anarchon.attempts = 'many'$$);
SELECT pg_temp.err($$SET anarchon.overlap = 'SKIP'$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', 0::bigint, 't', max_late_ms => -1)$$);
SELECT pg_temp.err($$SELECT anarchon_claim('j', 0::bigint, 't', overlap => repeat('x', 1048576))$$);
SELECT pg_temp.err($$SELECT anarchon_prune(0)$$);
-- A slot given as text must be typed: two forms exist.
SELECT pg_temp.err($$SELECT anarchon_claim('j', '2030-01-01', 't')$$);

-- Nothing stored changed.
SELECT count(*) AS runs FROM anarchon.runs;
SELECT job, token, state FROM anarchon.runs;
SELECT job FROM anarchon.runs_jobs;
