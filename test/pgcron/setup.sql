-- setup.sql — the extensions, and a table where commands record their runs.
CREATE EXTENSION anarchon;
CREATE EXTENSION pg_cron;
CREATE TABLE effects (
	job		text NOT NULL,
	slot	timestamptz NOT NULL,
	app		text,
	at		timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- A command that must outlast its lease waits for the test to let it go
-- (a row in fence_release), at most secs seconds, rather than for a fixed
-- time that a loaded machine may use up before the lease runs out.
CREATE TABLE fence_release ();
CREATE FUNCTION wait_release(secs int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	FOR i IN 1 .. secs * 5 LOOP
		EXIT WHEN EXISTS (SELECT FROM fence_release);
		PERFORM pg_sleep(0.2);
	END LOOP;
END
$$;
GRANT SELECT ON fence_release TO PUBLIC;
