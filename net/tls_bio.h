/*
 * tls_bio.h — the socket under OpenSSL, written with MSG_NOSIGNAL.
 *
 * OpenSSL's own socket BIO writes with write(), and a write to a connection
 * the peer has reset raises SIGPIPE, which ends a host process that has not
 * ignored it (the sqlite3 shell, many C programs).  This BIO writes with
 * send(MSG_NOSIGNAL), as the plain sockets of sock.c do, so a reset
 * connection is an error, never a signal.
 */
#ifndef ANARCHON_TLS_BIO_H
#define ANARCHON_TLS_BIO_H

#include "tls_lib.h"

/* A BIO on fd that does not close it; NULL when out of memory. */
BIO		   *an_tls_bio_new(int fd);

#endif							/* ANARCHON_TLS_BIO_H */
