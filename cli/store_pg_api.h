/*
 * store_pg_api.h — libpq, loaded when a postgresql:// store is first opened.
 *
 * libpq brings some twenty libraries with it (Kerberos, LDAP, ...), and a
 * process that links it pays for loading them at every start: several
 * milliseconds, on every host, at every cron tick, even when the store is
 * Redis.  So the command does not link libpq; the PostgreSQL store's files
 * include this header instead of libpq-fe.h, and its names resolve through
 * a table filled by dlopen("libpq.so.5") on first use (store_pg_load.c).  The
 * types and constants are libpq-fe.h's own.
 */
#ifndef ANARCHON_CLI_STORE_PG_API_H
#define ANARCHON_CLI_STORE_PG_API_H

#include <libpq-fe.h>

#include "dl.h"
#include "store.h"

/* Every libpq function the store calls. */
#define AN_PQ_FUNCTIONS(X) \
	X(PQcancel) \
	X(PQclear) \
	X(PQconnectPoll) \
	X(PQconnectStartParams) \
	X(PQconnectionNeedsPassword) \
	X(PQconninfoFree) \
	X(PQconninfoParse) \
	X(PQconsumeInput) \
	X(PQdb) \
	X(PQerrorMessage) \
	X(PQfinish) \
	X(PQflush) \
	X(PQfnumber) \
	X(PQfreeCancel) \
	X(PQfreemem) \
	X(PQgetCancel) \
	X(PQgetResult) \
	X(PQgetisnull) \
	X(PQgetvalue) \
	X(PQisBusy) \
	X(PQnfields) \
	X(PQntuples) \
	X(PQresultErrorField) \
	X(PQresultErrorMessage) \
	X(PQresultStatus) \
	X(PQsendQueryParams) \
	X(PQsetNoticeReceiver) \
	X(PQsetnonblocking) \
	X(PQsocket) \
	X(PQstatus)

AN_DL_TABLE(an_pq_api, AN_PQ_FUNCTIONS);

extern an_pq_api an_pq;

/*
 * Load libpq once: AN_OK, or AN_E_CONFIG on st with what to install.  Every
 * entry point of the store calls it before any PQ function.
 */
int			an_pq_load(an_store *st);
an_error	an_pq_dl_load(an_err *err);	/* the same, for store_pg_load.c's loader */

#ifndef AN_PQ_LOADER
#define PQcancel (an_pq.PQcancel)
#define PQclear (an_pq.PQclear)
#define PQconnectPoll (an_pq.PQconnectPoll)
#define PQconnectStartParams (an_pq.PQconnectStartParams)
#define PQconnectionNeedsPassword (an_pq.PQconnectionNeedsPassword)
#define PQconninfoFree (an_pq.PQconninfoFree)
#define PQconninfoParse (an_pq.PQconninfoParse)
#define PQconsumeInput (an_pq.PQconsumeInput)
#define PQdb (an_pq.PQdb)
#define PQerrorMessage (an_pq.PQerrorMessage)
#define PQfinish (an_pq.PQfinish)
#define PQflush (an_pq.PQflush)
#define PQfnumber (an_pq.PQfnumber)
#define PQfreeCancel (an_pq.PQfreeCancel)
#define PQfreemem (an_pq.PQfreemem)
#define PQgetCancel (an_pq.PQgetCancel)
#define PQgetResult (an_pq.PQgetResult)
#define PQgetisnull (an_pq.PQgetisnull)
#define PQgetvalue (an_pq.PQgetvalue)
#define PQisBusy (an_pq.PQisBusy)
#define PQnfields (an_pq.PQnfields)
#define PQntuples (an_pq.PQntuples)
#define PQresultErrorField (an_pq.PQresultErrorField)
#define PQresultErrorMessage (an_pq.PQresultErrorMessage)
#define PQresultStatus (an_pq.PQresultStatus)
#define PQsendQueryParams (an_pq.PQsendQueryParams)
#define PQsetNoticeReceiver (an_pq.PQsetNoticeReceiver)
#define PQsetnonblocking (an_pq.PQsetnonblocking)
#define PQsocket (an_pq.PQsocket)
#define PQstatus (an_pq.PQstatus)
#endif

#endif							/* ANARCHON_CLI_STORE_PG_API_H */
