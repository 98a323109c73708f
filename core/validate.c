/*
 * validate.c — the rules for job names, slots and tokens.
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
/*
 * A slot is a scheduled time.  No schedule is finer than a second, so a slot
 * that is not a whole second was read from a clock (now(), anarchon_now()):
 * two instances would never pass the same one, and each would win its own.
 * A slot below 10^11 ms (1973) was almost surely given in seconds.
 */
#define SLOT_RULE AN_SLOT_RULE
#define SLOT_FROM_CLOCK AN_SLOT_FROM_CLOCK
#define SLOT_IN_SECONDS "it looks like seconds: multiply by 1000"
/* Instants (the `at` of anarchon_slot) are any millisecond of the slot range. */
#define INSTANT_RULE "a slot is a whole number of milliseconds since 1970-01-01 UTC, from 0 to 253402300799999"

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
an_validate_job(const char *job, size_t len, an_err *err)
{
	char		what[16];

	if (job == NULL || len == 0)
	{
		an_errf(err, "job name is empty: %s", JOB_RULE);
		return AN_E_INPUT;
	}
	if (len > AN_JOB_MAX)
	{
		an_errf(err, "job name is %zu bytes long: %s", len, JOB_RULE);
		return AN_E_INPUT;
	}
	for (size_t i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) job[i];

		if (is_alnum(c) || (i > 0 && (c == '_' || c == '.' || c == '-')))
			continue;
		describe_byte(what, sizeof(what), c);
		an_errf(err, "job name has %s at position %zu: %s", what, i + 1, JOB_RULE);
		return AN_E_INPUT;
	}
	return AN_OK;
}

an_error
an_validate_token(const char *token, size_t len, an_err *err)
{
	char		what[16];

	if (token == NULL || len == 0)
	{
		an_errf(err, "token is empty: %s", TOKEN_RULE);
		return AN_E_INPUT;
	}
	if (len > AN_TOKEN_MAX)
	{
		an_errf(err, "token is %zu bytes long: %s", len, TOKEN_RULE);
		return AN_E_INPUT;
	}
	for (size_t i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) token[i];

		if (is_alnum(c) || c == '_' || c == '-')
			continue;
		describe_byte(what, sizeof(what), c);
		an_errf(err, "token has %s at position %zu: %s", what, i + 1, TOKEN_RULE);
		return AN_E_INPUT;
	}
	return AN_OK;
}

/*
 * The message names the broken part first and then the rule, so that a host
 * may show the part before the first ": " as the error and the rest as its
 * detail.
 */
an_error
an_validate_slot(int64_t slot, an_err *err)
{
	if (slot < 0 || slot > AN_SLOT_MAX)
		an_errf(err, "slot %lld is out of range: %s", (long long) slot, SLOT_RULE);
	else if (slot < AN_SLOT_MIN)
		an_errf(err, "slot %lld is below 100000000000: %s; %s", (long long) slot,
				SLOT_RULE, SLOT_IN_SECONDS);
	else if (slot % 1000 != 0)
		an_errf(err, "slot %lld is not a whole second: %s; %s", (long long) slot,
				SLOT_RULE, SLOT_FROM_CLOCK);
	else
		return AN_OK;
	return AN_E_INPUT;
}

an_error
an_validate_instant_arg(int64_t ms, an_err *err)
{
	an_error	rc = an_validate_instant(ms, err);

	if (rc == AN_OK && ms > 0 && ms < AN_SLOT_MIN)
	{
		an_errf(err, "instant %lld is below 100000000000 (1973-03-03): %s; %s", (long long) ms,
				"an instant is milliseconds since 1970-01-01 UTC, 0 or from 100000000000 to 253402300799999",
				SLOT_IN_SECONDS);
		return AN_E_INPUT;
	}
	return rc;
}

an_error
an_validate_instant(int64_t ms, an_err *err)
{
	if (ms < 0 || ms > AN_SLOT_MAX)
	{
		an_errf(err, "slot %lld is out of range: %s", (long long) ms, INSTANT_RULE);
		return AN_E_INPUT;
	}
	return AN_OK;
}

/*
 * A REAL argument as milliseconds: integral and within int64, else a message
 * in the words of `rule`.  The range and the rest of the rule are the
 * caller's.
 */
static an_error
double_to_ms(double v, int64_t *ms, const char *rule, const char *fraction_hint,
			 an_err *err)
{
	if (isnan(v) || isinf(v))
		an_errf(err, "slot is not a number: %s", rule);
	else if (v != floor(v))
		an_errf(err, "slot %.17g has a fraction: %s%s%s", v, rule,
				fraction_hint ? "; " : "", fraction_hint ? fraction_hint : "");
	/* 2^63 is the first double past INT64_MAX: the cast is defined below it. */
	else if (v < -9223372036854775808.0 || v >= 9223372036854775808.0)
		an_errf(err, "slot %.17g is out of range: %s", v, rule);
	else
	{
		*ms = (int64_t) v;
		return AN_OK;
	}
	return AN_E_INPUT;
}

an_error
an_validate_slot_double(double v, int64_t *slot, an_err *err)
{
	an_error	rc = double_to_ms(v, slot, SLOT_RULE, SLOT_FROM_CLOCK, err);

	return rc != AN_OK ? rc : an_validate_slot(*slot, err);
}

an_error
an_validate_instant_double(double v, int64_t *ms, an_err *err)
{
	an_error	rc = double_to_ms(v, ms, INSTANT_RULE, NULL, err);

	return rc != AN_OK ? rc : an_validate_instant_arg(*ms, err);
}
