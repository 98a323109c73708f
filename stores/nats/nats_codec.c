/*
 * nats_codec.c — what a NATS server sends, parsed from a buffer (see
 * nats_codec.h).
 *
 *   INFO {...}  +OK  PING  PONG  -ERR '<text>'
 *   MSG <subject> <sid> [reply] <n>\r\n<data>\r\n
 *   HMSG <subject> <sid> [reply] <h> <n>\r\n<headers><data>\r\n
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nats_codec.h"

/* Cut s into at most max space-separated words; returns how many. */
static int
words(char *s, char **w, int max)
{
	char	   *save = NULL;
	int			n = 0;

	for (char *t = strtok_r(s, " \t", &save); t && n < max; t = strtok_r(NULL, " \t", &save))
		w[n++] = t;
	return n;
}

/*
 * A protocol size: digits only (strtoull alone would take "-1" or "+1").
 * A size past the cap is returned as the cap plus one, for parse_msg to
 * refuse as too large rather than as malformed.
 */
static int
size_of(const char *s, size_t *out)
{
	char	   *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -1;
	v = strtoull(s, &end, 10);
	if (*end != '\0')
		return -1;
	if (v > NATS_IN_MAX)
		v = (unsigned long long) NATS_IN_MAX + 1;
	*out = (size_t) v;
	return 0;
}

/* A MSG or HMSG line: where its headers and data are, once all of it arrived. */
static int
parse_msg(const char *buf, size_t len, size_t linelen, int with_headers, nats_in *in)
{
	char	   *w[7];
	int			n = words(in->line, w, 7);
	size_t		hdrlen = 0;
	size_t		total;
	int			base = with_headers ? 5 : 4;

	/* MSG subject sid [reply] size; HMSG subject sid [reply] hdr_size total_size */
	if (n != base && n != base + 1)
		return NATS_PARSE_BAD;
	if (size_of(w[n - 1], &total) < 0 ||
		(with_headers && (size_of(w[n - 2], &hdrlen) < 0 || hdrlen > total)))
		return NATS_PARSE_BAD;
	/* Refused when announced, before any of it is read. */
	if (linelen + total + 2 > NATS_IN_MAX)
		return NATS_PARSE_TOO_BIG;
	if (len < linelen + total + 2)
		return NATS_PARSE_MORE;
	if (buf[linelen + total] != '\r' || buf[linelen + total + 1] != '\n')
		return NATS_PARSE_BAD;
	in->kind = NATS_IN_MSG;
	in->subject = w[1];
	in->hdr = with_headers ? buf + linelen : NULL;
	in->hdrlen = hdrlen;
	in->data = buf + linelen + hdrlen;
	in->datalen = total - hdrlen;
	in->used = linelen + total + 2;
	return NATS_PARSE_ONE;
}

/*
 * A line ends at its \n; the \r before it is optional, as the server's
 * own parser has it.  Names are matched in any case.
 */
int
nats_parse(const char *buf, size_t len, nats_in *in)
{
	const char *eol = len ? memchr(buf, '\n', len) : NULL;
	size_t		linelen;
	size_t		textlen;

	if (eol == NULL)
		return NATS_PARSE_MORE;
	linelen = (size_t) (eol - buf) + 1;
	textlen = linelen - (linelen >= 2 && eol[-1] == '\r' ? 2 : 1);
	in->used = linelen;
	in->kind = NATS_IN_SKIP;
	if (textlen >= 4 && strncasecmp(buf, "PING", 4) == 0)
		in->kind = NATS_IN_PING;
	else if (textlen >= 4 && strncasecmp(buf, "PONG", 4) == 0)
		in->kind = NATS_IN_PONG;
	else if ((textlen >= 4 && strncasecmp(buf, "INFO", 4) == 0) ||
			 (textlen >= 3 && strncasecmp(buf, "+OK", 3) == 0))
		in->kind = NATS_IN_SKIP;
	else if (textlen >= 4 && (strncasecmp(buf, "MSG ", 4) == 0 || strncasecmp(buf, "HMSG", 4) == 0 ||
							  strncasecmp(buf, "-ERR", 4) == 0))
	{
		if (textlen >= NATS_CTL_MAX)
			return NATS_PARSE_BAD;
		memcpy(in->line, buf, textlen);
		in->line[textlen] = '\0';
		if (in->line[0] == '-')
		{
			in->kind = NATS_IN_ERR;
			return NATS_PARSE_ONE;
		}
		return parse_msg(buf, len, linelen, in->line[0] == 'H' || in->line[0] == 'h', in);
	}
	else
		return NATS_PARSE_BAD;
	return NATS_PARSE_ONE;
}
