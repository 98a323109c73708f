-- zones.sql — CRON_TZ schedules, anarchon_slots, anarchon_missed, anarchon_zones
-- and anarchon_fire_at in SQLite.  Times are shown as UTC text to read them.
.load ./sqlite/anarchon
.headers on
.mode list
-- the zones are the system's tz database's: its version and its directory
SELECT anarchon_tzdata_version() GLOB '[12][0-9][0-9][0-9][a-z] (/*)' AS version_and_directory;
SELECT count(*) > 400 AS many, sum(name = 'Europe/Berlin') AS berlin, sum(name = 'PST') AS no_pst,
       sum(name = 'Pacific/Apia') AS apia,
       sum(name IN ('localtime', 'posixrules') OR name LIKE 'posix/%' OR name LIKE 'right/%') AS no_copies
  FROM anarchon_zones;
-- rules of today, not of a frozen copy: Greenland kept -02 as its standard
-- time from 2023, Egypt restored daylight saving in 2023 (ICU's tz 2022e had
-- neither, and put both slots an hour off)
SELECT datetime(anarchon_slot('CRON_TZ=America/Nuuk 0 3 * * *', 1796299200000) / 1000, 'unixepoch') AS nuuk_2026_12_03,
       datetime(anarchon_slot('CRON_TZ=Africa/Cairo 0 3 * * *', 1719835200000) / 1000, 'unixepoch') AS cairo_2024_07_01;
-- asked 1 ms before the first instant after New York's gap, the next slot is the gap's
SELECT datetime(anarchon_next_slot('CRON_TZ=America/New_York 30 2 * * *', 1772953199999) / 1000, 'unixepoch') AS next_before_gap;
-- a name is a zone's exact spelling, not a POSIX rule, not a copy of the database
SELECT anarchon_slot('CRON_TZ=europe/berlin 0 3 * * *', 1700000000000);
SELECT anarchon_slot('CRON_TZ=EST5EDT,M3.2.0,M11.1.0 0 3 * * *', 1700000000000);
SELECT anarchon_slot('CRON_TZ=posix/Europe/Berlin 0 3 * * *', 1700000000000);
SELECT anarchon_slot('CRON_TZ=localtime 0 3 * * *', 1700000000000);
-- Berlin, 2024-03-31: 02:00 CET jumps to 03:00 CEST.  Fixed time: the skipped
-- 02:30 is one slot at 03:00 CEST (01:00 UTC); wall clock: no 02:30 at all.
SELECT datetime(slot / 1000, 'unixepoch') AS fixed_0230 FROM anarchon_slots('CRON_TZ=Europe/Berlin 30 2 * * *', 1711756800000, 1712016000000);
SELECT datetime(slot / 1000, 'unixepoch') AS wallclock_xx30 FROM anarchon_slots('CRON_TZ=Europe/Berlin 30 * * * *', 1711839600000, 1711854000000);
-- 2024-10-27: 03:00 CEST goes back to 02:00 CET.  Fixed: the first 02:30;
-- wall clock: both.
SELECT datetime(slot / 1000, 'unixepoch') AS fixed_0230 FROM anarchon_slots('CRON_TZ=Europe/Berlin 30 2 * * *', 1729900800000, 1730116800000);
SELECT datetime(slot / 1000, 'unixepoch') AS wallclock_xx30 FROM anarchon_slots('TZ=Europe/Berlin 30 * * * *', 1729983600000, 1729998000000);
-- the single-slot functions agree with the list
SELECT datetime(anarchon_slot('CRON_TZ=Europe/Berlin 30 2 * * *', 1711861200000) / 1000, 'unixepoch') AS slot_at_0300z,
       datetime(anarchon_next_slot('CRON_TZ=Europe/Berlin 30 2 * * *', 1711800000000) / 1000, 'unixepoch') AS next_after;
-- Apia skipped 2011-12-30 entirely: its 03:00 and 15:00 are one slot at 00:00 on the 31st
SELECT datetime(slot / 1000, 'unixepoch') AS apia FROM anarchon_slots('CRON_TZ=Pacific/Apia 0 3,15 * * *', 1325203200000, 1325376000000);
-- empty range, reversed range, missing arguments (long ranges: long_ranges.sql)
SELECT count(*) AS empty FROM anarchon_slots('@hourly', 1735689600000, 1735689600000);
SELECT * FROM anarchon_slots('@hourly', 1735689600001, 1735689600000);
SELECT * FROM anarchon_slots('@hourly', 1735689600000);
SELECT * FROM anarchon_slots('@hourly', 'yesterday', 1735689600000);
-- fire_at: the same for everyone, inside [slot, slot + max_jitter_ms)
SELECT anarchon_fire_at('report', 1796000000000, 60000) AS report, anarchon_fire_at('export', 1796000000000, 60000) AS export,
       anarchon_fire_at('report', 1796003600000, 60000) - 1796003600000 AS next_hour_offset, anarchon_fire_at('report', 1796000000000, 0) AS no_jitter;
SELECT anarchon_fire_at('report', 1796000000000, -1);
SELECT anarchon_fire_at('report', 1796000000000, 3600000);
SELECT anarchon_config('max_late_ms', 3600000);
SELECT anarchon_fire_at('report', 1796000000000, 3600000) - 1796000000000 < 3600000 AS within_the_hour;
SELECT anarchon_fire_at('report', 1796000000000, 1e99);
SELECT anarchon_fire_at('report', 1796000000001, 1000);
SELECT anarchon_config('max_late_ms', 60000);
-- anarchon_missed on the local store: ten hourly slots, three ran
CREATE TEMP TABLE h AS SELECT (anarchon_now() / 3600000 - 10) * 3600000 AS a, (anarchon_now() / 3600000) * 3600000 AS b;
SELECT count(*) AS before_any_run FROM anarchon_missed('nightly', '1 hours', (SELECT a FROM h), (SELECT b FROM h));
SELECT anarchon_config('max_late_ms', 86400000), anarchon_config('overlap', 'allow');
SELECT anarchon_claim('nightly', (SELECT a FROM h) + 3600000 * 2, 't1') AS c1;
SELECT anarchon_claim('nightly', (SELECT a FROM h) + 3600000 * 5, 't2') AS c2;
SELECT anarchon_claim('nightly', (SELECT a FROM h) + 3600000 * 9, 't3') AS c3;
SELECT anarchon_config('max_late_ms', 60000);
SELECT count(*) AS missed, sum(slot = (SELECT a FROM h) + 3600000 * 2) AS ran_listed FROM anarchon_missed('nightly', '1 hours', (SELECT a FROM h), (SELECT b FROM h));
SELECT count(*) AS other_job FROM anarchon_missed('weekly', '1 hours', (SELECT a FROM h), (SELECT b FROM h));
-- across a change of the clocks: Berlin's 02:30 around 2024-03-31, when the
-- run of the skipped 02:30 (its slot is 03:00 CEST, 01:00 UTC) is in the
-- history (written here directly: a claim that old would be 'late')
SELECT group_concat(datetime(slot / 1000, 'unixepoch'), ', ') AS none_ran FROM anarchon_missed('dst', 'CRON_TZ=Europe/Berlin 30 2 * * *', 1711756800000, 1712016000000);
INSERT INTO anarchon_runs (job, slot, attempt, token, state, lease_until, claimed_at, finished_at)
VALUES ('dst', 1711846800000, 1, 't', 'succeeded', 1711846830000, 1711846800500, 1711846820000);
SELECT group_concat(datetime(slot / 1000, 'unixepoch'), ', ') AS gap_ran FROM anarchon_missed('dst', 'CRON_TZ=Europe/Berlin 30 2 * * *', 1711756800000, 1712016000000);
-- bad input: clear errors, and nothing stored changes
SELECT count(*) AS runs_before FROM anarchon_runs;
SELECT * FROM anarchon_missed('nightly', 'CRON_TZ= 0 3 * * *', 1735689600000, 1767225600000);
SELECT * FROM anarchon_missed('nightly', 'CRON_TZ=', 1735689600000, 1767225600000);
SELECT * FROM anarchon_missed('nightly', 'CRON_TZ=../../etc/passwd 0 3 * * *', 1735689600000, 1767225600000);
SELECT * FROM anarchon_missed('nightly', 'CRON_TZ=' || printf('%.*c', 8192, 'x') || ' 0 3 * * *', 1735689600000, 1767225600000);
SELECT * FROM anarchon_missed('nightly', 'CRON_TZ=Mars/Base 0 3 * * *', 1735689600000, 1767225600000);
SELECT * FROM anarchon_missed('bad job', '@hourly', 1735689600000, 1767225600000);
SELECT * FROM anarchon_missed('nightly', '@hourly', 1735689600, 1767225600);
SELECT * FROM anarchon_missed('nightly', '@hourly', 1767225600000, 1735689600000);
SELECT anarchon_slot('CRON_TZ=PST 0 3 * * *', 0);
SELECT anarchon_slot('TZ=Europe/Berlin', 0);
SELECT count(*) AS runs_after FROM anarchon_runs;
