-- Unqualified names: for every anarchon.anarchon_* function, a function of the
-- same name and arguments in the extension's schema (public by default) that
-- calls it (or replaces it: pg/upgrade/ runs this piece again).  They are
-- plain SQL functions, so the planner inlines them.  This
-- piece runs last, after every piece that adds functions.
DO $$
DECLARE
	f record;
BEGIN
	FOR f IN
		SELECT p.oid, p.proname, p.pronargs
		  FROM pg_catalog.pg_proc p
		 WHERE p.pronamespace = 'anarchon'::pg_catalog.regnamespace
		   AND p.proname LIKE 'anarchon\_%' AND p.prokind = 'f'
		   AND p.proname <> 'anarchon_claim_many'
		 ORDER BY p.oid
	LOOP
		EXECUTE pg_catalog.format(
			'CREATE OR REPLACE FUNCTION @extschema@.%I(%s) RETURNS %s LANGUAGE sql VOLATILE AS %L',
			f.proname,
			pg_catalog.pg_get_function_arguments(f.oid),
			pg_catalog.pg_get_function_result(f.oid),
			pg_catalog.format('SELECT anarchon.%I(%s)', f.proname,
				(SELECT pg_catalog.string_agg('$' || i, ', ')
				   FROM pg_catalog.generate_series(1, f.pronargs) AS i)));
	END LOOP;
END
$$;

-- anarchon_claim_many's unqualified name is the C function itself, not a
-- wrapper: PostgreSQL never inlines a volatile set-returning SQL function, so
-- a wrapper would run the claim inside a function, where a local claim is
-- refused (pg/claim_txn.c).
CREATE FUNCTION @extschema@.anarchon_claim_many(jobs text[], slot timestamptz, token text,
		lease_ms bigint DEFAULT NULL, max_late_ms bigint DEFAULT NULL,
		attempts integer DEFAULT NULL, overlap text DEFAULT NULL,
		busy_timeout_ms bigint DEFAULT NULL)
	RETURNS TABLE (job text, outcome text, detail text)
	AS 'MODULE_PATHNAME', 'anarchon_claim_many'
	LANGUAGE C VOLATILE ROWS 10;

CREATE FUNCTION @extschema@.anarchon_claim_many(jobs text[], slot bigint, token text,
		lease_ms bigint DEFAULT NULL, max_late_ms bigint DEFAULT NULL,
		attempts integer DEFAULT NULL, overlap text DEFAULT NULL,
		busy_timeout_ms bigint DEFAULT NULL)
	RETURNS TABLE (job text, outcome text, detail text)
	AS 'MODULE_PATHNAME', 'anarchon_claim_many_ms'
	LANGUAGE C VOLATILE ROWS 10;

-- Privileges stay on the anarchon.* functions: a wrapper runs as its caller,
-- so GRANT or REVOKE there (anarchon_prune is revoked from PUBLIC).
