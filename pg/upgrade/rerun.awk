# rerun.awk — the install pieces (pg/sql/NN-*.sql) as statements that may run
# on a database that already has some or all of their objects: the body of
# every generated upgrade script (pg/pg.mk).  Running them brings each object
# to its current definition and keeps the data and the object (its oid, its
# privileges granted since, the objects that depend on it):
#
#   CREATE FUNCTION | PROCEDURE | VIEW   -> CREATE OR REPLACE ...
#   CREATE SCHEMA | TABLE | SEQUENCE | [UNIQUE] INDEX name
#                                        -> ... IF NOT EXISTS name
#   CREATE TYPE name                     -> created when missing
#   CREATE DOMAIN name ... CHECK (...)   -> created when missing, else its
#                                           CHECK (name_check) replaced
#   CREATE FOREIGN DATA WRAPPER name     -> created when missing
#   \echo (psql's guard)                 -> left out: pg.mk writes the
#                                           upgrade script's own first
#   everything else (GRANT, REVOKE, COMMENT, pg_extension_config_dump, DO)
#                                        -> as it is: it may run again
#
# A statement that begins with CREATE and is none of the above stops the
# build, naming the piece and the line: give it a rule here, or write it in
# a form that may run again.  What cannot be done this way (a column added to
# an existing table, a function whose result or argument names changed, a
# table's CHECK) is a step in pg/upgrade/from-<version>.sql.

function fail(msg) {
	printf "%s:%d: %s\n", FILENAME, FNR, msg > "/dev/stderr"
	failed = 1
	exit 1
}

# Emit the statement in buf (without its final ';') guarded by `guard`.
function emit_guarded(   stmt, check) {
	stmt = buf
	sub(/;[ \t]*$/, "", stmt)
	printf "DO $an_rerun$\nBEGIN\n\tIF %s THEN\n\t\tEXECUTE $an_stmt$%s$an_stmt$;\n", guard, stmt
	if (kind == "DOMAIN" && match(stmt, /CHECK[ \t\n]*\(/)) {
		check = substr(stmt, RSTART)
		printf "\tELSE\n\t\tALTER DOMAIN %s DROP CONSTRAINT IF EXISTS %s_check;\n", name, short
		printf "\t\tEXECUTE $an_stmt$ALTER DOMAIN %s ADD CONSTRAINT %s_check %s$an_stmt$;\n", name, short, check
	}
	printf "\tEND IF;\nEND\n$an_rerun$;\n"
	wrapping = 0
}

function start(   n) {
	buf = $0
	short = name
	sub(/^.*\./, "", short)
	wrapping = 1
	if ($0 ~ /;[ \t]*$/)
		emit_guarded()
}

FNR == 1 { printf "\n-- %s\n", FILENAME }

wrapping {
	buf = buf "\n" $0
	if ($0 ~ /;[ \t]*$/)
		emit_guarded()
	next
}

/^\\echo / { next }

/^CREATE (SCHEMA|TABLE|SEQUENCE) / {
	sub(/^CREATE [A-Z]+ /, "& IF NOT EXISTS ")
	sub(/  IF/, " IF")
	print
	next
}

/^CREATE (UNIQUE )?INDEX / {
	sub(/INDEX /, "INDEX IF NOT EXISTS ")
	print
	next
}

/^CREATE (FUNCTION|PROCEDURE|VIEW) / {
	sub(/^CREATE /, "CREATE OR REPLACE ")
	print
	next
}

/^CREATE (TYPE|DOMAIN) / {
	kind = $2
	name = $3
	guard = "pg_catalog.to_regtype('" name "') IS NULL"
	start()
	next
}

/^CREATE FOREIGN DATA WRAPPER / {
	kind = "FDW"
	name = $5
	sub(/;$/, "", name)
	guard = "NOT EXISTS (SELECT FROM pg_catalog.pg_foreign_data_wrapper WHERE fdwname = '" name "')"
	start()
	next
}

/^CREATE / { fail("a CREATE that rerun.awk cannot make re-runnable: " $0) }

{ print }

END {
	if (!failed && wrapping)
		fail("a statement that does not end")
}
