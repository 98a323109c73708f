/*
 * amqp_link.c — a RabbitMQ connection whose waits go through the host's
 * wait (an_conn, an_wait_socket), bounded and cancellable, plain or TLS
 * (see amqp_link.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "amqp_link.h"

/* Channels are used in turn up to this number (RabbitMQ's default channel_max is 2047). */
#define AMQP_LINK_CHANNELS 2000

/*
 * Forget the connection without a handshake: its state is unknown, or it is
 * a parent's (nothing is sent on it, no TLS close alert either).
 */
static void
drop(amqp_link *l)
{
	if (l->conn)
	{
		amqp_destroy_connection(l->conn);	/* closes rabbitmq-c's end of the pair */
		if (l->feed >= 0)
			close(l->feed);
		an_conn_close(&l->net, 0);
	}
	l->feed = -1;
	l->conn = NULL;
	l->chan_open = 0;
	free(l->in);
	l->in = NULL;
	l->in_len = l->in_pos = 0;
}

/* A server's reply text, as printable "%.*s" arguments. */
/* A reply text is a shortstr: 255 bytes at most, all of it kept (a 406 names both values at its end). */
#define TEXT(b) (int) ((b).len > 255 ? 255 : (b).len), (const char *) (b).bytes

/* A frame's header: type (1), channel (2), payload size (4); the frame-end octet follows the payload. */
#define FRAME_HEAD 7

/*
 * The server broke AMQP 0-9-1: the connection's state is unknown, so it is
 * dropped, and the error (AN_E_STORE) says what came instead of `what`.
 */
static int	protocol_fault(an_store *st, amqp_link *l, const char *what, const char *fmt, ...)
			__attribute__((format(printf, 4, 5)));

static int
protocol_fault(an_store *st, amqp_link *l, const char *what, const char *fmt, ...)
{
	char		sent[256];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(sent, sizeof(sent), fmt, ap);
	va_end(ap);
	drop(l);
	return an_store_fail(st, AN_E_STORE, "%s broke the AMQP 0-9-1 protocol while %s was awaited: it sent %s",
						 l->who, what, sent);
}

/* The most a frame may take now: the frame_max agreed at login (before it, ours). */
static size_t
frame_max(const amqp_link *l)
{
	int			m = amqp_get_frame_max(l->conn);

	return m > 0 && m < AMQP_LINK_FRAME_MAX ? (size_t) m : AMQP_LINK_FRAME_MAX;
}

/*
 * Is a whole frame at the start of l->in?  *len is its length, or 0 when
 * more bytes are needed.  Its header is judged as soon as it is there, so a
 * frame that announces more than frame_max is refused before any of its
 * payload is read.
 */
static int
whole_frame(an_store *st, amqp_link *l, const char *what, size_t *len)
{
	const unsigned char *b = l->in + l->in_pos;
	size_t		have = l->in_len - l->in_pos;
	uint64_t	size;

	*len = 0;
	if (have < FRAME_HEAD)
		return AN_OK;
	size = (uint64_t) b[3] << 24 | (uint64_t) b[4] << 16 | (uint64_t) b[5] << 8 | b[6];
	/* A TLS record (alert or handshake, version 3.x): amqp:// sent to a TLS port. */
	if ((b[0] == 0x15 || b[0] == 0x16) && b[1] == 0x03 && l->net.tls == NULL)
	{
		drop(l);
		an_store_fail(st, AN_E_CONNECT, "%s answered in TLS, not in plain AMQP", l->who);
		an_store_hintf(st, "Use amqps:// for a TLS port (RabbitMQ's is 5671 by default).");
		return AN_E_CONNECT;
	}
	if (b[0] != AMQP_FRAME_METHOD && b[0] != AMQP_FRAME_HEADER && b[0] != AMQP_FRAME_BODY &&
		b[0] != AMQP_FRAME_HEARTBEAT)
		return protocol_fault(st, l, what, "a frame of type %u; AMQP 0-9-1 has types 1, 2, 3 and 8 only",
							  (unsigned) b[0]);
	if (size + FRAME_HEAD + 1 > frame_max(l))
		return protocol_fault(st, l, what, "a frame announcing %llu bytes, more than the frame_max of %zu bytes agreed at login",
							  (unsigned long long) size, frame_max(l));
	if (have < size + FRAME_HEAD + 1)
		return AN_OK;
	if (b[FRAME_HEAD + size] != AMQP_FRAME_END)
		return protocol_fault(st, l, what, "a frame that ends with 0x%02X, not with the frame-end octet 0xCE",
							  (unsigned) b[FRAME_HEAD + size]);
	*len = (size_t) size + FRAME_HEAD + 1;
	return AN_OK;
}

/*
 * The next frame, heartbeats passed over.  The socket is read here, never
 * by rabbitmq-c: the deadline and the host's cancel are asked before every
 * read (an_wait_socket), bytes waiting or not, so a server that never stops
 * sending still ends the wait in time.  A frame is handed to rabbitmq-c
 * whole, once checked (whole_frame), and decoded into its pools, which are
 * emptied first: the frame before it is no longer needed, and a flood of
 * frames the caller passes over keeps one frame's memory at a time.  A
 * timeout, cancel or socket error drops the link.
 */
static int
next_frame(an_store *st, amqp_link *l, const an_deadline *d, const char *what, amqp_frame_t *f)
{
	l->peer_closed = 0;
	for (;;)
	{
		size_t		len;
		size_t		got;
		int			rc;

		if (whole_frame(st, l, what, &len) != AN_OK)
			return st->err.code;
		if (len > 0)
		{
			amqp_bytes_t frame = {len, l->in + l->in_pos};

			amqp_maybe_release_buffers(l->conn);
			rc = amqp_handle_input(l->conn, frame, f);
			if (rc < 0 || (size_t) rc != len)
				return protocol_fault(st, l, what, "a frame that could not be decoded (%s)",
									  rc < 0 ? amqp_error_string2(rc) : "read in part");
			l->in_pos += len;
			if (f->frame_type == AMQP_FRAME_HEARTBEAT)
				continue;
			return AN_OK;
		}
		/* The part of a frame left over goes first: a whole frame always fits. */
		l->in_len -= l->in_pos;
		memmove(l->in, l->in + l->in_pos, l->in_len);
		l->in_pos = 0;
		rc = an_conn_recv(st, l->who, &l->net, (char *) l->in + l->in_len,
						  AMQP_LINK_FRAME_MAX - l->in_len, &got, d, what);
		if (rc != AN_OK)
		{
			/* an_conn says so in these words, in plain and in TLS alike */
			l->peer_closed = rc == AN_E_CONNECT && strstr(st->err.msg, "the server closed it") != NULL;
			drop(l);
			return rc;
		}
		l->in_len += got;
	}
}

/*
 * Forward what rabbitmq-c just wrote into its end of the pair to the broker,
 * within the deadline.  Called after every rabbitmq-c call that sends: what
 * one call sends (a few small frames) fits in the pair's buffer, so
 * rabbitmq-c's own write never waits.
 */
static int
flush(an_store *st, amqp_link *l, const an_deadline *d, const char *what)
{
	char		buf[8192];

	for (;;)
	{
		ssize_t		n = recv(l->feed, buf, sizeof(buf), MSG_DONTWAIT);

		if (n > 0)
		{
			if (an_conn_send(st, l->who, &l->net, buf, (size_t) n, d, what) != AN_OK)
			{
				drop(l);
				return st->err.code;
			}
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return AN_OK;
		drop(l);
		return an_store_fail(st, AN_E_CONNECT, "lost the connection to %s while sending %s: %s",
							 l->who, what, n < 0 ? strerror(errno) : "the local pipe closed");
	}
}

/* After rabbitmq-c encoded something to send (status: its answer): send it. */
static int
sent(an_store *st, amqp_link *l, int status, const an_deadline *d, const char *what)
{
	if (status == AMQP_STATUS_OK)
		return flush(st, l, d, what);
	drop(l);
	return an_store_fail(st, AN_E_CONNECT, "lost the connection to %s while sending %s: %s",
						 l->who, what, amqp_error_string2(status));
}

/* The server's connection.close during the login, or its closing the socket. */
static int
login_failed(an_store *st, amqp_link *l, const amqp_connection_close_t *c, const amqp_login_info *li)
{
	if (c == NULL)
		return an_store_fail(st, AN_E_AUTH, "%s closed the connection while logging in (%s?)", l->who,
							 li->external ? "no user for the client certificate" : "wrong user name or password");
	if (c->reply_code == 403 && li->external)
	{
		an_store_fail(st, AN_E_AUTH, "%s refused the login with the client certificate (%.*s)",
					  l->who, TEXT(c->reply_text));
		an_store_hintf(st, "With auth_mechanism=external the user is the certificate's subject (its CN, when the broker's ssl_cert_login_from is common_name): the broker needs a user of that name with access to the virtual host.");
		return AN_E_AUTH;
	}
	if (c->reply_code == 403)
		return an_store_fail(st, AN_E_AUTH, "%s refused the login: wrong user name or password (%.*s)",
							 l->who, TEXT(c->reply_text));
	if (c->reply_code == 530)
		return an_store_fail(st, AN_E_CONFIG, "%s refused the virtual host \"%s\": it does not exist or the user may not use it (%.*s)",
							 l->who, li->vhost, TEXT(c->reply_text));
	/* 320 CONNECTION_FORCED (the broker is starting or stopping), 541 its internal error: "try again". */
	return an_store_fail(st, c->reply_code == 320 || c->reply_code == 541 ? AN_E_BUSY : AN_E_STORE,
						 "%s closed the connection while logging in: %u %.*s",
						 l->who, c->reply_code, TEXT(c->reply_text));
}

/*
 * The connection ended while the login waited for `expect`.  Once the
 * credentials are sent, a broker that just closes the socket refused them.
 */
static int
lost_in_login(an_store *st, amqp_link *l, const amqp_login_info *li, amqp_method_number_t expect)
{
	if (expect != AMQP_CONNECTION_START_METHOD && l->peer_closed)
		return login_failed(st, l, NULL, li);
	return st->err.code;
}

/*
 * The connection ended before the broker's connection.start.  Over TLS it
 * is most often the client certificate: TLS 1.3 ends the client's
 * handshake before the broker has judged the certificate, so its refusal
 * (or its demand for one) comes as the first write or read failing.
 */
static int
lost_before_start(an_store *st, const amqp_login_info *li)
{
	if (st->err.code == AN_E_CONNECT && li->tls != NULL)
		an_store_hintf(st, "If the broker checks client certificates, it may have refused this one or wanted one: check cert and key, and that the broker trusts their CA.");
	return st->err.code;
}

/*
 * The login's next method, on channel 0: `expect`, or the error that
 * connection.close, a closed socket or any other method makes.
 */
static int
login_step(an_store *st, amqp_link *l, const amqp_login_info *li, const an_deadline *d,
		   amqp_method_number_t expect, void **decoded)
{
	amqp_frame_t f;
	amqp_method_number_t id;

	for (;;)
	{
		if (next_frame(st, l, d, "the login", &f) != AN_OK)
			return lost_in_login(st, l, li, expect);
		if (f.frame_type != AMQP_FRAME_METHOD || f.channel != 0)
			return protocol_fault(st, l, "the login", "a frame of type %u on channel %u",
								  (unsigned) f.frame_type, (unsigned) f.channel);
		id = f.payload.method.id;
		if (id == expect)
		{
			*decoded = f.payload.method.decoded;
			return AN_OK;
		}
		if (id == AMQP_CONNECTION_CLOSE_METHOD)
		{
			int			rc = login_failed(st, l, f.payload.method.decoded, li);

			drop(l);
			return rc;
		}
		return protocol_fault(st, l, "the login", "%s where %s belongs", amqp_method_name(id),
							  amqp_method_name(expect));
	}
}

static int
login_send(an_store *st, amqp_link *l, const an_deadline *d, amqp_method_number_t method, void *args)
{
	return sent(st, l, amqp_send_method(l->conn, 0, method, args), d, "the login");
}

/* Does the broker's connection.start offer the SASL mechanism `name`? */
static int
offers(const amqp_connection_start_t *start, const char *name)
{
	size_t		n = strlen(name);
	const char *p = start->mechanisms.bytes;
	const char *end = p + start->mechanisms.len;

	/* A list separated by spaces: "AMQPLAIN PLAIN EXTERNAL". */
	while (p < end)
	{
		const char *sp = memchr(p, ' ', (size_t) (end - p));
		size_t		len = (size_t) ((sp ? sp : end) - p);

		if (len == n && memcmp(p, name, n) == 0)
			return 1;
		p += len + 1;
	}
	return 0;
}

/*
 * The login's SASL step: PLAIN with the user and password, or EXTERNAL,
 * where the broker takes the user from the client certificate the TLS
 * handshake presented and the response is empty.  A broker that does not
 * offer EXTERNAL is told apart from a refused login.
 */
static int
login_sasl(an_store *st, amqp_link *l, const amqp_login_info *li, const an_deadline *d,
		   amqp_connection_start_t *start, amqp_connection_start_ok_t *start_ok)
{
	size_t		ulen = strlen(li->user);
	size_t		plen = strlen(li->password);
	char	   *plain;
	int			rc;

	if (li->external)
	{
		if (!offers(start, "EXTERNAL"))
		{
			drop(l);
			an_store_fail(st, AN_E_CONFIG, "%s does not offer the EXTERNAL login (auth_mechanism=external)", l->who);
			an_store_hintf(st, "Enable the broker's rabbitmq_auth_mechanism_ssl plugin and add EXTERNAL to its auth_mechanisms, or log in with a user name and password.");
			return AN_E_CONFIG;
		}
		start_ok->mechanism = amqp_cstring_bytes("EXTERNAL");
		start_ok->response = amqp_empty_bytes;
		return login_send(st, l, d, AMQP_CONNECTION_START_OK_METHOD, start_ok);
	}
	if ((plain = malloc(ulen + plen + 2)) == NULL)
	{
		drop(l);
		return an_store_fail(st, AN_E_NOMEM, "out of memory");
	}
	/* "\0user\0password" (RFC 4616) */
	plain[0] = '\0';
	memcpy(plain + 1, li->user, ulen);
	plain[ulen + 1] = '\0';
	memcpy(plain + ulen + 2, li->password, plen);
	start_ok->mechanism = amqp_cstring_bytes("PLAIN");
	start_ok->response.bytes = plain;
	start_ok->response.len = ulen + plen + 2;
	rc = login_send(st, l, d, AMQP_CONNECTION_START_OK_METHOD, start_ok);
	memset(plain, 0, ulen + plen + 2);
	free(plain);
	return rc;
}

/*
 * The login, read by next_frame like every other answer: bounded by the
 * deadline and ended by a cancel, whatever the server sends meanwhile.
 * SASL PLAIN or EXTERNAL (login_sasl); frame_max is ours unless the
 * server asks for less, so no frame may take more than AMQP_LINK_FRAME_MAX.  Heartbeats are off:
 * between calls nobody would answer them, and a dead connection is found by
 * the next call instead.  authentication_failure_close has RabbitMQ say
 * that a login was refused rather than just close the socket.
 */
static int
login(an_store *st, amqp_link *l, const amqp_login_info *li, const an_deadline *d)
{
	amqp_table_entry_t cap = {amqp_cstring_bytes("authentication_failure_close"), {AMQP_FIELD_KIND_BOOLEAN, {.boolean = 1}}};
	amqp_table_entry_t props[2] = {
		{amqp_cstring_bytes("product"), {AMQP_FIELD_KIND_UTF8, {.bytes = amqp_cstring_bytes("anarchon")}}},
		{amqp_cstring_bytes("capabilities"), {AMQP_FIELD_KIND_TABLE, {.table = {1, &cap}}}},
	};
	amqp_connection_start_ok_t start_ok;
	amqp_connection_tune_t *tune;
	amqp_connection_tune_ok_t tune_ok;
	amqp_connection_open_t open;
	void	   *reply;
	int			rc;

	memset(&start_ok, 0, sizeof(start_ok));
	start_ok.client_properties.num_entries = 2;
	start_ok.client_properties.entries = props;
	start_ok.locale = amqp_cstring_bytes("en_US");
	if (sent(st, l, amqp_send_header(l->conn), d, "the login") != AN_OK ||
		login_step(st, l, li, d, AMQP_CONNECTION_START_METHOD, &reply) != AN_OK)
		return lost_before_start(st, li);
	if ((rc = login_sasl(st, l, li, d, reply, &start_ok)) != AN_OK ||
		(rc = login_step(st, l, li, d, AMQP_CONNECTION_TUNE_METHOD, &reply)) != AN_OK)
		return rc;
	tune = reply;
	tune_ok.channel_max = tune->channel_max;
	tune_ok.frame_max = tune->frame_max > 0 && tune->frame_max < AMQP_LINK_FRAME_MAX ?
		tune->frame_max : AMQP_LINK_FRAME_MAX;
	tune_ok.heartbeat = 0;
	if (tune_ok.frame_max < AMQP_FRAME_MIN_SIZE)
		return protocol_fault(st, l, "the login", "a frame_max of %u bytes, below AMQP's least (%d)",
							  (unsigned) tune_ok.frame_max, AMQP_FRAME_MIN_SIZE);
	if ((rc = amqp_tune_connection(l->conn, tune_ok.channel_max, (int) tune_ok.frame_max, 0)) != AMQP_STATUS_OK)
	{
		drop(l);
		return an_store_fail(st, AN_E_NOMEM, "out of memory tuning the connection to %s", l->who);
	}
	memset(&open, 0, sizeof(open));
	open.virtual_host = amqp_cstring_bytes(li->vhost);
	open.capabilities = amqp_empty_bytes;
	if ((rc = login_send(st, l, d, AMQP_CONNECTION_TUNE_OK_METHOD, &tune_ok)) != AN_OK ||
		(rc = login_send(st, l, d, AMQP_CONNECTION_OPEN_METHOD, &open)) != AN_OK)
		return rc;
	return login_step(st, l, li, d, AMQP_CONNECTION_OPEN_OK_METHOD, &reply);
}

int
amqp_link_connected(amqp_link *l)
{
	if (l->conn && an_fork_foreign(l->proc))
		drop(l);				/* closes our copy of the socket only, sends nothing */
	return l->conn != NULL;
}

/*
 * The local pair rabbitmq-c writes into: its end is handed to rabbitmq-c,
 * which owns and closes it; ours is read by flush.  Room for several
 * frames, so that rabbitmq-c's write of one call never waits.
 */
static int
pair(an_store *st, amqp_link *l, amqp_socket_t *sock)
{
	int			sv[2];
	int			room = 4 * AMQP_LINK_FRAME_MAX;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0)
		return an_store_fail(st, AN_E_CONNECT, "could not connect to %s: %s", l->who, strerror(errno));
	(void) setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &room, sizeof(room));
	(void) setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &room, sizeof(room));
	amqp_tcp_socket_set_sockfd(sock, sv[0]);
	l->feed = sv[1];
	return AN_OK;
}

int
amqp_link_open(an_store *st, amqp_link *l, const amqp_login_info *li, const an_deadline *d)
{
	amqp_socket_t *sock;
	int			rc;

	/* Every other function of rabbitmq-c is given the connection made here. */
	if (amqp_lib_load(&st->err) != AN_OK)
		return st->err.code;
	drop(l);
	an_fork_own(&l->proc);
	l->net = AN_CONN_NONE;
	l->conn = amqp_new_connection();
	l->in = malloc(AMQP_LINK_FRAME_MAX);
	sock = l->conn && l->in ? amqp_tcp_socket_new(l->conn) : NULL;
	if (sock == NULL)
	{
		drop(l);
		return an_store_fail(st, AN_E_NOMEM, "out of memory");
	}
	/*
	 * The connect and the TLS handshake are ours, through the host's wait (a
	 * cancel ends them); so is every byte sent or read after them.
	 */
	if ((rc = pair(st, l, sock)) != AN_OK ||
		(rc = an_conn_open(st, l->who, li->host, li->port, li->tls, d, &l->net)) != AN_OK)
	{
		drop(l);
		return rc;
	}
	return login(st, l, li, d);
}

/*
 * A courtesy reply (close-ok) whose failure changes nothing: st keeps the
 * error being reported; a failed send drops the link.  Bounded by d and
 * ended by the host's cancel like any other send.
 */
static void
send_quietly(an_store *st, amqp_link *l, int status, const an_deadline *d, const char *what)
{
	an_store	scratch = {0};

	scratch.host = st->host;
	(void) sent(&scratch, l, status, d, what);
}

/* The broker closed the connection (connection.close): say why, then drop it. */
static int
connection_closed(an_store *st, amqp_link *l, const amqp_frame_t *f)
{
	amqp_connection_close_t *c = f->payload.method.decoded;
	amqp_connection_close_ok_t ok = {0};
	an_deadline d;
	int			rc;

	rc = an_store_fail(st, AN_E_CONNECT, "%s closed the connection: %u %.*s", l->who,
					   c->reply_code, TEXT(c->reply_text));
	an_deadline_start(&d, 200);
	send_quietly(st, l, amqp_send_method(l->conn, 0, AMQP_CONNECTION_CLOSE_OK_METHOD, &ok), &d, "close-ok");
	drop(l);
	return rc;
}

/* The broker closed our channel: acknowledge, keep the connection, report. */
static int
channel_closed(an_store *st, amqp_link *l, const amqp_frame_t *f, const an_deadline *d, const char *what)
{
	amqp_channel_close_t *c = f->payload.method.decoded;
	amqp_channel_close_ok_t ok = {0};
	an_error	code;

	l->last_code = c->reply_code;
	/* 405 RESOURCE_LOCKED: another connection holds the queue for now, "try again". */
	code = c->reply_code == 406 ? AN_E_CONFIG : c->reply_code == 403 ? AN_E_AUTH :
		c->reply_code == 405 ? AN_E_BUSY : AN_E_STORE;
	an_store_fail(st, code, "%s refused %s: %u %.*s", l->who, what, c->reply_code, TEXT(c->reply_text));
	l->chan_open = 0;
	send_quietly(st, l, amqp_send_method(l->conn, f->channel, AMQP_CHANNEL_CLOSE_OK_METHOD, &ok), d, "close-ok");
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
			return st->err.code;
		if (f->frame_type != AMQP_FRAME_METHOD)
			continue;
		if (f->channel == 0 && f->payload.method.id == AMQP_CONNECTION_CLOSE_METHOD)
			return connection_closed(st, l, f);
		if (f->channel != l->ch)
			continue;
		if (f->payload.method.id == AMQP_CHANNEL_CLOSE_METHOD)
			return channel_closed(st, l, f, d, what);
		return AN_OK;
	}
}

/*
 * Methods a broker may send on a channel at any time, between a request and
 * its reply: confirms and returns of publishes, deliveries, flow control.
 */
static int
asynchronous(amqp_method_number_t id)
{
	return id == AMQP_BASIC_ACK_METHOD || id == AMQP_BASIC_NACK_METHOD || id == AMQP_BASIC_RETURN_METHOD ||
		id == AMQP_BASIC_DELIVER_METHOD || id == AMQP_BASIC_CANCEL_METHOD || id == AMQP_CHANNEL_FLOW_METHOD;
}

int
amqp_link_rpc(an_store *st, amqp_link *l, const an_deadline *d, const char *what,
			  amqp_method_number_t method, void *args, amqp_method_number_t expect, void **reply)
{
	amqp_frame_t f;

	l->last_code = 0;
	amqp_maybe_release_buffers(l->conn);
	if (sent(st, l, amqp_send_method(l->conn, l->ch, method, args), d, what) != AN_OK)
		return st->err.code;
	for (;;)
	{
		if (next_method(st, l, d, what, &f) != AN_OK)
			return st->err.code;
		if (f.payload.method.id == expect)
		{
			if (reply)
				*reply = f.payload.method.decoded;
			return AN_OK;
		}
		/*
		 * Any other reply breaks the protocol: a wait that fails drops the
		 * link and a closed channel is opened under a new number, so no
		 * reply of an abandoned call can arrive here.
		 */
		if (!asynchronous(f.payload.method.id))
			return protocol_fault(st, l, what, "%s where %s belongs", amqp_method_name(f.payload.method.id),
								  amqp_method_name(expect));
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
		return st->err.code;
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
	l->last_code = 0;
	memset(&props, 0, sizeof(props));
	props._flags = AMQP_BASIC_DELIVERY_MODE_FLAG | AMQP_BASIC_CONTENT_TYPE_FLAG;
	props.delivery_mode = 2;	/* persistent: a restart keeps the claim */
	props.content_type = amqp_cstring_bytes("application/json");
	amqp_maybe_release_buffers(l->conn);
	/* mandatory: a message no queue takes comes back instead of being acked silently. */
	rc = amqp_basic_publish(l->conn, l->ch, amqp_empty_bytes, amqp_cstring_bytes(queue), 1, 0,
							&props, amqp_cstring_bytes(body));
	if (sent(st, l, rc, d, "the claim's publish") != AN_OK)
		return st->err.code;
	for (;;)
	{
		if (next_method(st, l, d, "the claim's publish", &f) != AN_OK)
			return st->err.code;
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
	an_store	scratch = {0};	/* no host: a close is not the caller's call to cancel */
	an_deadline d;
	size_t		got;

	if (!amqp_link_connected(l))
		return;
	/*
	 * A polite close, given a short while: the broker answers close-ok and
	 * closes the socket, and then logs no error.  What it sends meanwhile is
	 * only read away, in reads that each ask the time left.
	 */
	an_deadline_start(&d, 200);
	c.reply_code = 200;
	c.reply_text = amqp_cstring_bytes("bye");
	if (sent(&scratch, l, amqp_send_method(l->conn, 0, AMQP_CONNECTION_CLOSE_METHOD, &c), &d, "the close") == AN_OK)
		while (an_conn_recv(&scratch, l->who, &l->net, (char *) l->in, AMQP_LINK_FRAME_MAX, &got, &d, "the close") == AN_OK)
			;
	drop(l);
}
