/*
 * redis_lib.h — hiredis, loaded when a Redis store first connects or sends
 * (core/dl.h says why).  The store uses only its command formatter and its
 * reply reader; the socket is the store's own (redis_conn.c).
 *
 * The store's files include this header, and no hiredis header after it:
 * the functions below resolve through the table rds_lib_load fills.  A
 * reply or a reader exists only once hiredis made it, so freeing NULL is
 * the one call that can come first: it is answered here.
 */
#ifndef ANARCHON_REDIS_LIB_H
#define ANARCHON_REDIS_LIB_H

#include <hiredis/hiredis.h>

#include "dl.h"

#define AN_RDS_FUNCTIONS(X) \
	X(freeReplyObject) X(redisFormatCommandArgv) X(redisReaderCreate) \
	X(redisReaderFeed) X(redisReaderFree) X(redisReaderGetReply)

AN_DL_TABLE(an_rds_lib_table, AN_RDS_FUNCTIONS);
extern an_rds_lib_table an_rds_lib;

/* Load hiredis once: AN_OK, or AN_E_CONFIG in err naming the package to install. */
an_error	rds_lib_load(an_err *err);

static inline void
an_rds_free_reply(void *reply)
{
	if (reply != NULL)
		an_rds_lib.freeReplyObject(reply);
}

static inline void
an_rds_reader_free(redisReader *r)
{
	if (r != NULL)
		an_rds_lib.redisReaderFree(r);
}

#ifndef AN_RDS_LIB_LOADER
#define freeReplyObject an_rds_free_reply
#define redisReaderFree an_rds_reader_free
#define redisFormatCommandArgv (an_rds_lib.redisFormatCommandArgv)
#define redisReaderCreate (an_rds_lib.redisReaderCreate)
#define redisReaderFeed (an_rds_lib.redisReaderFeed)
#define redisReaderGetReply (an_rds_lib.redisReaderGetReply)
#endif

#endif							/* ANARCHON_REDIS_LIB_H */
