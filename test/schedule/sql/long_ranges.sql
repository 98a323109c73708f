-- long_ranges.sql — the long lists of anarchon_slots and anarchon_missed:
-- a year of minutes, and the limit of 1 000 000 slots (not run under
-- valgrind: a million slots there take minutes).
.load ./sqlite/anarchon
.headers on
.mode list
-- a year of minutes, and of minutes in a zone: 525600 each (2025 is not a leap year)
SELECT count(*) AS utc_minutes FROM anarchon_slots('* * * * *', 1735689600000, 1767225600000);
SELECT count(*) AS berlin_minutes FROM anarchon_slots('CRON_TZ=Europe/Berlin * * * * *', 1735689600000, 1767225600000);
-- more than 1 000 000 slots: an error, and no row
SELECT count(*) FROM anarchon_slots('* * * * * *', 1735689600000, 1767225600000);
SELECT * FROM anarchon_missed('nightly', '* * * * * *', 1735689600000, 1767225600000);
SELECT count(*) AS just_under FROM anarchon_slots('* * * * * *', 1735689600000, 1735689600000 + 1000000 * 1000);
SELECT count(*) AS one_over FROM anarchon_slots('* * * * * *', 1735689600000, 1735689600000 + 1000001 * 1000);
