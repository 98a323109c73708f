/*
 * fuzz_resp.c — Redis replies (RESP): hiredis's reader, the one the Redis
 * store reads every answer with (redisReaderCreate, redisReaderFeed,
 * redisReaderGetReply), then the store's own functions that judge a reply
 * and need no connection: rds_reply_fail and rds_array_int
 * (stores/redis/redis_cmd.c) and rds_durability_check (stores/redis/redis_durable.c).
 *
 * The input is what a server sends: any number of replies.  It is read
 * twice, fed whole and fed one byte at a time.  Beyond "no crash, no leak,
 * no read past the reader's buffer" (huge declared lengths included: the
 * suite lets an impossible allocation fail instead of aborting), each input
 * checks:
 *
 *   shape      every reply is well formed: strings NUL-terminated at their
 *              length, element pointers set, nesting bounded; the bytes of
 *              all strings and the count of all elements stay within the
 *              input's size.
 *   chunks     both readings give the same replies, and fail (a protocol
 *              error) at the same reply with the same message.
 *   judging    rds_reply_fail fails with AN_E_AUTH for a NOAUTH error and
 *              AN_E_STORE otherwise, with a terminated message;
 *              rds_array_int answers AN_OK exactly for an integer element
 *              of an array, with its value; rds_durability_check answers
 *              AN_OK or AN_E_CONFIG (then with a hint), and refuses only
 *              for appendonly no or appendfsync no.
 *
 * hiredis 1.x (Debian 13 and later) also reads RESP3 (maps, sets, doubles,
 * ...): those types are walked like arrays and strings where it has them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "redis.h"

#define MAX_REPLIES 64

static const an_store_methods methods = {.version = AN_STORE_VERSION, .name = "redis"};

/* A store as redis_store.c leaves it after open; only conn.where is read. */
static rds_store store;

typedef struct reading
{
	redisReply *r[MAX_REPLIES];
	int			n;
	int			failed;          /* the reader reported a protocol error */
	char		errstr[128];
} reading;

/* Bytes of strings and count of elements, walking r; checks its shape. */
static void
walk(const redisReply *r, int depth, size_t *bytes, size_t *elements)
{
	FUZZ_CHECK(r != NULL, "a NULL reply");
	FUZZ_CHECK(depth <= 8, "replies nested %d deep", depth);
	switch (r->type)
	{
		case REDIS_REPLY_STRING:
		case REDIS_REPLY_STATUS:
		case REDIS_REPLY_ERROR:
#ifdef REDIS_REPLY_DOUBLE
		case REDIS_REPLY_DOUBLE:
		case REDIS_REPLY_VERB:
		case REDIS_REPLY_BIGNUM:
#endif
			FUZZ_CHECK(r->str != NULL && r->str[r->len] == '\0', "a string without its NUL");
			*bytes += r->len;
			break;
		case REDIS_REPLY_ARRAY:
#ifdef REDIS_REPLY_MAP
		case REDIS_REPLY_MAP:
		case REDIS_REPLY_SET:
		case REDIS_REPLY_PUSH:
		case REDIS_REPLY_ATTR:
#endif
			FUZZ_CHECK(r->elements == 0 || r->element != NULL, "an array without elements");
			*elements += r->elements;
			for (size_t i = 0; i < r->elements; i++)
				walk(r->element[i], depth + 1, bytes, elements);
			break;
		case REDIS_REPLY_INTEGER:
		case REDIS_REPLY_NIL:
#ifdef REDIS_REPLY_BOOL
		case REDIS_REPLY_BOOL:
#endif
			break;
		default:
			FUZZ_CHECK(0, "reply type %d", r->type);
	}
}

static int
same(const redisReply *a, const redisReply *b)
{
	if (a->type != b->type)
		return 0;
	switch (a->type)
	{
		case REDIS_REPLY_STRING:
		case REDIS_REPLY_STATUS:
		case REDIS_REPLY_ERROR:
#ifdef REDIS_REPLY_DOUBLE
		case REDIS_REPLY_DOUBLE:
		case REDIS_REPLY_VERB:
		case REDIS_REPLY_BIGNUM:
#endif
			return a->len == b->len && memcmp(a->str, b->str, a->len) == 0;
		case REDIS_REPLY_INTEGER:
#ifdef REDIS_REPLY_BOOL
		case REDIS_REPLY_BOOL:
#endif
			return a->integer == b->integer;
		case REDIS_REPLY_ARRAY:
#ifdef REDIS_REPLY_MAP
		case REDIS_REPLY_MAP:
		case REDIS_REPLY_SET:
		case REDIS_REPLY_PUSH:
		case REDIS_REPLY_ATTR:
#endif
			if (a->elements != b->elements)
				return 0;
			for (size_t i = 0; i < a->elements; i++)
				if (!same(a->element[i], b->element[i]))
					return 0;
			return 1;
		default:
			return 1;
	}
}

/* Take every complete reply the reader holds. */
static void
drain(redisReader *rd, reading *out)
{
	while (!out->failed && out->n < MAX_REPLIES)
	{
		void	   *reply = NULL;

		if (redisReaderGetReply(rd, &reply) != REDIS_OK)
		{
			out->failed = 1;
			snprintf(out->errstr, sizeof(out->errstr), "%s", rd->errstr);
			return;
		}
		if (reply == NULL)
			return;
		out->r[out->n++] = reply;
	}
}

static void
read_all(const uint8_t *data, size_t size, size_t chunk, reading *out)
{
	redisReader *rd;
	an_err		err;

	/* The store loads hiredis when it connects (redis_lib.h); here no store connects. */
	if (rds_lib_load(&err) != AN_OK || (rd = redisReaderCreate()) == NULL)
		abort();
	memset(out, 0, sizeof(*out));
	for (size_t off = 0; off < size && !out->failed && out->n < MAX_REPLIES; off += chunk)
	{
		size_t		n = size - off < chunk ? size - off : chunk;

		if (redisReaderFeed(rd, (const char *) data + off, n) != REDIS_OK)
		{
			out->failed = 1;
			snprintf(out->errstr, sizeof(out->errstr), "%s", rd->errstr);
			break;
		}
		drain(rd, out);
	}
	redisReaderFree(rd);
}

/*
 * The error codes that mean "not now" (doc/cli.md, the table of store replies
 * that mean try again), written here again rather than asked of the store:
 * the code's first word, up to a space, a NUL or the end, is one of them.
 */
static int
transient_code(const redisReply *r)
{
	static const char *const codes[] = {"LOADING", "BUSY", "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN", "NOREPLICAS"};

	if (r->type != REDIS_REPLY_ERROR)
		return 0;
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
	{
		size_t		n = strlen(codes[i]);

		if (r->len >= n && strncmp(r->str, codes[i], n) == 0 && (r->len == n || r->str[n] == ' ' || r->str[n] == '\0'))
			return 1;
	}
	return 0;
}

static void
judge(const redisReply *r, const redisReply *other)
{
	an_store	st;
	int			rc;
	int64_t		v;

	an_store_init(&st, &methods, NULL);
	rc = rds_reply_fail(&st, &store, r, "the fuzz command");
	FUZZ_CHECK(rc == (int) st.err.code && st.err.msg[0] != '\0' && fuzz_terminated(st.err.msg, sizeof(st.err.msg)),
			   "rds_reply_fail: %d, \"%.80s\"", rc, st.err.msg);
	if (r->type == REDIS_REPLY_ERROR && strncmp(r->str, "NOAUTH", 6) == 0)
		FUZZ_CHECK(rc == AN_E_AUTH, "NOAUTH is %d", rc);
	else if (transient_code(r))
		FUZZ_CHECK(rc == AN_E_BUSY, "a transient error reply is %d, not try again", rc);
	else
		FUZZ_CHECK(rc == AN_E_STORE, "rds_reply_fail: %d", rc);

	for (size_t i = 0; i < 4 || (r->type == REDIS_REPLY_ARRAY && i <= r->elements && i < 64); i++)
	{
		int			ok = r->type == REDIS_REPLY_ARRAY && i < r->elements &&
			r->element[i]->type == REDIS_REPLY_INTEGER;

		an_store_clear(&st);
		v = -7;
		rc = rds_array_int(&st, &store, r, i, &v, "the fuzz command");
		FUZZ_CHECK((rc == AN_OK) == ok && (!ok || v == r->element[i]->integer) && (ok || rc == AN_E_STORE),
				   "rds_array_int(%zu) = %d", i, rc);
	}

	an_store_clear(&st);
	rc = rds_durability_check(&st, &store.conn, r, other);
	FUZZ_CHECK(rc == AN_OK || (rc == AN_E_CONFIG && st.err.hint[0] != '\0'), "durability check: %d", rc);
	if (rc == AN_E_CONFIG)
		FUZZ_CHECK(strstr(st.err.msg, "appendonly no") || strstr(st.err.msg, "appendfsync no"),
				   "refused for: %s", st.err.msg);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static reading whole,
				bytes;
	size_t		strbytes = 0,
				elements = 0;

	snprintf(store.conn.where, sizeof(store.conn.where), "redis://fuzz:6379");
	read_all(data, size, size ? size : 1, &whole);
	read_all(data, size, 1, &bytes);

	FUZZ_CHECK(whole.n == bytes.n && whole.failed == bytes.failed,
			   "fed whole: %d replies%s%s; byte by byte: %d%s%s", whole.n, whole.failed ? ", then " : "",
			   whole.errstr, bytes.n, bytes.failed ? ", then " : "", bytes.errstr);
	FUZZ_CHECK(strcmp(whole.errstr, bytes.errstr) == 0, "errors differ: \"%s\", \"%s\"", whole.errstr, bytes.errstr);
	for (int i = 0; i < whole.n; i++)
	{
		walk(whole.r[i], 0, &strbytes, &elements);
		FUZZ_CHECK(same(whole.r[i], bytes.r[i]), "reply %d differs when fed byte by byte", i);
	}
	FUZZ_CHECK(strbytes <= size && elements <= size, "%zu string bytes and %zu elements from %zu bytes",
			   strbytes, elements, size);
	for (int i = 0; i < whole.n; i++)
		judge(whole.r[i], whole.r[i > 0 ? i - 1 : i]);
	for (int i = 0; i < whole.n; i++)
	{
		freeReplyObject(whole.r[i]);
		freeReplyObject(bytes.r[i]);
	}
	return 0;
}
