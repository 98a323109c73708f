-- schedule_tz_legacy: the old names of the tz database's "backward" file
-- (CET, EST5EDT, US/Eastern, ...).  Debian 12 installs them with tzdata;
-- Debian 13 and later put them in tzdata-legacy, which a server may lack.
-- Where they are installed they are zones like any other (expected output
-- schedule_tz_legacy.out); where not, they are refused with a message that
-- names the package (schedule_tz_legacy_1.out), never read as something else.
CREATE EXTENSION IF NOT EXISTS anarchon;
SET timezone = 'UTC';
\set VERBOSITY default
\set SHOW_CONTEXT never
SELECT anarchon_slot('CRON_TZ=EST5EDT 0 3 * * *', '2024-07-01 12:00+00'::timestamptz) AS est5edt_is_a_zone;
-- CET is the zone CET, summer time included, as SET timezone reads it
-- (AT TIME ZONE 'CET' would be the abbreviation, +01:00 all year).
SELECT anarchon_slot('CRON_TZ=CET 0 3 * * *', '2024-07-01 12:00+00'::timestamptz) AS cet;
SELECT anarchon_slot('CRON_TZ=US/Eastern 0 3 * * *', '2024-07-01 12:00+00'::timestamptz) AS us_eastern;
