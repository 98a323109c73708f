-- The library's version, and the SQL objects' when they differ (pg/version.c):
-- '0.2.0', or '0.2.0 (SQL objects 0.1.0: run ALTER EXTENSION anarchon UPDATE)'
-- between a package upgrade and the update of this database's objects.
-- Every other function that reads the SQL objects refuses (SQLSTATE AN002)
-- while the two differ; this one never does.
CREATE FUNCTION anarchon.anarchon_version()
	RETURNS text
	AS 'MODULE_PATHNAME', 'anarchon_version'
	LANGUAGE C VOLATILE;
