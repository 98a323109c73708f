/*
 * store_pg_load.c — the table of libpq's functions, filled on first use (store_pg_api.h
 * says why).  libpq.so.5 is the library's soname since PostgreSQL 8.x; the
 * functions named here are all in libpq 9.x and later.
 */
#define AN_PQ_LOADER
#include <dlfcn.h>

#include "store_pg_api.h"

#define AN_LIBPQ_SONAME "libpq.so.5"

an_pq_api	an_pq;

static int	loaded;

int
an_pq_load(an_store *st)
{
	void	   *lib;
	const char *missing = NULL;

	if (loaded)
		return AN_OK;
	if ((lib = dlopen(AN_LIBPQ_SONAME, RTLD_NOW | RTLD_LOCAL)) == NULL)
	{
		an_store_fail(st, AN_E_CONFIG, "cannot load libpq for postgresql:// stores: %s", dlerror());
		return an_store_hintf(st, "Install libpq (Debian: apt-get install libpq5).");
	}
#define AN_PQ_RESOLVE_(f) \
	if ((*(void **) &an_pq.f = dlsym(lib, #f)) == NULL && missing == NULL) \
		missing = #f;
	AN_PQ_FUNCTIONS(AN_PQ_RESOLVE_)
	if (missing)
	{
		dlclose(lib);
		return an_store_fail(st, AN_E_CONFIG, "the libpq found (%s) has no %s", AN_LIBPQ_SONAME, missing);
	}
	/* Kept for the life of the process: the store may reconnect at any time. */
	loaded = 1;
	return AN_OK;
}
