-- slots.sql — anarchon_slot / anarchon_next_slot in SQLite.
.load ./sqlite/anarchon
.headers on
.mode list
-- 2024-03-10 02:59:59.999 and 03:00:00.000 UTC: daily at 03:00
SELECT anarchon_slot('0 3 * * *', 1710039599999) AS slot, anarchon_next_slot('0 3 * * *', 1710039599999) AS next;
SELECT anarchon_slot('0 3 * * *', 1710039600000) AS slot, anarchon_next_slot('0 3 * * *', 1710039600000) AS next;
-- as text, to read them: 29 February every four years
SELECT strftime('%Y-%m-%d %H:%M:%S', anarchon_slot('0 0 29 2 *', 1748736000000) / 1000, 'unixepoch') AS slot,
       strftime('%Y-%m-%d %H:%M:%S', anarchon_next_slot('0 0 29 2 *', 1748736000000) / 1000, 'unixepoch') AS next;
-- 13th or Friday (both restricted: either matches), seconds, macros, intervals
SELECT strftime('%Y-%m-%d %w', anarchon_next_slot('0 0 13 * fri', 1728691200000) / 1000, 'unixepoch') AS sunday_13th;
SELECT anarchon_next_slot('*/10 * * * * *', 1704110405500) AS every_10s;
SELECT anarchon_slot('@hourly', 1704105000000) AS hourly, anarchon_slot('10 seconds', 1700000005123) AS interval;
-- a real instant is accepted when whole
SELECT anarchon_slot('5 minutes', 1704067620000.0) AS from_real;
-- nothing before 1970 or after 9999: NULL
SELECT anarchon_slot('0 3 * * *', 0) IS NULL AS none_before, anarchon_next_slot('@yearly', 253402300799999) IS NULL AS none_after;
-- the clock forms
SELECT anarchon_slot('10 seconds') % 10000 = 0 AS on_interval, anarchon_slot('* * * * * *') <= anarchon_now() AS not_future,
       anarchon_next_slot('* * * * *') > anarchon_slot('* * * * *') AS next_after;
-- not deterministic even with an instant: the answer depends on the system's
-- tz database too, which a tzdata upgrade changes, so a generated column or an
-- index on the expression (which would go stale) is refused; store the slot
-- when the row is written instead
CREATE TABLE g(at, s AS (anarchon_slot('@hourly', at)));
CREATE TABLE events(at INTEGER, hour_slot INTEGER);
INSERT INTO events(at, hour_slot) SELECT column1, anarchon_slot('@hourly', column1) FROM (VALUES (1704105000000), (1704108600000));
SELECT at, hour_slot FROM events ORDER BY at;
-- many rows, one parse: the 10 000 minutes after 2024-01-01 are 10 000 slots
WITH RECURSIVE m(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM m WHERE i < 9999)
SELECT count(DISTINCT anarchon_slot('* * * * *', 1704067200000 + i * 60000 + 59999)) AS distinct_slots FROM m;
-- a schedule that changes from row to row is parsed for each row
SELECT s, anarchon_slot(s, 1704105000000) AS slot
  FROM (SELECT '@hourly' AS s UNION ALL SELECT '@daily' UNION ALL SELECT '@hourly' UNION ALL SELECT '30 seconds');
-- refusals
SELECT anarchon_slot('0 0 32 * *', 0);
SELECT anarchon_slot('0 0 30 2 *', 0);
SELECT anarchon_next_slot('* * * *', 0);
SELECT anarchon_slot(NULL, 0);
SELECT anarchon_slot(42, 0);
SELECT anarchon_slot('@daily', 'tomorrow');
SELECT anarchon_slot('@daily', -1);
SELECT anarchon_slot('@daily', 1.5);
SELECT anarchon_next_slot('@daily', 253402300800000);
SELECT anarchon_slot(char(48, 32, 48, 32, 42, 32, 42, 32, 42, 0, 49));
SELECT 'still here' AS after_errors;
