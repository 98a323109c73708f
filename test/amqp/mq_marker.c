/*
 * mq_marker.c — declare a queue as a later release's format marker would be,
 * from the shell, for the amqp and mixed suites, with the client library
 * alone (the store's own code is what the suites test).
 *
 *   mq-marker PORT VHOST declare QUEUE    declare QUEUE durable, classic;
 *                                         prints "declared"
 *
 * The broker is on 127.0.0.1, the user guest.  What a marker holds is
 * seen with rabbitmqctl list_queues.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* rabbitmq-c's headers, wherever this version keeps them; its own names, linked (not the hosts' table). */
#define AN_AMQP_LIB_LOADER
#include "amqp_link.h"
#include "../testutil.h"

static void
rpc_ok(amqp_connection_state_t c, const char *what)
{
	amqp_rpc_reply_t r = amqp_get_rpc_reply(c);

	if (r.reply_type != AMQP_RESPONSE_NORMAL)
		die(what, r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION ? amqp_error_string2(r.library_error) : "refused");
}

static amqp_connection_state_t
connect_to(int port, const char *vhost)
{
	amqp_connection_state_t c = amqp_new_connection();
	amqp_socket_t *s = amqp_tcp_socket_new(c);

	if (amqp_socket_open(s, "127.0.0.1", port) != AMQP_STATUS_OK)
		die("connect", "127.0.0.1");
	if (amqp_login(c, vhost, 0, 131072, 0, AMQP_SASL_METHOD_PLAIN, "guest", "guest").reply_type != AMQP_RESPONSE_NORMAL)
		die("login", vhost);
	amqp_channel_open(c, 1);
	rpc_ok(c, "channel.open");
	return c;
}

int
main(int argc, char **argv)
{
	amqp_table_entry_t e[1] = {
		{amqp_cstring_bytes("x-queue-type"), {AMQP_FIELD_KIND_UTF8, {.bytes = amqp_cstring_bytes("classic")}}},
	};
	amqp_table_t args = {1, e};
	amqp_connection_state_t c;

	if (argc != 5 || strcmp(argv[3], "declare") != 0)
	{
		fprintf(stderr, "usage: mq-marker PORT VHOST declare QUEUE\n");
		return 2;
	}
	c = connect_to(atoi(argv[1]), argv[2]);
	amqp_queue_declare(c, 1, amqp_cstring_bytes(argv[4]), 0, 1, 0, 0, args);
	rpc_ok(c, "queue.declare");
	puts("declared");
	amqp_connection_close(c, AMQP_REPLY_SUCCESS);
	amqp_destroy_connection(c);
	return 0;
}
