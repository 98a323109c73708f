/*
 * nats_codec.h — reading what a NATS server sends: bytes in, one event out,
 * no socket and no state.
 *
 * nats_link.c keeps the bytes it received in a buffer and asks nats_parse
 * what the first thing in it is; so the reader can be tested on any input,
 * split anywhere, without a server (test/remote/nats_codec_test.c, and the
 * fuzz target).
 */
#ifndef ANARCHON_NATS_CODEC_H
#define ANARCHON_NATS_CODEC_H

#include <stddef.h>

/*
 * The most one thing a NATS server sends may take, in bytes: a control line
 * with its payload.  Also the most a link's buffer holds, so the memory of a
 * request is bounded by it whatever the server sends.  JetStream's answers to
 * the store are small (a stored claim is under 1 kB of base64; STREAM.INFO a
 * few kB): a server that announces or sends more is refused rather than
 * followed.  doc/stores-amqp-nats.md states it.
 */
#define NATS_IN_MAX (1024 * 1024)

/* The longest MSG, HMSG or -ERR control line: subjects are short. */
#define NATS_CTL_MAX 1024

typedef enum nats_in_kind
{
	NATS_IN_MSG,                 /* MSG or HMSG, with all its data */
	NATS_IN_PING,
	NATS_IN_PONG,
	NATS_IN_ERR,                 /* -ERR; the text is in line */
	NATS_IN_SKIP                 /* INFO or +OK: nothing for the store */
} nats_in_kind;

/* One thing the server sent, found at the start of a buffer. */
typedef struct nats_in
{
	nats_in_kind kind;
	char		line[NATS_CTL_MAX]; /* the control line, cut into words (MSG, ERR) */
	const char *subject;         /* MSG, in line */
	const char *hdr;             /* MSG: the headers, in the buffer; NULL when none */
	size_t		hdrlen;
	const char *data;            /* MSG: the data, in the buffer */
	size_t		datalen;
	size_t		used;            /* bytes of the buffer this takes */
} nats_in;

/* What nats_parse found. */
#define NATS_PARSE_ONE       1   /* one complete thing, in *in */
#define NATS_PARSE_MORE      0   /* a beginning: more bytes are needed */
#define NATS_PARSE_BAD      (-1) /* not the NATS protocol */
#define NATS_PARSE_TOO_BIG  (-2) /* a message announcing more than NATS_IN_MAX */

/*
 * The first thing in buf[0..len).  Pointers in *in point into buf (data,
 * headers) or into in->line (the subject), so they live as long as both.
 */
int			nats_parse(const char *buf, size_t len, nats_in *in);

#endif							/* ANARCHON_NATS_CODEC_H */
