/*
 * amqp_link.c — a RabbitMQ connection whose waits for answers go through
 * the host's wait (an_wait_socket), bounded and cancellable (see
 * amqp_link.h).
 */
#include <string.h>
#include <sys/time.h>

#include "amqp_link.h"
#include "fork.h"
#include "sock.h"

/* Channels are used in turn up to this number (RabbitMQ's default channel_max is 2047). */
#define AMQP_LINK_CHANNELS 2000

static struct timeval
tv_ms(int64_t ms)
{
	struct timeval tv;

	tv.tv_sec = (time_t) (ms / 1000);
	tv.tv_usec = (suseconds_t) ((ms % 1000) * 1000);
	return tv;
}

/* Forget the connection without a handshake: its state is unknown. */
static void
drop(amqp_link *l)
{
	if (l->conn)
		amqp_destroy_connection(l->conn);
	l->conn = NULL;
	l->chan_open = 0;
}

/* A server's reply text, as printable "%.*s" arguments. */
#define TEXT(b) (int) ((b).len > 200 ? 200 : (b).len), (const char *) (b).bytes

static int
login_failed(an_store *st, amqp_link *l, amqp_rpc_reply_t r, const amqp_login_info *li,
			 const an_deadline *d)
{
	if (r.reply_type == AMQP_RESPONSE_SERVER_EXCEPTION && r.reply.id == AMQP_CONNECTION_CLOSE_METHOD)
	{
		amqp_connection_close_t *c = r.reply.decoded;

		if (c->reply_code == 403)
			return an_store_fail(st, AN_E_AUTH, "%s refused the login: wrong user name or password (%.*s)",
								 l->who, TEXT(c->reply_text));
		if (c->reply_code == 530)
			return an_store_fail(st, AN_E_CONFIG, "%s refused the virtual host \"%s\": it does not exist or the user may not use it (%.*s)",
								 l->who, li->vhost, TEXT(c->reply_text));
		return an_store_fail(st, AN_E_STORE, "%s closed the connection while logging in: %u %.*s",
							 l->who, c->reply_code, TEXT(c->reply_text));
	}
	if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
		r.library_error == AMQP_STATUS_TIMEOUT)
		return an_store_fail(st, AN_E_TIMEOUT, "%s did not complete the login within timeout_ms (%lld ms)",
							 l->who, (long long) d->timeout_ms);
	if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION && r.library_error == AMQP_STATUS_CONNECTION_CLOSED)
		return an_store_fail(st, AN_E_AUTH, "%s closed the connection while logging in (wrong user name or password?)", l->who);
	return an_store_fail(st, AN_E_CONNECT, "could not log in to %s: %s", l->who,
						 r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION ? amqp_error_string2(r.library_error) : "unexpected answer");
}

int
amqp_link_connected(amqp_link *l)
{
	if (l->conn && an_fork_foreign(l->pid))
		drop(l);				/* closes our copy of the socket only, sends nothing */
	return l->conn != NULL;
}

int
amqp_link_open(an_store *st, amqp_link *l, const amqp_login_info *li, const an_deadline *d)
{
	amqp_socket_t *sock;
	struct timeval tv;
	amqp_rpc_reply_t r;
	int			fd;
	int			rc;

	l->chan_open = 0;
	an_fork_own(&l->pid);
	l->conn = amqp_new_connection();
	sock = l->conn ? amqp_tcp_socket_new(l->conn) : NULL;
	if (sock == NULL)
	{
		drop(l);
		return an_store_fail(st, AN_E_NOMEM, "out of memory");
	}
	/*
	 * The TCP connect is ours, through the host's wait (a cancel ends it);
	 * rabbitmq-c is then handed the connected socket, which it owns and
	 * closes from here on.
	 */
	if ((rc = an_sock_connect(st, l->who, li->host, li->port, d, &fd)) != AN_OK)
	{
		drop(l);
		return rc;
	}
	amqp_tcp_socket_set_sockfd(sock, fd);

	/*
	 * The login is rabbitmq-c's own exchange: bounded by the handshake
	 * timeout (the time left), but not cut into cancellable slices.
	 * Heartbeats are off: between calls nobody would answer them, and a
	 * dead connection is found by the next call instead.
	 */
	tv = tv_ms(an_deadline_left(d) > 0 ? an_deadline_left(d) : 1);
	amqp_set_handshake_timeout(l->conn, &tv);
	amqp_set_rpc_timeout(l->conn, &tv);
	r = amqp_login(l->conn, li->vhost, 0, 131072, 0, AMQP_SASL_METHOD_PLAIN, li->user, li->password);
	if (r.reply_type != AMQP_RESPONSE_NORMAL)
	{
		rc = login_failed(st, l, r, li, d);
		drop(l);
		return rc;
	}
	return AN_OK;
}

/*
 * The next frame: rabbitmq-c reads it, but the wait for its bytes is
 * an_wait_socket's (the host's wait), unless rabbitmq-c already holds them.
 * A timeout, cancel or socket error drops the link.
 */
static int
next_frame(an_store *st, amqp_link *l, const an_deadline *d, const char *what, amqp_frame_t *f)
{
	int			rc;

	for (;;)
	{
		struct timeval tv = tv_ms(1);

		if (!amqp_frames_enqueued(l->conn) && !amqp_data_in_buffer(l->conn) &&
			(rc = an_wait_socket(st, d, l->who, what, amqp_get_sockfd(l->conn), 0)) != AN_OK)
		{
			drop(l);
			return rc;
		}
		rc = amqp_simple_wait_frame_noblock(l->conn, f, &tv);
		if (rc == AMQP_STATUS_OK)
			return AN_OK;
		if (rc != AMQP_STATUS_TIMEOUT)
		{
			drop(l);
			return an_store_fail(st, AN_E_CONNECT, "lost the connection to %s while waiting for %s: %s",
								 l->who, what, amqp_error_string2(rc));
		}
		/* Part of a frame came: wait for the rest (an_wait_socket checks the time left). */
	}
}

/* The broker closed the connection (connection.close): say why, then drop it. */
static int
connection_closed(an_store *st, amqp_link *l, const amqp_frame_t *f)
{
	amqp_connection_close_t *c = f->payload.method.decoded;
	amqp_connection_close_ok_t ok = {0};
	int			rc;

	rc = an_store_fail(st, AN_E_CONNECT, "%s closed the connection: %u %.*s", l->who,
					   c->reply_code, TEXT(c->reply_text));
	amqp_send_method(l->conn, 0, AMQP_CONNECTION_CLOSE_OK_METHOD, &ok);
	drop(l);
	return rc;
}

/* The broker closed our channel: acknowledge, keep the connection, report. */
static int
channel_closed(an_store *st, amqp_link *l, const amqp_frame_t *f, const char *what)
{
	amqp_channel_close_t *c = f->payload.method.decoded;
	amqp_channel_close_ok_t ok = {0};
	an_error	code;

	l->last_code = c->reply_code;
	code = c->reply_code == 406 ? AN_E_CONFIG : c->reply_code == 403 ? AN_E_AUTH : AN_E_STORE;
	an_store_fail(st, code, "%s refused %s: %u %.*s", l->who, what, c->reply_code, TEXT(c->reply_text));
	l->chan_open = 0;
	if (amqp_send_method(l->conn, f->channel, AMQP_CHANNEL_CLOSE_OK_METHOD, &ok) != AMQP_STATUS_OK)
		drop(l);
	return code;
}

/*
 * The next method on our channel.  Content frames (a basic.return's message)
 * and methods of other channels are passed over; connection.close and
 * channel.close end the wait with an error.
 */
static int
next_method(an_store *st, amqp_link *l, const an_deadline *d, const char *what, amqp_frame_t *f)
{
	for (;;)
	{
		if (next_frame(st, l, d, what, f) != AN_OK)
			return st->err;
		if (f->frame_type != AMQP_FRAME_METHOD)
			continue;
		if (f->channel == 0 && f->payload.method.id == AMQP_CONNECTION_CLOSE_METHOD)
			return connection_closed(st, l, f);
		if (f->channel != l->ch)
			continue;
		if (f->payload.method.id == AMQP_CHANNEL_CLOSE_METHOD)
			return channel_closed(st, l, f, what);
		return AN_OK;
	}
}

static int
send_method(an_store *st, amqp_link *l, amqp_channel_t ch, amqp_method_number_t method,
			void *args, const char *what)
{
	int			rc = amqp_send_method(l->conn, ch, method, args);

	if (rc == AMQP_STATUS_OK)
		return AN_OK;
	drop(l);
	return an_store_fail(st, AN_E_CONNECT, "lost the connection to %s while sending %s: %s",
						 l->who, what, amqp_error_string2(rc));
}

int
amqp_link_rpc(an_store *st, amqp_link *l, const an_deadline *d, const char *what,
			  amqp_method_number_t method, void *args, amqp_method_number_t expect, void **reply)
{
	amqp_frame_t f;

	l->last_code = 0;
	amqp_maybe_release_buffers(l->conn);
	if (send_method(st, l, l->ch, method, args, what) != AN_OK)
		return st->err;
	for (;;)
	{
		if (next_method(st, l, d, what, &f) != AN_OK)
			return st->err;
		if (f.payload.method.id == expect)
		{
			if (reply)
				*reply = f.payload.method.decoded;
			return AN_OK;
		}
		/* Anything else here is left over from an abandoned call: skip it. */
	}
}

int
amqp_link_channel(an_store *st, amqp_link *l, const an_deadline *d)
{
	amqp_channel_open_t open = {0};
	amqp_confirm_select_t select = {0};

	if (l->chan_open)
		return AN_OK;
	/* A fresh number: frames still in flight for a closed channel cannot confuse us. */
	l->ch = (amqp_channel_t) (l->ch % AMQP_LINK_CHANNELS + 1);
	if (amqp_link_rpc(st, l, d, "the channel opening", AMQP_CHANNEL_OPEN_METHOD, &open,
					  AMQP_CHANNEL_OPEN_OK_METHOD, NULL) != AN_OK ||
		amqp_link_rpc(st, l, d, "the switch to publisher confirms", AMQP_CONFIRM_SELECT_METHOD, &select,
					  AMQP_CONFIRM_SELECT_OK_METHOD, NULL) != AN_OK)
		return st->err;
	l->chan_open = 1;
	l->next_tag = 1;
	return AN_OK;
}

static int
covers(uint64_t tag, int multiple, uint64_t ours)
{
	return tag == ours || (multiple && tag >= ours);
}

int
amqp_link_publish(an_store *st, amqp_link *l, const an_deadline *d, const char *queue,
				  const char *body, int *acked)
{
	amqp_basic_properties_t props;
	uint64_t	tag = l->next_tag++;
	int			returned = 0;
	amqp_frame_t f;
	int			rc;

	*acked = 0;
	memset(&props, 0, sizeof(props));
	props._flags = AMQP_BASIC_DELIVERY_MODE_FLAG | AMQP_BASIC_CONTENT_TYPE_FLAG;
	props.delivery_mode = 2;	/* persistent: a restart keeps the claim */
	props.content_type = amqp_cstring_bytes("application/json");
	amqp_maybe_release_buffers(l->conn);
	/* mandatory: a message no queue takes comes back instead of being acked silently. */
	rc = amqp_basic_publish(l->conn, l->ch, amqp_empty_bytes, amqp_cstring_bytes(queue), 1, 0,
							&props, amqp_cstring_bytes(body));
	if (rc != AMQP_STATUS_OK)
	{
		drop(l);
		return an_store_fail(st, AN_E_CONNECT, "lost the connection to %s while publishing the claim: %s",
							 l->who, amqp_error_string2(rc));
	}
	for (;;)
	{
		if (next_method(st, l, d, "the claim's publish", &f) != AN_OK)
			return st->err;
		switch (f.payload.method.id)
		{
			case AMQP_BASIC_RETURN_METHOD:
				{
					amqp_basic_return_t *r = f.payload.method.decoded;

					if (r->routing_key.len == strlen(queue) &&
						memcmp(r->routing_key.bytes, queue, r->routing_key.len) == 0)
						returned = 1;
					break;
				}
			case AMQP_BASIC_ACK_METHOD:
				{
					amqp_basic_ack_t *a = f.payload.method.decoded;

					if (covers(a->delivery_tag, a->multiple, tag))
					{
						*acked = !returned;
						return AN_OK;
					}
					break;
				}
			case AMQP_BASIC_NACK_METHOD:
				{
					amqp_basic_nack_t *n = f.payload.method.decoded;

					if (covers(n->delivery_tag, n->multiple, tag))
						return AN_OK;
					break;
				}
			default:
				break;
		}
	}
}

void
amqp_link_close(amqp_link *l)
{
	amqp_connection_close_t c = {0};
	an_deadline d;
	amqp_frame_t f;

	if (!amqp_link_connected(l))
		return;
	/* A polite close, given a short while; the broker then logs no error. */
	c.reply_code = 200;
	c.reply_text = amqp_cstring_bytes("bye");
	an_deadline_start(&d, 200);
	if (amqp_send_method(l->conn, 0, AMQP_CONNECTION_CLOSE_METHOD, &c) == AMQP_STATUS_OK)
	{
		while (an_deadline_left(&d) > 0)
		{
			struct timeval tv = tv_ms(an_deadline_left(&d));

			if (amqp_simple_wait_frame_noblock(l->conn, &f, &tv) != AMQP_STATUS_OK)
				break;
			if (f.channel == 0 && f.frame_type == AMQP_FRAME_METHOD &&
				f.payload.method.id == AMQP_CONNECTION_CLOSE_OK_METHOD)
				break;
		}
	}
	drop(l);
}
