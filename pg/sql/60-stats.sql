-- Live counters of the store calls, one row per store (pg/stats.c,
-- core/stats.h; doc/running-to-the-end.md).  Shared by every backend when the
-- library is in shared_preload_libraries (scope 'server'), else each
-- backend's own (scope 'backend').  Readable by pg_monitor, so that
-- postgres_exporter can scrape the view as it is; reset by the owner only.
CREATE FUNCTION anarchon.anarchon_stats()
	RETURNS TABLE (store text, kind text, scope text,
		claims_won bigint, claims_running bigint, claims_done bigint,
		claims_late bigint, claims_overlap bigint, claims_lost bigint,
		errors_timeout bigint, errors_connection bigint, errors_configuration bigint,
		errors_busy bigint, errors_other bigint,
		heartbeats bigint, heartbeats_fenced bigint, finishes bigint, finishes_fenced bigint,
		checks bigint, fences bigint, fences_refused bigint,
		calls bigint, latency_p50_ms double precision, latency_p99_ms double precision,
		clock_offset_ms bigint, clock_seen timestamptz, stats_reset timestamptz)
	AS 'MODULE_PATHNAME', 'anarchon_stats'
	LANGUAGE C VOLATILE ROWS 4;

CREATE FUNCTION anarchon.anarchon_stats_reset()
	RETURNS void
	AS 'MODULE_PATHNAME', 'anarchon_stats_reset'
	LANGUAGE C VOLATILE;

CREATE VIEW anarchon.stats AS SELECT * FROM anarchon.anarchon_stats();

REVOKE EXECUTE ON FUNCTION anarchon.anarchon_stats() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION anarchon.anarchon_stats_reset() FROM PUBLIC;
REVOKE ALL ON anarchon.stats FROM PUBLIC;
GRANT EXECUTE ON FUNCTION anarchon.anarchon_stats() TO pg_monitor;
GRANT SELECT ON anarchon.stats TO pg_monitor;
