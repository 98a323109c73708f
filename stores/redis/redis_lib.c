/*
 * redis_lib.c — the table of hiredis's functions, filled on first use
 * (redis_lib.h).
 */
#define AN_RDS_LIB_LOADER
#include "config.h"
#include "redis_lib.h"

AN_DL_LIBRARY(rds_lib_load, an_rds_lib, AN_RDS_FUNCTIONS, AN_HIREDIS_SONAME,
			  "the Redis store (redis://, rediss://)", AN_HIREDIS_PACKAGE)
