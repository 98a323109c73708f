/*
 * dl.c — load a store's client library on first use (dl.h says why).
 *
 * One lock for every library: a load happens once per library and process,
 * and the SQLite extension may be called from several threads at once.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include "dl.h"

static pthread_mutex_t loading = PTHREAD_MUTEX_INITIALIZER;

void *
an_dl_sym(void *handle, const char *name)
{
	return dlsym(handle, name);
}

an_error
an_dl_load(an_dl_lib *lib, an_err *err)
{
	void	   *h;
	const char *missing;
	an_error	rc = AN_OK;

	if (__atomic_load_n(&lib->loaded, __ATOMIC_ACQUIRE))
		return AN_OK;
	pthread_mutex_lock(&loading);
	if (lib->loaded)
		;
	else if ((h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL)) == NULL)
	{
		const char *why = dlerror();
		size_t		n = strlen(lib->soname);

		/* glibc's text starts with the name again. */
		if (strncmp(why, lib->soname, n) == 0 && strncmp(why + n, ": ", 2) == 0)
			why += n + 2;
		rc = an_err_fail(err, AN_E_CONFIG, "cannot load %s, which %s needs: %s",
						 lib->soname, lib->needed_for, why);
		if (lib->package[0] != '\0')
			an_err_hintf(err, "Install %s (Debian: apt-get install %s).", lib->package, lib->package);
		else
			an_err_hintf(err, "Install the package that provides %s.", lib->soname);
	}
	else if ((missing = lib->fill(h)) != NULL)
	{
		/* Not closed: the table may hold some of its functions already. */
		rc = an_err_fail(err, AN_E_CONFIG, "the %s found has no function %s, which %s needs",
						 lib->soname, missing, lib->needed_for);
		an_err_hintf(err, "Install the release of %s that anarchon was built with.",
					 lib->package[0] != '\0' ? lib->package : lib->soname);
	}
	else
		__atomic_store_n(&lib->loaded, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&loading);
	return rc;
}
