-- anarchon: one winner per job and scheduled slot.
--
-- This script is assembled from the pieces in pg/sql/, in the order of their
-- numbers.  The claim and its friends live in schema anarchon; the public
-- names (the extension's schema, public by default) call them.

\echo Use "CREATE EXTENSION anarchon" to load this file. \quit

CREATE SCHEMA anarchon;
COMMENT ON SCHEMA anarchon IS 'anarchon: runs of scheduled jobs and the functions that claim them';
GRANT USAGE ON SCHEMA anarchon TO PUBLIC;
