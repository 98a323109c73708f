/*
 * errors.c — errors of stores and of core's validators as PostgreSQL errors.
 *
 * Stores report failure as an an_error code, a message and, where they can
 * say what to do, a hint (store.h); the host turns that into an ereport with
 * the SQLSTATE a client can act on (retry on lock_not_available or
 * connection_failure, fix its input on invalid_parameter_value, and so on)
 * and the hint as HINT.
 *
 * Core's validators (job, slot, token, settings) write an an_err whose
 * message is one text, "<what was wrong>: <the rule>", which SQLite shows as
 * it is.  PostgreSQL's style keeps
 * the primary message short, so here the rule becomes the DETAIL, as a
 * sentence: "job name has ' ' at position 2" with "A job name is 1 to 128
 * bytes of ...".
 */
#include "anarchon_pg.h"

#include "miscadmin.h"

int
an_pg_sqlstate(an_error code)
{
	switch (code)
	{
		case AN_E_INPUT:
		case AN_E_CONFIG:
			return ERRCODE_INVALID_PARAMETER_VALUE;
		case AN_E_BUSY:
			return ERRCODE_LOCK_NOT_AVAILABLE;
		case AN_E_TIMEOUT:
		case AN_E_CONNECT:
			return ERRCODE_CONNECTION_FAILURE;
		case AN_E_AUTH:
			return ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION;
		case AN_E_CANCELED:
			return ERRCODE_QUERY_CANCELED;
		case AN_E_UNSUPPORTED:
			return ERRCODE_FEATURE_NOT_SUPPORTED;
		case AN_E_STORE:
			return ERRCODE_EXTERNAL_ROUTINE_EXCEPTION;
		case AN_E_STATE:
			return ERRCODE_INVALID_TRANSACTION_STATE;
		case AN_E_NOMEM:
			return ERRCODE_OUT_OF_MEMORY;
		case AN_OK:
		case AN_E_INTERNAL:
			break;
	}
	return ERRCODE_INTERNAL_ERROR;
}

void
an_pg_raise(an_store *st)
{
	/* Copied out: the store is cleared for its next call before the longjmp. */
	an_err		e = st->err;
	an_error	code = e.code != AN_OK ? e.code : AN_E_INTERNAL;

	if (e.msg[0] == '\0')
		snprintf(e.msg, sizeof(e.msg), "store \"%s\" failed without saying why",
				 st->m ? st->m->name : "?");
	an_store_clear(st);

	/* A store gave up because a cancel is pending: let PostgreSQL say so. */
	if (code == AN_E_CANCELED)
		CHECK_FOR_INTERRUPTS();

	ereport(ERROR,
			(errcode(an_pg_sqlstate(code)),
			 errmsg("%s", e.msg),
			 e.detail[0] != '\0' ? errdetail("%s", e.detail) : 0,
			 e.hint[0] != '\0' ? errhint("%s", e.hint) : 0));
}

const char *
an_pg_sentence(const char *text, char *out, size_t outlen)
{
	size_t		len = strlen(text);

	if (len == 0)
		out[0] = '\0';
	else
		snprintf(out, outlen, "%c%s%s", pg_toupper((unsigned char) text[0]), text + 1,
				 text[len - 1] == '.' ? "" : ".");
	return out;
}

/*
 * Split err at its first ": " into the message and the rest, the rest as a
 * sentence into detail ("" when err has no ": ").
 */
static void
split_rule(const char *err, char *message, size_t msglen, char *detail, size_t detlen)
{
	const char *sep = strstr(err, ": ");
	size_t		n;

	detail[0] = '\0';
	if (sep == NULL || sep[2] == '\0')
	{
		strlcpy(message, err, msglen);
		return;
	}
	n = Min((size_t) (sep - err), msglen - 1);
	memcpy(message, err, n);
	message[n] = '\0';
	an_pg_sentence(sep + 2, detail, detlen);
}

void
an_pg_raise_rule(int sqlstate, const an_err *e)
{
	char		message[AN_ERRMAX];
	char		detail[AN_ERRMAX];
	char		hint[AN_ERRMAX];

	/* A layer that wrote its own detail has split the rule off already. */
	if (e->detail[0] != '\0')
	{
		strlcpy(message, e->msg, sizeof(message));
		an_pg_sentence(e->detail, detail, sizeof(detail));
	}
	else
		split_rule(e->msg, message, sizeof(message), detail, sizeof(detail));
	an_pg_sentence(e->hint, hint, sizeof(hint));
	ereport(ERROR,
			(errcode(sqlstate),
			 errmsg("%s", message),
			 detail[0] != '\0' ? errdetail("%s", detail) : 0,
			 hint[0] != '\0' ? errhint("%s", hint) : 0));
}
