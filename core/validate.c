/*
 * validate.c — the rules for job names, slots and tokens (DESIGN §2).
 *
 * One implementation, so that every store refuses exactly the same input with
 * exactly the same words.  The rules are also what makes a job name safe to
 * embed in a Redis key, a RabbitMQ queue name or (with '.' encoded) a NATS
 * subject.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "anarchon.h"

#define JOB_RULE "a job name is 1 to 128 bytes of letters, digits, '_', '.' and '-', starting with a letter or digit"
#define TOKEN_RULE "a token is 1 to 64 bytes of letters, digits, '_' and '-'"
#define SLOT_RULE "a slot is a whole number of milliseconds since 1970-01-01 UTC, from 0 to 253402300799999"

void
an_errf(char *err, size_t errlen, const char *fmt,...)
{
	va_list		ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static int
is_alnum(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Describe byte c at position pos for an error message, printable or not. */
static void
describe_byte(char *buf, size_t len, unsigned char c)
{
	if (c >= 0x21 && c <= 0x7e && c != '"')
		snprintf(buf, len, "'%c'", c);
	else
		snprintf(buf, len, "byte 0x%02x", c);
}

an_error
an_validate_job(const char *job, size_t len, char *err, size_t errlen)
{
	char		what[16];

	if (job == NULL || len == 0)
	{
		an_errf(err, errlen, "job name is empty: %s", JOB_RULE);
		return AN_E_INPUT;
	}
	if (len > AN_JOB_MAX)
	{
		an_errf(err, errlen, "job name is %zu bytes long: %s", len, JOB_RULE);
		return AN_E_INPUT;
	}
	for (size_t i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) job[i];

		if (is_alnum(c) || (i > 0 && (c == '_' || c == '.' || c == '-')))
			continue;
		describe_byte(what, sizeof(what), c);
		an_errf(err, errlen, "job name has %s at position %zu: %s", what, i + 1, JOB_RULE);
		return AN_E_INPUT;
	}
	return AN_OK;
}

an_error
an_validate_token(const char *token, size_t len, char *err, size_t errlen)
{
	char		what[16];

	if (token == NULL || len == 0)
	{
		an_errf(err, errlen, "token is empty: %s", TOKEN_RULE);
		return AN_E_INPUT;
	}
	if (len > AN_TOKEN_MAX)
	{
		an_errf(err, errlen, "token is %zu bytes long: %s", len, TOKEN_RULE);
		return AN_E_INPUT;
	}
	for (size_t i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) token[i];

		if (is_alnum(c) || c == '_' || c == '-')
			continue;
		describe_byte(what, sizeof(what), c);
		an_errf(err, errlen, "token has %s at position %zu: %s", what, i + 1, TOKEN_RULE);
		return AN_E_INPUT;
	}
	return AN_OK;
}

an_error
an_validate_slot(int64_t slot, char *err, size_t errlen)
{
	if (slot < 0 || slot > AN_SLOT_MAX)
	{
		an_errf(err, errlen, "slot %lld is out of range: %s", (long long) slot, SLOT_RULE);
		return AN_E_INPUT;
	}
	return AN_OK;
}

an_error
an_validate_slot_double(double v, int64_t *slot, char *err, size_t errlen)
{
	if (isnan(v) || isinf(v))
	{
		an_errf(err, errlen, "slot is not a number: %s", SLOT_RULE);
		return AN_E_INPUT;
	}
	if (v != floor(v))
	{
		an_errf(err, errlen, "slot %.17g has a fraction: %s", v, SLOT_RULE);
		return AN_E_INPUT;
	}
	if (v < 0 || v > (double) AN_SLOT_MAX)
	{
		an_errf(err, errlen, "slot %.17g is out of range: %s", v, SLOT_RULE);
		return AN_E_INPUT;
	}
	*slot = (int64_t) v;
	return AN_OK;
}
