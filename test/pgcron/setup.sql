-- setup.sql — the extensions, and a table where commands record their runs.
CREATE EXTENSION anarchon;
CREATE EXTENSION pg_cron;
CREATE TABLE effects (
	job		text NOT NULL,
	slot	timestamptz NOT NULL,
	app		text,
	at		timestamptz NOT NULL DEFAULT clock_timestamp()
);
