/*
 * store_pg_load.c — the table of libpq's functions, filled on first use (store_pg_api.h
 * says why), by core/dl.c as every client library is.  The functions named
 * there are all in libpq 9.x and later.
 */
#define AN_PQ_LOADER
#include "dl.h"
#include "store_pg_api.h"

/* libpq.so.5 is the library's soname since PostgreSQL 8.x; Debian's package is libpq5. */
AN_DL_LIBRARY(an_pq_dl_load, an_pq, AN_PQ_FUNCTIONS, "libpq.so.5", "the postgresql:// store", "libpq5")

int
an_pq_load(an_store *st)
{
	return an_pq_dl_load(&st->err);
}
