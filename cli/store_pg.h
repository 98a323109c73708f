/*
 * store_pg.h — the command's PostgreSQL store: a store URL postgresql://…
 * (or postgres://…) reaches a database with the anarchon extension through
 * libpq, and every method calls the extension's own SQL functions, so the
 * decision stays in that database, on its clock, under its rules (job
 * owners, limits).  The command treats it as one more store behind
 * core/store.h.
 */
#ifndef ANARCHON_CLI_STORE_PG_H
#define ANARCHON_CLI_STORE_PG_H

#include "store.h"

/* 1 when url names this store (postgresql:// or postgres://). */
int			an_cli_pg_url(const char *url);

extern const an_store_methods an_cli_pg_methods;

/*
 * `anarchon stats` with PostgreSQL: the server's anarchon_stats(), written
 * to out as tab-separated values under a header line (store_pg_stats.c).
 */
#include <stdio.h>
int			an_cli_pg_stats(an_store *st, FILE *out);

#endif							/* ANARCHON_CLI_STORE_PG_H */
