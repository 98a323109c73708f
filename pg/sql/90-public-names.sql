-- Unqualified names: for every anarchon.anarchon_* function, a function of the
-- same name and arguments in the extension's schema (public by default) that
-- calls it.  They are plain SQL functions, so the planner inlines them.  This
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
		 ORDER BY p.oid
	LOOP
		EXECUTE pg_catalog.format(
			'CREATE FUNCTION @extschema@.%I(%s) RETURNS %s LANGUAGE sql VOLATILE AS %L',
			f.proname,
			pg_catalog.pg_get_function_arguments(f.oid),
			pg_catalog.pg_get_function_result(f.oid),
			pg_catalog.format('SELECT anarchon.%I(%s)', f.proname,
				(SELECT pg_catalog.string_agg('$' || i, ', ')
				   FROM pg_catalog.generate_series(1, f.pronargs) AS i)));
	END LOOP;
END
$$;

-- Privileges stay on the anarchon.* functions: a wrapper runs as its caller,
-- so GRANT or REVOKE there (anarchon_prune is revoked from PUBLIC).
