/*
 * amqp_lib.h — rabbitmq-c, loaded when a RabbitMQ store first connects
 * (core/dl.h says why: it brings OpenSSL with it, about 4 ms at every start
 * of a program that links it, even when the store is Redis).
 *
 * The store's files include this header, and no rabbitmq-c header after it:
 * the functions below resolve through the table amqp_lib_load fills, which
 * amqp_link_open calls before any of them; every other call is given the
 * connection it made.  amqp_cstring_bytes and amqp_empty_bytes are written
 * here instead: they are used before any connection, to build requests.
 */
#ifndef ANARCHON_AMQP_LIB_H
#define ANARCHON_AMQP_LIB_H

#include <string.h>

#include "anarchon.h"			/* build/config.h: where rabbitmq-c keeps its headers */

/* rabbitmq-c 0.12 moved its headers under rabbitmq-c/ and deprecated the old names. */
#ifdef AN_AMQP_HEADER_DIR
#include <rabbitmq-c/amqp.h>
#include <rabbitmq-c/tcp_socket.h>
#else
#include <amqp.h>
#include <amqp_tcp_socket.h>
#endif

#include "dl.h"

#define AN_AMQP_FUNCTIONS(X) \
	X(amqp_basic_publish) X(amqp_destroy_connection) X(amqp_error_string2) \
	X(amqp_get_frame_max) X(amqp_handle_input) X(amqp_maybe_release_buffers) \
	X(amqp_method_name) X(amqp_new_connection) X(amqp_send_header) \
	X(amqp_send_method) X(amqp_tcp_socket_new) X(amqp_tcp_socket_set_sockfd) \
	X(amqp_tune_connection)

AN_DL_TABLE(an_amqp_lib_table, AN_AMQP_FUNCTIONS);
extern an_amqp_lib_table an_amqp_lib;

/* Load rabbitmq-c once: AN_OK, or AN_E_CONFIG in err naming the package to install. */
an_error	amqp_lib_load(an_err *err);

static inline amqp_bytes_t
an_amqp_cstring_bytes(const char *s)
{
	amqp_bytes_t b = {strlen(s), (void *) s};

	return b;
}

#ifndef AN_AMQP_LIB_LOADER
#define amqp_cstring_bytes an_amqp_cstring_bytes
#define amqp_empty_bytes ((amqp_bytes_t) {0, NULL})
#define amqp_basic_publish (an_amqp_lib.amqp_basic_publish)
#define amqp_destroy_connection (an_amqp_lib.amqp_destroy_connection)
#define amqp_error_string2 (an_amqp_lib.amqp_error_string2)
#define amqp_get_frame_max (an_amqp_lib.amqp_get_frame_max)
#define amqp_handle_input (an_amqp_lib.amqp_handle_input)
#define amqp_maybe_release_buffers (an_amqp_lib.amqp_maybe_release_buffers)
#define amqp_method_name (an_amqp_lib.amqp_method_name)
#define amqp_new_connection (an_amqp_lib.amqp_new_connection)
#define amqp_send_header (an_amqp_lib.amqp_send_header)
#define amqp_send_method (an_amqp_lib.amqp_send_method)
#define amqp_tcp_socket_new (an_amqp_lib.amqp_tcp_socket_new)
#define amqp_tcp_socket_set_sockfd (an_amqp_lib.amqp_tcp_socket_set_sockfd)
#define amqp_tune_connection (an_amqp_lib.amqp_tune_connection)
#endif

#endif							/* ANARCHON_AMQP_LIB_H */
