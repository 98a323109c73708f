-- anarchon_stats(): the counters of this process's store calls, one row per
-- store; every connection of the process counts into the same rows.
.load ./sqlite/anarchon
.echo on
.parameter set @s "anarchon_now() / 1000 * 1000"
SELECT count(*) FROM anarchon_stats() WHERE calls > 0;

-- a known sequence: 1 won, 1 running, 1 late, 1 done; 3 heartbeats (1
-- fenced), 2 finishes (1 fenced), 1 check, 2 fences (1 refused)
SELECT anarchon_claim('st', @s, 'a');
SELECT anarchon_claim('st', @s, 'b');
SELECT anarchon_claim('st', 1000000000000, 'a');
SELECT anarchon_heartbeat('st', @s, 'a');
SELECT anarchon_heartbeat('st', @s, 'a');
SELECT anarchon_heartbeat('st', @s, 'b');
BEGIN IMMEDIATE;
SELECT anarchon_fence('st', @s, 'a');
COMMIT;
BEGIN IMMEDIATE;
SELECT anarchon_fence('st', @s, 'b');
ROLLBACK;
-- a fence refused in autocommit is a usage error: counted nowhere
SELECT anarchon_fence('st', @s, 'a');
SELECT anarchon_finish('st', @s, 'a');
SELECT anarchon_finish('st', @s, 'b');
SELECT anarchon_claim('st', @s, 'c');
SELECT anarchon_check('st', @s);
-- (list mode: the CLI's line mode changed its layout in SQLite 3.50)
SELECT store, kind, scope, claims_won, claims_running, claims_done, claims_late,
       claims_overlap, claims_lost
  FROM anarchon_stats();
SELECT errors_timeout, errors_connection, errors_configuration, errors_busy, errors_other
  FROM anarchon_stats();
SELECT heartbeats, heartbeats_fenced, finishes, finishes_fenced, checks, fences,
       fences_refused, calls
  FROM anarchon_stats();
SELECT latency_p50_ms > 0, latency_p99_ms >= latency_p50_ms, clock_offset_ms,
       abs(clock_seen - anarchon_now()) < 60000, stats_reset <= clock_seen FROM anarchon_stats;

-- another connection of the same process adds to the same row
.open second.sqlite
.load ./sqlite/anarchon
SELECT anarchon_claim('st', anarchon_now() / 1000 * 1000, 'a');
SELECT claims_won, calls FROM anarchon_stats;

-- 'stats' off: this connection's calls are not counted; reset keeps the row
SELECT anarchon_config('stats');
SELECT anarchon_config('stats', 'off');
SELECT anarchon_claim('st2', anarchon_now() / 1000 * 1000, 'a');
SELECT claims_won, calls FROM anarchon_stats;
SELECT anarchon_config('stats', 'on');
SELECT anarchon_stats_reset();
SELECT store, claims_won, calls, latency_p50_ms IS NULL, clock_offset_ms IS NULL FROM anarchon_stats;

-- bad input
SELECT anarchon_config('stats', 1);
SELECT anarchon_config('stats', 'yes');
SELECT anarchon_stats_reset(1);
SELECT * FROM anarchon_stats(1);
