/*
 * tls_lib.c — the table of OpenSSL's functions, filled on first use
 * (tls_lib.h).  libssl's handle also finds libcrypto's functions: dlsym
 * searches a library's dependencies.
 */
#define AN_TLS_LIB_LOADER
#include "config.h"
#include "tls_lib.h"

AN_DL_LIBRARY(an_tls_lib_load, an_tls_lib, AN_TLS_FUNCTIONS, AN_SSL_SONAME,
			  "TLS (rediss://, amqps://, tls:// and NATS nkeys)", AN_SSL_PACKAGE)
