-- catalog.sql — every catalog fact of the extension anarchon in this
-- database, one line each, in an order that does not depend on oids: what an
-- update must leave exactly as a fresh CREATE EXTENSION makes it
-- (test/upgrade/run.sh diffs two databases' lines).
\pset format unaligned
\pset tuples_only on
\pset null '<null>'
SET search_path = pg_catalog;
CREATE TEMP VIEW m AS
	SELECT d.classid, d.objid, d.objsubid
	  FROM pg_depend d JOIN pg_extension e ON d.refobjid = e.oid
	 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e' AND e.extname = 'anarchon';

SELECT 'extension', extversion, extrelocatable, n.nspname,
	(SELECT string_agg(c::regclass::text, ',' ORDER BY c::regclass::text) FROM unnest(extconfig) c),
	array_to_string(extcondition, ',')
  FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE extname = 'anarchon';

SELECT 'member', pg_describe_object(classid, objid, objsubid) FROM m ORDER BY 2;

SELECT 'schema', nspname, pg_get_userbyid(nspowner), nspacl
  FROM pg_namespace WHERE nspname = 'anarchon';

SELECT 'relation', c.oid::regclass::text, c.relkind, pg_get_userbyid(c.relowner), c.relacl,
	c.relpersistence, c.reloptions, c.relhasindex, c.relrowsecurity
  FROM pg_class c WHERE c.relnamespace = 'anarchon'::regnamespace ORDER BY 2;

SELECT 'column', c.oid::regclass::text, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod),
	a.attnotnull, pg_get_expr(ad.adbin, ad.adrelid), a.attidentity, a.attgenerated, a.attacl,
	a.attcollation::regcollation
  FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
  LEFT JOIN pg_attrdef ad ON ad.adrelid = c.oid AND ad.adnum = a.attnum
 WHERE c.relnamespace = 'anarchon'::regnamespace AND a.attnum > 0 AND NOT a.attisdropped
 ORDER BY 2, 3;

SELECT 'constraint', coalesce(conrelid::regclass::text, contypid::regtype::text), conname, contype,
	pg_get_constraintdef(oid), convalidated, condeferrable
  FROM pg_constraint WHERE connamespace = 'anarchon'::regnamespace ORDER BY 2, 3;

SELECT 'index', indexrelid::regclass::text, pg_get_indexdef(indexrelid), i.indisprimary, i.indisunique
  FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
 WHERE c.relnamespace = 'anarchon'::regnamespace ORDER BY 2;

SELECT 'sequence', seqrelid::regclass::text, format_type(seqtypid, NULL), seqstart, seqincrement,
	seqmax, seqmin, seqcache, seqcycle
  FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid
 WHERE c.relnamespace = 'anarchon'::regnamespace ORDER BY 2;

SELECT 'view', c.oid::regclass::text, pg_get_viewdef(c.oid)
  FROM pg_class c WHERE c.relnamespace = 'anarchon'::regnamespace AND c.relkind = 'v' ORDER BY 2;

SELECT 'type', t.oid::regtype::text, t.typtype, pg_get_userbyid(t.typowner), t.typacl,
	format_type(t.typbasetype, t.typtypmod), t.typnotnull, t.typdefault
  FROM pg_type t WHERE t.typnamespace = 'anarchon'::regnamespace ORDER BY 2;

SELECT 'function', p.oid::regprocedure::text, p.prokind, pg_get_function_arguments(p.oid),
	pg_get_function_result(p.oid), l.lanname, p.provolatile, p.proisstrict, p.prosecdef,
	p.proleakproof, p.proparallel, p.procost, p.prorows, p.proconfig, p.proretset,
	pg_get_userbyid(p.proowner), p.proacl, p.probin, md5(p.prosrc), p.prosrc
  FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
 WHERE p.oid IN (SELECT objid FROM m WHERE classid = 'pg_proc'::regclass)
    OR p.pronamespace = 'anarchon'::regnamespace
 ORDER BY 2;

SELECT 'fdw', w.fdwname, w.fdwvalidator::regprocedure, w.fdwhandler, pg_get_userbyid(w.fdwowner),
	w.fdwacl, w.fdwoptions
  FROM pg_foreign_data_wrapper w WHERE w.fdwname = 'anarchon';

SELECT 'comment', pg_describe_object(m.classid, m.objid, m.objsubid),
	obj_description(m.objid, (SELECT relname FROM pg_class WHERE oid = m.classid))
  FROM m ORDER BY 2;

SELECT 'init_privs', pg_describe_object(i.classoid, i.objoid, i.objsubid), i.privtype, i.initprivs
  FROM pg_init_privs i
 WHERE (i.classoid, i.objoid) IN (SELECT classid, objid FROM m)
    OR (i.classoid = 'pg_class'::regclass AND i.objoid IN
		(SELECT oid FROM pg_class WHERE relnamespace = 'anarchon'::regnamespace))
 ORDER BY 2, 3;
