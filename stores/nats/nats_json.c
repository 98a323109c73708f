/*
 * nats_json.c — key lookup in JetStream's flat JSON answers (see nats_json.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hex.h"
#include "nats_json.h"

/* The first byte of "key"'s value, or NULL. */
static const char *
value_of(const char *js, const char *key)
{
	size_t		klen = strlen(key);

	for (const char *p = strchr(js, '"'); p; p = strchr(p + 1, '"'))
	{
		const char *v;

		if (strncmp(p + 1, key, klen) != 0 || p[1 + klen] != '"')
			continue;
		v = p + 2 + klen;
		while (*v == ' ')
			v++;
		if (*v != ':')
			continue;
		v++;
		while (*v == ' ')
			v++;
		return v;
	}
	return NULL;
}

int
nj_int(const char *js, const char *key, int64_t *out)
{
	const char *v = value_of(js, key);
	char	   *end;
	long long	n;

	if (v == NULL || !(*v == '-' || (*v >= '0' && *v <= '9')))
		return -1;
	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno || end == v)
		return -1;
	*out = n;
	return 0;
}

int
nj_bool(const char *js, const char *key)
{
	const char *v = value_of(js, key);

	if (v && strncmp(v, "true", 4) == 0)
		return 1;
	if (v && strncmp(v, "false", 5) == 0)
		return 0;
	return -1;
}

/*
 * The escape at v (v[0] is the backslash) decoded into buf; answers its
 * length (at most 3) and sets *used to the input bytes it took.  JetStream's
 * Go encoder writes <, > and & as \u003c, \u003e and \u0026, and its error
 * descriptions say "replicas > 1": a message must show the character, not
 * "u003e".  A \u of a surrogate or a control character, or a malformed one,
 * becomes '?', the other escapes their character.
 */
static size_t
unescape(const char *v, char *buf, size_t *used)
{
	static const char from[] = "bfnrt", to[] = "\b\f\n\r\t";
	const char *f;
	unsigned	cp = 0;

	*used = 2;
	if (v[1] != 'u')
	{
		f = strchr(from, v[1]);
		buf[0] = f != NULL ? to[f - from] : v[1];	/* \" \\ \/ and the rest */
		return 1;
	}
	for (int i = 2; i < 6; i++)
	{
		int			h = an_hexval(v[i]);

		if (h < 0)
		{
			buf[0] = '?';
			*used = (size_t) i;	/* the digits read so far, never past the end */
			return 1;
		}
		cp = cp * 16 + (unsigned) h;
	}
	*used = 6;
	if (cp < 0x20 || (cp >= 0xd800 && cp <= 0xdfff))
	{
		buf[0] = '?';
		return 1;
	}
	if (cp < 0x80)
	{
		buf[0] = (char) cp;
		return 1;
	}
	if (cp < 0x800)
	{
		buf[0] = (char) (0xc0 | (cp >> 6));
		buf[1] = (char) (0x80 | (cp & 0x3f));
		return 2;
	}
	buf[0] = (char) (0xe0 | (cp >> 12));
	buf[1] = (char) (0x80 | ((cp >> 6) & 0x3f));
	buf[2] = (char) (0x80 | (cp & 0x3f));
	return 3;
}

int
nj_str(const char *js, const char *key, char *out, size_t outlen)
{
	const char *v = value_of(js, key);
	size_t		n = 0;

	if (v == NULL || *v != '"' || outlen == 0)
		return -1;
	for (v++; *v && *v != '"';)
	{
		char		buf[3];
		size_t		k = 1,
					used = 1;

		buf[0] = *v;
		if (*v == '\\' && v[1])
			k = unescape(v, buf, &used);
		if (n + k >= outlen)
		{
			/* Too long: out holds the cut text, but the answer says it was cut. */
			out[n] = '\0';
			return -1;
		}
		memcpy(out + n, buf, k);
		n += k;
		v += used;
	}
	out[n] = '\0';
	return 0;
}

static int
b64val(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

long
nj_base64_decode(const char *in, size_t inlen, char *out, size_t outlen)
{
	uint32_t	acc = 0;
	int			bits = 0;
	size_t		n = 0;

	for (size_t i = 0; i < inlen && in[i] != '='; i++)
	{
		int			v = b64val(in[i]);

		if (v < 0)
			return -1;
		acc = (acc << 6) | (uint32_t) v;
		bits += 6;
		if (bits >= 8)
		{
			bits -= 8;
			if (n == outlen)
				return -1;
			out[n++] = (char) ((acc >> bits) & 0xff);
		}
	}
	return (long) n;
}
