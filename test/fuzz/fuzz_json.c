/*
 * fuzz_json.c — the JSON reader of JetStream's answers (stores/nats/nats_json.c):
 * nj_int, nj_bool, nj_str and nj_base64_decode, on the keys the NATS store
 * reads and on the first key the input itself names.
 *
 * The input is one answer, cut at its first NUL (the link hands the store a
 * NUL-terminated copy of each answer).  Beyond "no crash, no read or write
 * past a buffer" (every output buffer is a heap block of exactly the size
 * passed), each input checks:
 *
 *   nj_str     its output is NUL-terminated inside outlen and never longer
 *              than the input; for every outlen it answers 0 exactly when
 *              the whole value fits, and a cut value is the start of it.
 *   nj_int     a number read has its digits in the input.
 *   nj_bool    1 only when "true" is in the input, 0 only with "false".
 *   base64     a "data" value decodes (as the store decodes a stored
 *              claim) to at most 3/4 of its length; the input's own bytes,
 *              encoded here, decode back to exactly themselves, with or
 *              without padding, and not into one byte less.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "nats_json.h"

/* The keys stores/nats/nats.c and stores/nats/nats_link.c read. */
static const char *const keys[] = {
	"token", "description", "err_code", "duplicate_window", "storage", "num_replicas",
	"seq", "data", "slot", "duplicate", "tls_required", "headers", "stream", "error", NULL
};

static const size_t outlens[] = {1, 2, 8, 33, 65, 200};

static char *
xmalloc(size_t n)
{
	char	   *p = malloc(n ? n : 1);

	if (p == NULL)
		abort();
	return p;
}

static void
check_str(const char *js, const char *key)
{
	size_t		jslen = strlen(js);
	char	   *whole = xmalloc(jslen + 1);
	int			rc = nj_str(js, key, whole, jslen + 1);
	size_t		len = rc == 0 ? strlen(whole) : 0;

	/* A value can never be longer than the text it is read from. */
	FUZZ_CHECK(rc == 0 || rc == -1, "nj_str(%s) = %d", key, rc);
	if (rc == 0)
		FUZZ_CHECK(len <= jslen, "nj_str(%s) read %zu bytes out of %zu", key, len, jslen);
	for (size_t i = 0; i < sizeof(outlens) / sizeof(outlens[0]); i++)
	{
		size_t		n = outlens[i];
		char	   *out = xmalloc(n);
		int			r;

		memset(out, 'x', n);
		r = nj_str(js, key, out, n);
		if (rc < 0)
			FUZZ_CHECK(r < 0, "nj_str(%s) absent, then found with outlen %zu", key, n);
		else
		{
			FUZZ_CHECK((r == 0) == (len < n), "nj_str(%s): %zu bytes, outlen %zu, answered %d", key, len, n, r);
			/*
			 * A value that does not fit is cut at a character: a \u escape
			 * decodes to up to 3 bytes, and one that would not fit whole is
			 * left out, so the cut text may be up to 2 bytes short of n - 1.
			 */
			size_t		got = fuzz_terminated(out, n) ? strlen(out) : n;

			FUZZ_CHECK(got < n && strncmp(out, whole, got) == 0 &&
					   (len < n ? got == len : got + 2 >= n - 1),
					   "nj_str(%s) into %zu bytes: \"%s\" is not the start of \"%s\"", key, n, out, whole);
		}
		free(out);
	}
	if (rc == 0 && strcmp(key, "data") == 0)
	{
		/* As get_msg decodes a stored claim: into a buffer just large enough. */
		size_t		room = len * 3 / 4;
		char	   *body = xmalloc(room);
		long		d = nj_base64_decode(whole, len, body, room);

		FUZZ_CHECK(d <= (long) room, "decoded %ld bytes out of %zu", d, len);
		free(body);
	}
	free(whole);
}

static void
check_key(const char *js, const char *key)
{
	int64_t		v = 0;
	int			rc = nj_int(js, key, &v);
	int			b = nj_bool(js, key);

	FUZZ_CHECK(rc == 0 || rc == -1, "nj_int(%s) = %d", key, rc);
	if (rc == 0)
	{
		char		digits[32];
		uint64_t	mag = v < 0 ? (uint64_t) 0 - (uint64_t) v : (uint64_t) v;

		snprintf(digits, sizeof(digits), "%llu", (unsigned long long) mag);
		FUZZ_CHECK(strstr(js, digits) != NULL, "nj_int(%s) = %lld, not in the text", key, (long long) v);
	}
	FUZZ_CHECK(b == -1 || (b == 1 && strstr(js, "true")) || (b == 0 && strstr(js, "false")),
			   "nj_bool(%s) = %d", key, b);
	check_str(js, key);
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Standard base64 of data into out (room: 4 * ceil(size / 3) + 1); its length. */
static size_t
encode(const uint8_t *data, size_t size, char *out)
{
	size_t		w = 0;

	for (size_t i = 0; i < size; i += 3)
	{
		uint32_t	v = (uint32_t) data[i] << 16;
		size_t		left = size - i;

		if (left > 1)
			v |= (uint32_t) data[i + 1] << 8;
		if (left > 2)
			v |= data[i + 2];
		out[w++] = b64[(v >> 18) & 63];
		out[w++] = b64[(v >> 12) & 63];
		out[w++] = left > 1 ? b64[(v >> 6) & 63] : '=';
		out[w++] = left > 2 ? b64[v & 63] : '=';
	}
	out[w] = '\0';
	return w;
}

static void
check_base64(const uint8_t *data, size_t size)
{
	char	   *text = xmalloc(4 * ((size + 2) / 3) + 1);
	size_t		tlen = encode(data, size, text);
	size_t		bare = tlen;
	char	   *out = xmalloc(size);
	long		n;

	n = nj_base64_decode(text, tlen, out, size);
	FUZZ_CHECK(n == (long) size && memcmp(out, data, size) == 0, "base64 of %zu bytes decodes to %ld", size, n);
	while (bare > 0 && text[bare - 1] == '=')
		bare--;
	n = nj_base64_decode(text, bare, out, size);
	FUZZ_CHECK(n == (long) size && memcmp(out, data, size) == 0, "unpadded base64 of %zu bytes decodes to %ld",
			   size, n);
	if (size > 0)
		FUZZ_CHECK(nj_base64_decode(text, tlen, out, size - 1) == -1, "%zu bytes decoded into %zu", size, size - 1);
	free(out);
	free(text);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	   *js = fuzz_cstring(data, size);
	const char *q = strchr(js, '"');

	for (int i = 0; keys[i]; i++)
		check_key(js, keys[i]);
	/* The first quoted word of the input as a key too: the lookup itself is fuzzed. */
	if (q)
	{
		const char *end = strchr(q + 1, '"');

		if (end && end - q - 1 <= 64)
		{
			char		key[65];

			memcpy(key, q + 1, (size_t) (end - q - 1));
			key[end - q - 1] = '\0';
			check_key(js, key);
		}
	}
	check_base64(data, size);
	free(js);
	return 0;
}
