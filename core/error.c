/*
 * error.c — the one error value (an_err, anarchon.h): recording a message,
 * its detail and hint, and joining them for a host that shows one text.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "anarchon.h"

an_error
an_err_vfail(an_err *e, an_error code, const char *fmt, va_list ap)
{
	if (e == NULL)
		return code;
	/* A detail and a hint belong to one message: never leave older ones behind. */
	e->code = code;
	e->detail[0] = '\0';
	e->hint[0] = '\0';
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	return code;
}

/* One of e's texts (its detail or its hint), written; e's code unchanged. */
static an_error
vtext(an_err *e, char field[AN_ERRMAX], const char *fmt, va_list ap)
{
	vsnprintf(field, AN_ERRMAX, fmt, ap);
	return e->code;
}

an_error
an_err_vdetail(an_err *e, const char *fmt, va_list ap)
{
	return e ? vtext(e, e->detail, fmt, ap) : AN_OK;
}

an_error
an_err_vhint(an_err *e, const char *fmt, va_list ap)
{
	return e ? vtext(e, e->hint, fmt, ap) : AN_OK;
}

void
an_errf(an_err *e, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	(void) an_err_vfail(e, AN_E_INPUT, fmt, ap);
	va_end(ap);
}

an_error
an_err_fail(an_err *e, an_error code, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	code = an_err_vfail(e, code, fmt, ap);
	va_end(ap);
	return code;
}

an_error
an_err_detailf(an_err *e, const char *fmt,...)
{
	va_list		ap;
	an_error	code;

	va_start(ap, fmt);
	code = an_err_vdetail(e, fmt, ap);
	va_end(ap);
	return code;
}

an_error
an_err_hintf(an_err *e, const char *fmt,...)
{
	va_list		ap;
	an_error	code;

	va_start(ap, fmt);
	code = an_err_vhint(e, fmt, ap);
	va_end(ap);
	return code;
}

void
an_err_clear(an_err *e)
{
	e->code = AN_OK;
	e->msg[0] = '\0';
	e->detail[0] = '\0';
	e->hint[0] = '\0';
}

/* Append part to out (holding len bytes) after ". ", or " " when out ends a sentence. */
static size_t
append_part(char *out, size_t outlen, size_t len, const char *part)
{
	int			n;

	if (part[0] == '\0' || len + 1 >= outlen)
		return len;
	n = snprintf(out + len, outlen - len, "%s%s",
				 len > 0 && out[len - 1] == '.' ? " " : ". ", part);
	if (n < 0)
		return len;
	len += (size_t) n;
	return len < outlen ? len : outlen - 1;
}

const char *
an_err_text(const an_err *e, char *out, size_t outlen)
{
	int			n;
	size_t		len;

	if (outlen == 0)
		return out;
	n = snprintf(out, outlen, "%s", e->msg);
	len = n < 0 ? 0 : (size_t) n < outlen ? (size_t) n : outlen - 1;
	len = append_part(out, outlen, len, e->detail);
	(void) append_part(out, outlen, len, e->hint);
	return out;
}
