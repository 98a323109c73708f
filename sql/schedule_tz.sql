-- Schedules with a time zone (CRON_TZ), anarchon_slots, anarchon_missed,
-- anarchon_zones and anarchon_fire_at.  Slots are shown in UTC.
CREATE EXTENSION IF NOT EXISTS anarchon;
SET timezone = 'UTC';
\set VERBOSITY default
\set SHOW_CONTEXT never

-- The zones are the server's own, as AT TIME ZONE and the timezone setting
-- read them: the tz database's version (when its directory says) and where.
SELECT anarchon_tzdata_version() ~ '^([12][0-9]{3}[a-z]|unknown|PostgreSQL [0-9.]+) \(/' AS version_and_directory;
SELECT count(*) > 400 AS many, count(*) FILTER (WHERE name = 'Europe/Berlin') AS berlin,
       count(*) FILTER (WHERE name = 'PST') AS no_pst,
       count(*) FILTER (WHERE name IN ('localtime', 'posixrules') OR name LIKE 'posix/%') AS no_copies,
       count(*) = (SELECT count(*) FROM pg_timezone_names
                   WHERE name NOT IN ('localtime', 'posixrules') AND name !~ '^(posix|right)/') AS as_pg_timezone_names
  FROM anarchon_zones();
-- Rules of today, not of a frozen copy: Greenland kept -02 as its standard
-- time from 2023, Egypt restored daylight saving in 2023 (ICU's tz 2022e had
-- neither, and put both slots an hour off).
SELECT anarchon_slot('CRON_TZ=America/Nuuk 0 3 * * *', '2026-12-03 12:00+00'::timestamptz) AS nuuk,
       '2026-12-03 03:00'::timestamp AT TIME ZONE 'America/Nuuk' AS nuuk_at_time_zone;
SELECT anarchon_slot('CRON_TZ=Africa/Cairo 0 3 * * *', '2024-07-01 12:00+00'::timestamptz) AS cairo,
       '2024-07-01 03:00'::timestamp AT TIME ZONE 'Africa/Cairo' AS cairo_at_time_zone;
-- A name is a zone's exact spelling: not another case, not a POSIX rule
-- (which pg_tzset would take), not a copy of the database.
SELECT anarchon_slot('CRON_TZ=europe/berlin 0 3 * * *', now());
SELECT anarchon_slot('CRON_TZ=XYZ5 0 3 * * *', now());
SELECT anarchon_slot('CRON_TZ=posix/Europe/Berlin 0 3 * * *', now());
-- (EST5EDT and CET, names of the backward file: schedule_tz_legacy.)
-- What depends on the time-zone data is STABLE: a tzdata upgrade may move slots.
SELECT p.oid::regprocedure AS function, p.provolatile AS volatility
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = 'anarchon' AND p.proname IN ('anarchon_slot', 'anarchon_next_slot', 'anarchon_slots')
 ORDER BY p.oid::regprocedure::text COLLATE "C";

-- New York, 2024-03-10: 02:00 EST jumps to 03:00 EDT.  A fixed-time schedule
-- gets its skipped 02:30 at 03:00 EDT; @hourly follows the wall clock.
SELECT slot, slot AT TIME ZONE 'America/New_York' AS new_york
  FROM anarchon_slots('CRON_TZ=America/New_York 30 2 * * *', '2024-03-09'::timestamptz, '2024-03-11 12:00');
SELECT slot, slot AT TIME ZONE 'America/New_York' AS new_york
  FROM anarchon_slots('CRON_TZ=America/New_York @hourly', '2024-03-10 05:00'::timestamptz, '2024-03-10 09:00');
-- 2024-11-03: 02:00 EDT goes back to 01:00 EST.  Fixed: the first 01:30 only.
SELECT slot, slot AT TIME ZONE 'America/New_York' AS new_york
  FROM anarchon_slots('CRON_TZ=America/New_York 30 1 * * *', '2024-11-02'::timestamptz, '2024-11-04 12:00');
SELECT slot FROM anarchon_slots('TZ=America/New_York @hourly', '2024-11-03 03:00'::timestamptz, '2024-11-03 08:00');
-- Lord Howe moves its clock by half an hour; Kathmandu moved by a quarter
SELECT slot FROM anarchon_slots('CRON_TZ=Australia/Lord_Howe 15 2 * * *', '2024-10-04 12:00'::timestamptz, '2024-10-06 18:00');
SELECT slot FROM anarchon_slots('CRON_TZ=Asia/Kathmandu 0 0 * * *', '1985-12-30'::timestamptz, '1986-01-02');
-- the ms forms, and the single-slot functions
SELECT slot FROM anarchon_slots('CRON_TZ=Europe/Berlin 30 2 * * *', 1711756800000, 1712016000000);
SELECT anarchon_slot('CRON_TZ=Europe/Berlin 30 2 * * *', '2024-03-31 01:00+00'::timestamptz) AS slot_at,
       anarchon_next_slot('CRON_TZ=Europe/Berlin 30 2 * * *', '2024-03-30 23:00+00'::timestamptz) AS next_after,
       anarchon_slot('CRON_TZ=Europe/Berlin 30 2 * * *', 1711846800000) AS slot_ms;
-- asked 1 ms before the first instant after the gap, the next slot is the gap's
SELECT anarchon_next_slot('CRON_TZ=America/New_York 30 2 * * *', '2026-03-08 06:59:59.999+00'::timestamptz) AS next_before_gap,
       anarchon_next_slot('CRON_TZ=America/New_York 30 2 * * *', 1772953199999) AS next_before_gap_ms;
-- The session's TimeZone does not matter: the schedule's zone does.
SET timezone = 'Asia/Tokyo';
SELECT anarchon_slot('CRON_TZ=Europe/Berlin 0 3 * * *', '2024-06-01 12:00+00'::timestamptz) = '2024-06-01 01:00+00' AS same;
SET timezone = 'UTC';
-- a year of minutes (2025): 525600 in UTC and in a zone
SELECT count(*) AS utc FROM anarchon_slots('* * * * *', '2025-01-01'::timestamptz, '2026-01-01');
SELECT count(*) AS berlin FROM anarchon_slots('CRON_TZ=Europe/Berlin * * * * *', '2025-01-01'::timestamptz, '2026-01-01');
-- empty and reversed ranges, too many slots
SELECT count(*) AS empty FROM anarchon_slots('@hourly', '2025-01-01'::timestamptz, '2025-01-01');
SELECT * FROM anarchon_slots('@hourly', '2025-01-02'::timestamptz, '2025-01-01');
SELECT count(*) FROM anarchon_slots('* * * * * *', '2025-01-01'::timestamptz, '2026-01-01');
SELECT * FROM anarchon_slots('@hourly', NULL::timestamptz, '2025-01-01');

-- anarchon_fire_at: the same for everyone, spread inside [slot, slot + max_jitter_ms)
SELECT anarchon_fire_at('report', 1796000000000, 60000) AS report, anarchon_fire_at('export', 1796000000000, 60000) AS export,
       anarchon_fire_at('report', '2026-12-01 12:00+00'::timestamptz, 60000) AS as_time,
       anarchon_fire_at('report', 1796000000000, 0) AS no_jitter;
SELECT anarchon_fire_at('report', 1796000000000, -1);
SELECT anarchon_fire_at('report', 1796000000000, 9223372036854775807);
SET anarchon.max_late_ms = 3600000;
SELECT anarchon_fire_at('report', 1796000000000, 3600000) - 1796000000000 < 3600000 AS within_the_hour;
RESET anarchon.max_late_ms;
SELECT anarchon_fire_at('report', 1796000000000, NULL);

-- anarchon_missed on the local store: ten hourly slots, three ran
CREATE TEMP TABLE h AS SELECT date_trunc('hour', now()) - interval '10 hours' AS a, date_trunc('hour', now()) AS b;
SELECT count(*) AS before_any_run FROM h, anarchon_missed('nightly', '1 hours', h.a, h.b);
SET anarchon.max_late_ms = 86400000;
SET anarchon.overlap = 'allow';
SELECT anarchon_claim('nightly', a + interval '2 hours', 't1') AS c1 FROM h;
SELECT anarchon_claim('nightly', a + interval '5 hours', 't2') AS c2 FROM h;
SELECT anarchon_claim('nightly', a + interval '9 hours', 't3') AS c3 FROM h;
RESET anarchon.max_late_ms;
RESET anarchon.overlap;
SELECT count(*) AS missed, count(*) FILTER (WHERE m.slot = h.a + interval '2 hours') AS ran_listed
  FROM h, anarchon_missed('nightly', '1 hours', h.a, h.b) m;
SELECT count(*) AS other_job FROM h, anarchon_missed('weekly', '1 hours', h.a, h.b);
SELECT count(*) AS ms_form FROM h, anarchon_missed('nightly', '1 hours',
	(extract(epoch FROM h.a) * 1000)::bigint, (extract(epoch FROM h.b) * 1000)::bigint);
-- a monitoring role may ask too (the job is its owner's: other roles may not)
CREATE ROLE anarchon_tz_reader IN ROLE pg_monitor;
SET ROLE anarchon_tz_reader;
SELECT count(*) AS as_reader
  FROM anarchon_missed('nightly', '1 hours', date_trunc('hour', now()) - interval '10 hours', date_trunc('hour', now()));
RESET ROLE;
DROP ROLE anarchon_tz_reader;

-- across a change of the clocks: New York's 02:30 around 2024-03-10, when
-- the run of the skipped 02:30 (its slot is 03:00 EDT, 07:00 UTC) is in the
-- history (written here directly: a claim that old would be 'late')
SELECT string_agg(to_char(slot, 'MM-DD HH24:MI'), ', ') AS none_ran
  FROM anarchon_missed('dst', 'CRON_TZ=America/New_York 30 2 * * *', '2024-03-09'::timestamptz, '2024-03-11 12:00');
INSERT INTO anarchon.runs VALUES ('dst', '2024-03-10 07:00+00', 1, 't', 'succeeded',
	'2024-03-10 07:00:30+00', '2024-03-10 07:00:00.5+00', '2024-03-10 07:00:20+00');
SELECT string_agg(to_char(slot, 'MM-DD HH24:MI'), ', ') AS gap_ran
  FROM anarchon_missed('dst', 'CRON_TZ=America/New_York 30 2 * * *', '2024-03-09'::timestamptz, '2024-03-11 12:00');
SELECT count(*) FROM anarchon_missed('dst', '* * * * * *', '2025-01-01'::timestamptz, '2026-01-01');
-- bad input: clear errors, and nothing stored changes
SELECT count(*) AS runs_before FROM anarchon.runs \gset
SELECT * FROM anarchon_missed('nightly', 'CRON_TZ= 0 3 * * *', '2025-01-01'::timestamptz, '2025-02-01');
SELECT * FROM anarchon_missed('nightly', 'CRON_TZ=', '2025-01-01'::timestamptz, '2025-02-01');
SELECT * FROM anarchon_missed('nightly', 'CRON_TZ=../../etc/passwd 0 3 * * *', '2025-01-01'::timestamptz, '2025-02-01');
SELECT * FROM anarchon_missed('nightly', 'CRON_TZ=' || repeat('x', 8192) || ' 0 3 * * *', '2025-01-01'::timestamptz, '2025-02-01');
SELECT * FROM anarchon_missed('nightly', 'CRON_TZ=Mars/Base 0 3 * * *', '2025-01-01'::timestamptz, '2025-02-01');
SELECT * FROM anarchon_missed('bad job', '@hourly', '2025-01-01'::timestamptz, '2025-02-01');
SELECT * FROM anarchon_missed('nightly', '@hourly', 1735689600, 1767225600);
SELECT * FROM anarchon_missed('nightly', '@hourly', '2025-02-01'::timestamptz, '2025-01-01');
SELECT * FROM anarchon_missed(NULL, '@hourly', '2025-01-01'::timestamptz, '2025-02-01');
SELECT anarchon_slot('CRON_TZ=PST 0 3 * * *', now());
SELECT anarchon_slot('cron_tz=UTC 0 3 * * *', now());
SELECT count(*) = :runs_before AS nothing_stored_changed FROM anarchon.runs;

-- anarchon.run remembers each job's schedule; anarchon.missed_runs watches them
SELECT count(*) AS watched FROM anarchon.run_schedules;
\o /dev/null
CALL anarchon.run('tzjob', 'CRON_TZ=Asia/Kathmandu * * * * *', 'SELECT 1');
\o
SELECT job, schedule, since <= clock_timestamp() AS since_ok FROM anarchon.run_schedules;
SELECT count(*) AS missed_now FROM anarchon.missed_runs;
-- as if it had been watched for ten minutes in which no instance ran it
UPDATE anarchon.run_schedules SET since = since - interval '10 minutes';
SELECT count(*) BETWEEN 8 AND 10 AS about_nine_missed, bool_and(slot < now() - interval '60 seconds') AS all_past_max_late
  FROM anarchon.missed_runs WHERE job = 'tzjob';
-- a call with another schedule starts the watch again
\o /dev/null
CALL anarchon.run('tzjob', 'CRON_TZ=Asia/Kathmandu */5 * * * *', 'SELECT 1');
\o
SELECT schedule, since > now() - interval '1 minute' AS restarted FROM anarchon.run_schedules;
