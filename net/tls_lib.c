/*
 * tls_lib.c — the table of OpenSSL's functions, filled on first use
 * (tls_lib.h).  libssl's handle also finds libcrypto's functions: dlsym
 * searches a library's dependencies.
 */
#define AN_TLS_LIB_LOADER
#include "config.h"
#include "tls_lib.h"

an_tls_lib_table an_tls_lib;

AN_DL_FILLER(fill, an_tls_lib, AN_TLS_FUNCTIONS)

static an_dl_lib lib = {
	.soname = AN_SSL_SONAME,
	.needed_for = "TLS (rediss://, amqps://, tls:// and NATS nkeys)",
	.package = AN_SSL_PACKAGE,
	.fill = fill,
};

an_error
an_tls_lib_load(an_err *err)
{
	return an_dl_load(&lib, err);
}
