/*
 * mq_base.c — the baselines of the RabbitMQ and NATS bench rows: each
 * server's bare operation from C, with the client library alone.
 *
 *   mq-base amqp URL SECONDS ID LATFILE   declare a new durable plain queue,
 *                                         publish one persistent message into
 *                                         it on a confirm channel, wait for
 *                                         the ack (what a won claim costs)
 *   mq-base nats URL SECONDS ID LATFILE   a JetStream publish with a new
 *                                         Nats-Msg-Id into the file stream
 *                                         BASE (subjects base.>), wait for
 *                                         its acknowledgement
 *
 * Prints "COUNT ELAPSED_US" and writes each operation's latency (µs) to
 * LATFILE, like the claim clients of test/bench (test/redis/rbench.c).
 *
 *   mq-base nats-reset URL [STREAM...]    delete the streams BASE and STREAMs
 *                                         (the store's), so that each row of
 *                                         the bench starts from empty streams
 *
 *   mq-base returned URL                  for the RabbitMQ suite: publish with
 *                                         the store's own code (amqp_link.c)
 *                                         to a queue that does not exist and
 *                                         print "acked=N" (the broker returns
 *                                         the message, then acks it: N must
 *                                         be 0, a return is no win)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nats/nats.h>

/* rabbitmq-c's headers, wherever this version keeps them; its own names, linked (not the hosts' table). */
#define AN_AMQP_LIB_LOADER
#include "amqp_link.h"
#include "url.h"
#include "../testutil.h"

typedef void (*op_fn) (void *state, int id, long n);

static void
amqp_ok(amqp_rpc_reply_t r, const char *what)
{
	if (r.reply_type != AMQP_RESPONSE_NORMAL)
		die(what, r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION ? amqp_error_string2(r.library_error) : "refused");
}

static void
op_amqp(void *state, int id, long n)
{
	amqp_connection_state_t c = state;
	amqp_basic_properties_t props;
	amqp_frame_t f;
	char		q[64];

	snprintf(q, sizeof(q), "base.%d.%ld.%lld", id, n, (long long) mono_us());
	amqp_queue_declare(c, 1, amqp_cstring_bytes(q), 0, 1, 0, 0, amqp_empty_table);
	amqp_ok(amqp_get_rpc_reply(c), "queue.declare");
	memset(&props, 0, sizeof(props));
	props._flags = AMQP_BASIC_DELIVERY_MODE_FLAG;
	props.delivery_mode = 2;
	if (amqp_basic_publish(c, 1, amqp_empty_bytes, amqp_cstring_bytes(q), 1, 0, &props,
						   amqp_cstring_bytes("{\"job\":\"base\",\"slot\":1,\"token\":\"t\"}")) != AMQP_STATUS_OK)
		die("publish", "failed");
	for (;;)
	{
		if (amqp_simple_wait_frame(c, &f) != AMQP_STATUS_OK)
			die("confirm", "connection lost");
		if (f.frame_type == AMQP_FRAME_METHOD && f.payload.method.id == AMQP_BASIC_ACK_METHOD)
			break;
		if (f.frame_type == AMQP_FRAME_METHOD && f.payload.method.id == AMQP_BASIC_NACK_METHOD)
			die("confirm", "nacked");
	}
	amqp_maybe_release_buffers(c);
}

static void *
setup_amqp(const char *url)
{
	an_url		u;
	an_err		err;
	amqp_connection_state_t c = amqp_new_connection();
	amqp_socket_t *s = amqp_tcp_socket_new(c);

	if (an_url_parse(url, &u, &err) < 0)
		die("url", err.msg);
	if (amqp_socket_open(s, u.host, u.port ? u.port : 5672) != AMQP_STATUS_OK)
		die("connect", u.host);
	amqp_ok(amqp_login(c, u.path && *u.path ? u.path : "/", 0, 131072, 0, AMQP_SASL_METHOD_PLAIN,
					   u.user ? u.user : "guest", u.password ? u.password : "guest"), "login");
	amqp_channel_open(c, 1);
	amqp_ok(amqp_get_rpc_reply(c), "channel.open");
	amqp_confirm_select(c, 1);
	amqp_ok(amqp_get_rpc_reply(c), "confirm.select");
	an_url_free(&u);
	return c;
}

static void
op_nats(void *state, int id, long n)
{
	jsCtx	   *js = state;
	jsPubOptions o;
	jsPubAck   *pa = NULL;
	jsErrCode	jerr = 0;
	char		subj[64];
	char		msgid[64];
	const char *data = "{\"job\":\"base\",\"slot\":1,\"token\":\"t\"}";
	natsStatus	s;

	jsPubOptions_Init(&o);
	snprintf(subj, sizeof(subj), "base.%d.claims", id);
	snprintf(msgid, sizeof(msgid), "base-%d:%ld:%lld", id, n, (long long) mono_us());
	o.MsgId = msgid;
	o.MaxWait = 5000;
	s = js_Publish(&pa, js, subj, data, (int) strlen(data), &o, &jerr);
	if (s != NATS_OK)
		die("js_Publish", natsStatus_GetText(s));
	if (pa->Duplicate)
		die("js_Publish", "a new Msg-Id was taken for a duplicate");
	jsPubAck_Destroy(pa);
}

static void *
setup_nats(const char *url)
{
	natsConnection *nc = NULL;
	jsCtx	   *js = NULL;
	jsStreamConfig cfg;
	jsStreamInfo *si = NULL;
	jsErrCode	jerr = 0;
	const char *subjects[] = {"base.>"};

	if (natsConnection_ConnectTo(&nc, url) != NATS_OK || natsConnection_JetStream(&js, nc, NULL) != NATS_OK)
		die("connect", url);
	jsStreamConfig_Init(&cfg);
	cfg.Name = "BASE";
	cfg.Subjects = subjects;
	cfg.SubjectsLen = 1;
	cfg.Storage = js_FileStorage;
	cfg.Duplicates = (int64_t) 120000 * 1000000;
	/* Several clients create it at once: "already in use" with the same config is fine. */
	js_AddStream(&si, js, &cfg, NULL, &jerr);
	if (si)
		jsStreamInfo_Destroy(si);
	return js;
}

/* Delete BASE and the named streams; a stream that does not exist is fine. */
static int
nats_reset(const char *url, int n, char **names)
{
	natsConnection *nc = NULL;
	jsCtx	   *js = NULL;
	jsErrCode	jerr = 0;

	if (natsConnection_ConnectTo(&nc, url) != NATS_OK || natsConnection_JetStream(&js, nc, NULL) != NATS_OK)
		die("connect", url);
	for (int i = -1; i < n; i++)
	{
		natsStatus	s = js_DeleteStream(js, i < 0 ? "BASE" : names[i], NULL, &jerr);

		if (s != NATS_OK && s != NATS_NOT_FOUND)
			die("delete stream", natsStatus_GetText(s));
	}
	jsCtx_Destroy(js);
	natsConnection_Destroy(nc);
	return 0;
}

/* Publish through amqp_link to a queue nobody declared. */
static int
returned(const char *url)
{
	an_host		host = {.now_ms = host_now_ms};
	an_store	st;
	amqp_link	l;
	an_url		u;
	an_deadline d;
	an_err		err;
	char		queue[64];
	int			acked = -1;

	if (an_url_parse(url, &u, &err) < 0)
		die("url", err.msg);
	an_store_init(&st, NULL, &host);
	memset(&l, 0, sizeof(l));
	snprintf(l.who, sizeof(l.who), "RabbitMQ");
	snprintf(queue, sizeof(queue), "anarchon.nobody.%lld", (long long) mono_us());
	an_deadline_start(&d, 5000);
	{
		amqp_login_info li = {u.host, u.port ? u.port : 5672, "/", "guest", "guest", NULL, 0};

		if (amqp_link_open(&st, &l, &li, &d) != AN_OK || amqp_link_channel(&st, &l, &d) != AN_OK ||
			amqp_link_publish(&st, &l, &d, queue, "{}", &acked) != AN_OK)
			die("publish", st.err.msg);
	}
	printf("acked=%d\n", acked);
	amqp_link_close(&l);
	an_url_free(&u);
	return 0;
}

int
main(int argc, char **argv)
{
	void	   *state;
	op_fn		op;
	FILE	   *lat;
	int64_t		start,
				end;
	long		n = 0;
	int			id;

	if (argc == 3 && strcmp(argv[1], "returned") == 0)
		return returned(argv[2]);
	if (argc >= 3 && strcmp(argv[1], "nats-reset") == 0)
		return nats_reset(argv[2], argc - 3, argv + 3);
	if (argc != 6)
	{
		fprintf(stderr, "usage: mq-base amqp|nats URL SECONDS ID LATFILE, mq-base nats-reset URL [STREAM...], or mq-base returned URL\n");
		return 2;
	}
	id = atoi(argv[4]);
	if (strcmp(argv[1], "amqp") == 0)
		state = setup_amqp(argv[2]), op = op_amqp;
	else if (strcmp(argv[1], "nats") == 0)
		state = setup_nats(argv[2]), op = op_nats;
	else
		die("mode", argv[1]);
	if ((lat = fopen(argv[5], "w")) == NULL)
		die("latency file", argv[5]);
	start = mono_us();
	end = start + atol(argv[3]) * 1000000;
	for (int64_t t = start; t < end; n++)
	{
		int64_t		t1;

		op(state, id, n);
		t1 = mono_us();
		fprintf(lat, "%lld\n", (long long) (t1 - t));
		t = t1;
	}
	fclose(lat);
	printf("%ld %lld\n", n, (long long) (mono_us() - start));
	return 0;
}
