/*
 * dl.h — a client library loaded the first time a store needs it.
 *
 * A program that links a library pays for loading it at every start, used
 * or not: for the command, started by cron on every host for every job,
 * OpenSSL and rabbitmq-c were most of a run's CPU time.  So the stores'
 * client libraries are not linked: each has a table of the functions the
 * project calls, filled by dlopen of the library's soname (written by
 * configure into build/config.h) on first use, and the files that call the
 * library include the table's header instead of the library's own.  The
 * types and constants are still the library's headers'.
 *
 * A table's header lists its functions once, as an X macro; AN_DL_TABLE
 * declares the table, AN_DL_LIBRARY defines its loader.
 */
#ifndef ANARCHON_DL_H
#define ANARCHON_DL_H

#include "anarchon.h"

typedef struct an_dl_lib
{
	const char *soname;			/* what dlopen is given, e.g. "libssl.so.3" */
	const char *needed_for;		/* "TLS (rediss://, amqps://, tls://)" */
	const char *package;		/* the Debian package that ships it, for the hint ("": unknown) */
	/* Fill the table from handle: NULL, or the first function missing. */
	const char *(*fill) (void *handle);
	int			loaded;			/* set under the loader's lock; read atomically without it */
} an_dl_lib;

/*
 * Load lib once per process (any thread): AN_OK, or AN_E_CONFIG in err naming
 * the library, what needs it and the package to install.  A library once
 * loaded stays: a connection may use it at any later time.
 */
an_error	an_dl_load(an_dl_lib *lib, an_err *err);

/* The table's struct member for function f, typed by the library's own declaration. */
#define AN_DL_MEMBER_(f) __typeof__(f) *f;
#define AN_DL_TABLE(name, LIST) typedef struct name { LIST(AN_DL_MEMBER_) } name

/*
 * AN_DL_FILLER(fname, table, LIST) defines the fill function of an_dl_lib:
 * every function of LIST resolved into table, NULL or the first missing.
 */
#define AN_DL_RESOLVE_(f) \
	if ((*(void **) &an_dl_table_->f = an_dl_sym(an_dl_handle_, #f)) == NULL && an_dl_missing_ == NULL) \
		an_dl_missing_ = #f;
#define AN_DL_FILLER(fname, table, LIST) \
	static const char *fname(void *an_dl_handle_) \
	{ \
		const char *an_dl_missing_ = NULL; \
		__typeof__(table) *an_dl_table_ = &(table); \
		LIST(AN_DL_RESOLVE_) \
		return an_dl_missing_; \
	}

void	   *an_dl_sym(void *handle, const char *name);

/*
 * AN_DL_LIBRARY(load, table, LIST, soname, needed_for, package) defines a
 * library's whole loader: its table (declared extern by its header), the fill
 * function and an_error load(an_err *err), which loads it once.
 */
#define AN_DL_LIBRARY(load, table, LIST, soname_, needed_for_, package_) \
	__typeof__(table) table; \
	AN_DL_FILLER(load##_fill_, table, LIST) \
	static an_dl_lib load##_lib_ = {soname_, needed_for_, package_, load##_fill_, 0}; \
	an_error load(an_err *err) \
	{ \
		return an_dl_load(&load##_lib_, err); \
	}

#endif							/* ANARCHON_DL_H */
