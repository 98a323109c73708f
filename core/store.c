/*
 * store.c — the small helpers every store implementation shares: the error
 * recorded on a store, and the host's services.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "pause.h"
#include "store.h"

unsigned
an_store_admin_caps(const an_store_methods *m)
{
	const an_store_admin *a = AN_STORE_SINCE_admin <= m->version ? m->admin : NULL;
	unsigned	caps = m->version >= AN_STORE_SINCE_caps ? m->caps : 0;
	unsigned	have = 0;

	if (a != NULL)
		have = (a->pause && a->resume ? AN_CAP_PAUSE : 0) | (a->paused ? AN_CAP_PAUSED : 0) |
			(a->pauses ? AN_CAP_PAUSES : 0) | (a->prune ? AN_CAP_PRUNE : 0);
	/* Before version 10 a run-now was a method; such a table's claim knows no kind. */
	if (m->version < AN_STORE_SINCE_kind)
		caps &= ~AN_CAP_RUN_NOW;
	return caps & (~AN_CAP_ADMIN | have);
}

void
an_store_init(an_store *st, const an_store_methods *m, const an_host *host)
{
	memset(st, 0, sizeof(*st));
	st->m = m;
	st->host = host;
	/* A store made only to carry errors (a test tool's) may have no table yet. */
	st->caps = m != NULL ? an_store_admin_caps(m) : 0;
}

int
an_store_fail(an_store *st, an_error code, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	code = an_err_vfail(&st->err, code, fmt, ap);
	va_end(ap);
	return code;
}

int
an_store_detailf(an_store *st, const char *fmt,...)
{
	va_list		ap;
	an_error	code;

	va_start(ap, fmt);
	code = an_err_vdetail(&st->err, fmt, ap);
	va_end(ap);
	return code;
}

int
an_store_hintf(an_store *st, const char *fmt,...)
{
	va_list		ap;
	an_error	code;

	va_start(ap, fmt);
	code = an_err_vhint(&st->err, fmt, ap);
	va_end(ap);
	return code;
}

int
an_store_adopt(an_store *st, an_error code, const an_err *e)
{
	st->err = *e;
	st->err.code = code;
	return code;
}

void
an_store_clear(an_store *st)
{
	an_err_clear(&st->err);
}

int
an_store_check_url(an_store *st, const char *url)
{
	an_store_clear(st);
	if (AN_STORE_METHOD(st, check_url) == NULL)
		return AN_OK;
	return st->m->check_url(st, url);
}

int
an_store_interrupted(const an_store *st)
{
	return st->host && st->host->interrupted && st->host->interrupted(st->host->ctx);
}

const char *
an_store_setting(const an_store *st, const char *name)
{
	const char *spelt = NULL;

	if (st && st->host && st->host->setting_name)
		spelt = st->host->setting_name(st->host->ctx, name);
	return spelt ? spelt : name;
}

int64_t
an_store_host_now(const an_store *st)
{
	return st->host->now_ms(st->host->ctx);
}

void
an_store_saw_clock(an_store *st, int64_t store_ms, int64_t sent_ms, int64_t received_ms)
{
	an_stats_clock(st->stats, store_ms, sent_ms, received_ms);
}
