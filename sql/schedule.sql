-- anarchon_slot / anarchon_next_slot: schedules as slots, in UTC.
CREATE EXTENSION IF NOT EXISTS anarchon;
SET timezone = 'UTC';
\set VERBOSITY default
\set SHOW_CONTEXT never

-- A table of schedules and instants; the answers are worked out by hand
-- (and checked again, with many more, by test/schedule's C table test).
SELECT s, at, anarchon_slot(s, at) AS slot, anarchon_next_slot(s, at) AS next
  FROM (VALUES
	('0 3 * * *',         '2024-03-10 02:59:59.999+00'::timestamptz),
	('0 3 * * *',         '2024-03-10 03:00:00+00'),
	('*/15 * * * *',      '2024-05-05 10:44:59+00'),
	('0 0 31 * *',        '2024-04-15 00:00:00+00'),
	('0 0 $ * *',         '2024-02-15 00:00:00+00'),
	('0 0 29 2 *',        '2025-06-01 00:00:00+00'),
	('0 0 29 2 *',        '2100-03-01 00:00:00+00'),
	('0 0 13 * fri',      '2024-10-12 00:00:00+00'),
	('0 0 */2 * mon',     '2024-01-02 00:00:00+00'),
	('10-40/15 * * * *',  '2024-01-01 12:41:00+00'),
	('0 12 * jan,jul mon-fri', '2024-06-15 00:00:00+00'),
	('@weekly',           '2024-01-03 00:00:00+00'),
	('@monthly',          '2024-02-15 00:00:00+00'),
	('*/10 * * * * *',    '2024-01-01 12:00:05.5+00'),
	('10 seconds',        '2023-11-14 22:13:25.123+00'),
	('7 days',            '2024-01-01 00:00:00+00'),
	('0 3 * * *',         '1970-01-01 00:00:00+00'),
	('0 0 1 1 *',         '9999-06-01 00:00:00+00')
  ) AS t(s, at);

-- The same in milliseconds (bigint in, bigint out).
SELECT anarchon_slot('0 3 * * *', 1710039599999) AS slot,
       anarchon_next_slot('0 3 * * *', 1710039599999) AS next,
       anarchon_next_slot('@yearly', 253402300799999) AS none_after;

-- The time zone of the session does not matter: slots are UTC.
SET timezone = 'America/New_York';
SELECT anarchon_slot('0 3 * * *', '2024-03-10 03:00:00+00'::timestamptz) = '2024-03-10 03:00:00+00' AS utc;
SET timezone = 'UTC';

-- Without an instant: the database clock.
SELECT anarchon_slot('* * * * * *') <= clock_timestamp() AS not_future,
       anarchon_next_slot('* * * * *') > clock_timestamp() AS in_future,
       anarchon_next_slot('* * * * *') - anarchon_slot('* * * * *') = interval '1 minute' AS one_minute_apart;

-- With an instant the answer depends on the arguments and on the server's
-- time-zone data, which a tzdata upgrade changes: STABLE, so an index
-- expression refuses it (such an index could go stale); a query computes it.
CREATE TEMP TABLE events (at timestamptz);
CREATE INDEX ON events (anarchon.anarchon_slot('@hourly', at));
INSERT INTO events VALUES ('2024-01-01 10:30+00'), ('2024-01-01 10:59+00'), ('2024-01-01 11:00+00');
SELECT anarchon.anarchon_slot('@hourly', at) AS hour, count(*) FROM events GROUP BY 1 ORDER BY 1;

-- Refusals name the field and say what is allowed.
SELECT anarchon_slot('0 0 32 * *', now());
SELECT anarchon_slot('60 * * * *', now());
SELECT anarchon_slot('0 0 30 2 *', now());
SELECT anarchon_slot('0 0 * * 5-2', now());
SELECT anarchon_slot('* * * *', now());
SELECT anarchon_slot('@reboot', now());
SELECT anarchon_slot('10 fortnights', now());
SELECT anarchon_slot(NULL, now());
SELECT anarchon_slot('@daily', NULL::timestamptz);
SELECT anarchon_slot('@daily', 'infinity'::timestamptz);
SELECT anarchon_slot('@daily', '1969-12-31 23:59:59+00'::timestamptz);
SELECT anarchon_next_slot('@daily', -1);
