-- anarchon_stats(): the counters of one session's store calls (the library is
-- not preloaded here, so each backend counts its own: scope 'backend').
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS anarchon;
RESET client_min_messages;
TRUNCATE anarchon.runs, anarchon.runs_jobs;
SET anarchon.overlap = 'allow';
SELECT anarchon_stats_reset();
SELECT count(*) FROM anarchon.stats WHERE calls > 0;

-- a known sequence: 2 won, 1 running, 1 late, 1 done; 3 heartbeats (1
-- fenced); 2 finishes (1 fenced); 1 check; 2 fences (1 refused)
SELECT anarchon_claim('stats', 4102444800000, 'tok-a');
SELECT anarchon_claim('stats', 4102444800000, 'tok-b');
SELECT anarchon_claim('stats', 4102444860000, 'tok-a');
SELECT anarchon_claim('stats', 1000000000000, 'tok-a');
SELECT anarchon_heartbeat('stats', 4102444800000, 'tok-a');
SELECT anarchon_heartbeat('stats', 4102444800000, 'tok-a');
SELECT anarchon_heartbeat('stats', 4102444800000, 'tok-b');
BEGIN;
SELECT anarchon_fence('stats', 4102444800000, 'tok-a');
COMMIT;
\set VERBOSITY sqlstate
BEGIN;
SELECT anarchon_fence('stats', 4102444800000, 'tok-b');
ROLLBACK;
-- a fence refused in autocommit is a usage error: counted nowhere
SELECT anarchon_fence('stats', 4102444800000, 'tok-a');
\set VERBOSITY default
SELECT anarchon_finish('stats', 4102444800000, 'tok-a');
SELECT anarchon_finish('stats', 4102444800000, 'tok-b');
SELECT anarchon_claim('stats', 4102444800000, 'tok-c');
SELECT anarchon_check('stats', 4102444860000);

SELECT store, kind, scope, claims_won, claims_running, claims_done, claims_late,
       claims_overlap, claims_lost, errors_timeout, errors_connection,
       errors_configuration, errors_busy, errors_other
  FROM anarchon.stats;
SELECT heartbeats, heartbeats_fenced, finishes, finishes_fenced, checks, fences,
       fences_refused, calls
  FROM anarchon.stats;
SELECT latency_p50_ms > 0 AS p50, latency_p99_ms >= latency_p50_ms AS p99,
       clock_offset_ms, clock_seen <= now() + interval '1 s' AS seen,
       stats_reset <= clock_seen AS reset
  FROM anarchon.stats;
-- the histogram: 22 powers of two of microseconds and Infinity, cumulative,
-- every call at Infinity, none past 33.6 s; its sum is of the same calls
SELECT count(*) AS bounds, min(le_ms) AS first_ms,
       max(le_ms) FILTER (WHERE le_ms < 'Infinity') AS last_ms,
       max(count) FILTER (WHERE le_ms = 'Infinity') AS calls,
       max(count) FILTER (WHERE le_ms = 33554.432) AS within_33s
  FROM anarchon_stats_latency() WHERE store = 'local';
SELECT bool_and(le_ms = 0.001 * 2 ^ (3 + n)) AS powers_of_two,
       bool_and(count >= coalesce(before, 0)) AS cumulative
  FROM (SELECT le_ms, count, row_number() OVER w AS n, lag(count) OVER w AS before
          FROM anarchon_stats_latency() WHERE store = 'local' AND le_ms < 'Infinity'
        WINDOW w AS (ORDER BY le_ms)) AS h;
SELECT latency_sum_ms >= latency_p50_ms AS sum FROM anarchon.stats;

-- with anarchon.stats off nothing is counted; reset zeroes, the row stays
SET anarchon.stats = off;
SELECT anarchon_claim('stats', 4102444920000, 'tok-a');
RESET anarchon.stats;
SELECT claims_won FROM anarchon.stats;
SELECT anarchon_stats_reset();
SELECT store, claims_won, calls, latency_p50_ms, latency_sum_ms, clock_offset_ms FROM anarchon.stats;
SELECT count(*) AS bounds, sum(count) AS calls FROM anarchon_stats_latency();

-- privileges: pg_monitor reads, nobody else; only the owner resets
CREATE ROLE regress_anarchon_stats_reader LOGIN IN ROLE pg_monitor;
CREATE ROLE regress_anarchon_stats_app LOGIN;
SET ROLE regress_anarchon_stats_app;
SELECT count(*) FROM anarchon.stats;
SELECT count(*) FROM anarchon_stats();
SELECT count(*) FROM anarchon_stats_latency();
SELECT anarchon_stats_reset();
SET anarchon.stats = off;
RESET ROLE;
SET ROLE regress_anarchon_stats_reader;
SELECT count(*) FROM anarchon.stats;
SELECT count(*) FROM anarchon_stats();
SELECT count(*) FROM anarchon_stats_latency();
SELECT anarchon_stats_reset();
RESET ROLE;
DROP ROLE regress_anarchon_stats_reader;
DROP ROLE regress_anarchon_stats_app;

-- arguments are refused by name, as for every function
SELECT anarchon_stats(1);
