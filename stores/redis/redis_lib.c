/*
 * redis_lib.c — the table of hiredis's functions, filled on first use
 * (redis_lib.h).
 */
#define AN_RDS_LIB_LOADER
#include "config.h"
#include "redis_lib.h"

an_rds_lib_table an_rds_lib;

AN_DL_FILLER(fill, an_rds_lib, AN_RDS_FUNCTIONS)

static an_dl_lib lib = {
	.soname = AN_HIREDIS_SONAME,
	.needed_for = "the Redis store (redis://, rediss://)",
	.package = AN_HIREDIS_PACKAGE,
	.fill = fill,
};

an_error
rds_lib_load(an_err *err)
{
	return an_dl_load(&lib, err);
}
