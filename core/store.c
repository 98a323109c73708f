/*
 * store.c — the small helpers every store implementation shares.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "store.h"

void
an_store_init(an_store *st, const an_store_methods *m, const an_host *host)
{
	memset(st, 0, sizeof(*st));
	st->m = m;
	st->host = host;
}

int
an_store_fail(an_store *st, an_error code, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(st->errmsg, sizeof(st->errmsg), fmt, ap);
	va_end(ap);
	st->err = code;
	return code;
}

void
an_store_clear(an_store *st)
{
	st->err = AN_OK;
	st->errmsg[0] = '\0';
}

int
an_store_interrupted(const an_store *st)
{
	return st->host && st->host->interrupted && st->host->interrupted(st->host->ctx);
}

int64_t
an_store_host_now(const an_store *st)
{
	return st->host->now_ms(st->host->ctx);
}
