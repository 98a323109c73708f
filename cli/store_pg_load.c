/*
 * store_pg_load.c — the table of libpq's functions, filled on first use (store_pg_api.h
 * says why), by core/dl.c as every client library is.  The functions named
 * there are all in libpq 9.x and later.
 */
#define AN_PQ_LOADER
#include "dl.h"
#include "store_pg_api.h"

an_pq_api	an_pq;

AN_DL_FILLER(fill, an_pq, AN_PQ_FUNCTIONS)

/* libpq.so.5 is the library's soname since PostgreSQL 8.x; Debian's package is libpq5. */
static an_dl_lib lib = {
	.soname = "libpq.so.5",
	.needed_for = "the postgresql:// store",
	.package = "libpq5",
	.fill = fill,
};

int
an_pq_load(an_store *st)
{
	return an_dl_load(&lib, &st->err);
}
