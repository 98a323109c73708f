/*
 * nats_codec_test.c — the NATS reader (stores/nats/nats_codec.c) on a table of
 * inputs, without a server: what each input is read as, and that every
 * input read whole is read the same when it arrives a byte at a time and
 * when several arrive together.  Prints TAP lines for the remote suite; the
 * exit status is the number of failures.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nats_codec.h"

typedef struct codec_case
{
	const char *name;
	const char *input;
	int			want;            /* NATS_PARSE_* */
	nats_in_kind kind;           /* when NATS_PARSE_ONE */
	size_t		used;            /* when NATS_PARSE_ONE */
	const char *subject;         /* NATS_IN_MSG */
	const char *data;            /* NATS_IN_MSG */
	size_t		hdrlen;          /* NATS_IN_MSG */
} codec_case;

#define ONE(n, in, k, u) {n, in, NATS_PARSE_ONE, k, u, NULL, NULL, 0}
#define MSG(n, in, u, s, d, h) {n, in, NATS_PARSE_ONE, NATS_IN_MSG, u, s, d, h}
#define NOT(n, in, w) {n, in, w, NATS_IN_SKIP, 0, NULL, NULL, 0}

static const codec_case cases[] = {
	ONE("PING", "PING\r\n", NATS_IN_PING, 6),
	ONE("PONG", "PONG\r\n", NATS_IN_PONG, 6),
	ONE("lower-case ping", "ping\r\n", NATS_IN_PING, 6),
	ONE("PING without \\r", "PING\n", NATS_IN_PING, 5),
	ONE("+OK (three letters)", "+OK\r\n", NATS_IN_SKIP, 5),
	ONE("INFO", "INFO {\"server_id\":\"x\",\"headers\":true}\r\n", NATS_IN_SKIP, 39),
	ONE("-ERR", "-ERR 'Authorization Violation'\r\n", NATS_IN_ERR, 32),
	MSG("MSG", "MSG _INBOX.x.1 1 5\r\nhello\r\n", 27, "_INBOX.x.1", "hello", 0),
	MSG("MSG with a reply subject", "MSG a.b 1 r.s 2\r\nhi\r\n", 21, "a.b", "hi", 0),
	MSG("MSG with no data", "MSG a.b 1 0\r\n\r\n", 15, "a.b", "", 0),
	MSG("MSG whose data holds \\r\\n", "MSG a.b 1 4\r\n\r\n\r\n\r\n", 19, "a.b", "\r\n\r\n", 0),
	MSG("HMSG, no responders", "HMSG a.b 1 16 16\r\nNATS/1.0 503\r\n\r\n\r\n", 36, "a.b", "", 16),
	MSG("HMSG with data", "HMSG a.b 1 12 14\r\nNATS/1.0\r\n\r\nok\r\n", 34, "a.b", "ok", 12),
	NOT("nothing", "", NATS_PARSE_MORE),
	NOT("half a line", "PIN", NATS_PARSE_MORE),
	NOT("a MSG line without its data", "MSG a.b 1 5\r\nhel", NATS_PARSE_MORE),
	NOT("a MSG without \\r\\n after its data", "MSG a.b 1 5\r\nhelloXY", NATS_PARSE_BAD),
	NOT("a MSG of a negative size", "MSG a.b 1 -1\r\n", NATS_PARSE_BAD),
	NOT("a MSG of a signed size", "MSG a.b 1 +1\r\n", NATS_PARSE_BAD),
	NOT("a MSG of a size with letters", "MSG a.b 1 5x\r\n", NATS_PARSE_BAD),
	NOT("a MSG with too few words", "MSG a.b 5\r\n", NATS_PARSE_BAD),
	NOT("a MSG with too many words", "MSG a.b 1 r.s x 5\r\n", NATS_PARSE_BAD),
	NOT("an HMSG whose headers are longer than the whole", "HMSG a.b 1 9 3\r\n", NATS_PARSE_BAD),
	NOT("a MSG announcing 2 MB", "MSG a.b 1 2000000\r\n", NATS_PARSE_TOO_BIG),
	NOT("a MSG announcing just over the cap", "MSG a.b 1 1048560\r\n", NATS_PARSE_TOO_BIG),
	NOT("a MSG announcing 10^23 bytes", "MSG a.b 1 100000000000000000000000\r\n", NATS_PARSE_TOO_BIG),
	NOT("an unknown verb", "HELLO\r\n", NATS_PARSE_BAD),
	NOT("an empty line", "\r\n", NATS_PARSE_BAD),
	NOT("a bare line feed", "\n", NATS_PARSE_BAD),
};

static int	failures;
static int	checks;

static void
report(int good, const char *what, const char *name)
{
	checks++;
	if (!good)
		failures++;
	printf("%s - nats codec: %s: %s\n", good ? "ok" : "not ok", name, what);
}

/* Parse exactly len bytes from a copy of their own, so a read past them shows under valgrind. */
static int
parse_exact(const char *input, size_t len, nats_in *in, char **copy)
{
	*copy = malloc(len ? len : 1);
	if (*copy == NULL)
	{
		perror("malloc");
		exit(99);
	}
	memcpy(*copy, input, len);
	return nats_parse(*copy, len, in);
}

static int
matches(const codec_case *c, int got, const nats_in *in)
{
	if (got != c->want)
		return 0;
	if (got != NATS_PARSE_ONE)
		return 1;
	if (in->kind != c->kind || in->used != c->used)
		return 0;
	if (c->kind != NATS_IN_MSG)
		return 1;
	return strcmp(in->subject, c->subject) == 0 && in->datalen == strlen(c->data) &&
		memcmp(in->data, c->data, in->datalen) == 0 && in->hdrlen == c->hdrlen &&
		(c->hdrlen == 0) == (in->hdr == NULL);
}

/* The case as a whole. */
static void
check_whole(const codec_case *c)
{
	nats_in		in;
	char	   *copy;
	int			got = parse_exact(c->input, strlen(c->input), &in, &copy);

	report(matches(c, got, &in), "read as expected", c->name);
	free(copy);
}

/*
 * Every beginning of a complete input is "more", never bad or another
 * thing: a reply split by the network anywhere is read the same.
 */
static void
check_split(const codec_case *c)
{
	int			good = 1;

	for (size_t k = 0; k < c->used && good; k++)
	{
		nats_in		in;
		char	   *copy;

		good = parse_exact(c->input, k, &in, &copy) == NATS_PARSE_MORE;
		free(copy);
	}
	report(good, "every beginning of it asks for more bytes", c->name);
}

/* All complete inputs in a row: each read in turn, each where it starts. */
static void
check_stream(void)
{
	char	   *all = NULL;
	size_t		len = 0;
	size_t		off = 0;
	int			good = 1;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		const codec_case *c = &cases[i];

		if (c->want != NATS_PARSE_ONE)
			continue;
		all = realloc(all, len + c->used);
		if (all == NULL)
			exit(99);
		memcpy(all + len, c->input, c->used);
		len += c->used;
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]) && good; i++)
	{
		const codec_case *c = &cases[i];
		nats_in		in;

		if (c->want != NATS_PARSE_ONE)
			continue;
		good = matches(c, nats_parse(all + off, len - off, &in), &in);
		off += in.used;
	}
	report(good && off == len, "read one after another from one buffer", "every complete input");
	free(all);
}

/* A line as long as the cap of a control line is refused, one byte less is read. */
static void
check_long_err(void)
{
	char	   *line = malloc(NATS_CTL_MAX + 3);
	nats_in		in;

	if (line == NULL)
		exit(99);
	memset(line, 'x', NATS_CTL_MAX + 2);
	memcpy(line, "-ERR ", 5);
	memcpy(line + NATS_CTL_MAX - 1, "\r\n", 2);
	report(nats_parse(line, NATS_CTL_MAX + 1, &in) == NATS_PARSE_ONE && in.kind == NATS_IN_ERR &&
		   strlen(in.line) == NATS_CTL_MAX - 1, "read", "an -ERR line one byte under the cap");
	memset(line, 'x', NATS_CTL_MAX + 2);
	memcpy(line, "-ERR ", 5);
	memcpy(line + NATS_CTL_MAX, "\r\n", 2);
	report(nats_parse(line, NATS_CTL_MAX + 2, &in) == NATS_PARSE_BAD, "refused", "an -ERR line at the cap");
	free(line);
}

int
main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		check_whole(&cases[i]);
		if (cases[i].want == NATS_PARSE_ONE)
			check_split(&cases[i]);
	}
	check_stream();
	check_long_err();
	printf("# nats codec: %d checks, %d failed\n", checks, failures);
	/* The plan at the end: a run that stopped early has none, and prove fails it. */
	printf("1..%d\n", checks);
	return failures;
}
