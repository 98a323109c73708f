/*
 * errors.c — a store's error as a PostgreSQL error.
 *
 * Stores report failure as an an_error code plus a message (store.h); the
 * host turns that into an ereport with the SQLSTATE a client can act on:
 * retry on lock_not_available or connection_failure, fix its input on
 * invalid_parameter_value, and so on.
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
	an_error	code = st->err != AN_OK ? st->err : AN_E_INTERNAL;
	char		msg[AN_ERRMAX];

	memcpy(msg, st->errmsg, sizeof(msg));
	if (msg[0] == '\0')
		snprintf(msg, sizeof(msg), "store \"%s\" failed without saying why",
				 st->m ? st->m->name : "?");
	an_store_clear(st);

	/* A store gave up because a cancel is pending: let PostgreSQL say so. */
	if (code == AN_E_CANCELED)
		CHECK_FOR_INTERRUPTS();

	ereport(ERROR,
			(errcode(an_pg_sqlstate(code)),
			 errmsg("anarchon: %s", msg)));
}
