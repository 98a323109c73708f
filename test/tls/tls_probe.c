/* tls_probe — connect, handshake, send a line, read the answer: prints "ok N" or "error CODE: message". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "sock.h"
#include "tls.h"

static int64_t
now_ms(void *ctx)
{
	struct timespec ts;
	(void) ctx;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *
arg(const char *s)
{
	return strcmp(s, "-") == 0 ? NULL : s;
}

int
main(int argc, char **argv)
{
	an_host		host = {.now_ms = now_ms};
	an_store	st;
	an_tls_config cfg = {0};
	an_tls_ctx *ctx = NULL;
	an_tls	   *t = NULL;
	an_deadline d;
	int			fd = -1;
	char		buf[4096];
	size_t		got = 0, total = 0;
	int			rc;

	if (argc != 10)
	{
		fprintf(stderr, "usage: tls_probe HOST PORT CA CERT KEY SERVERNAME INSECURE TIMEOUT_MS SEND\n");
		return 2;
	}
	memset(&st, 0, sizeof(st));
	st.host = &host;
	cfg.ca = arg(argv[3]);
	cfg.cert = arg(argv[4]);
	cfg.key = arg(argv[5]);
	cfg.servername = arg(argv[6]);
	cfg.insecure = atoi(argv[7]);
	an_deadline_start(&d, atoll(argv[8]));
	if ((rc = an_tls_ctx_new(&st, &cfg, "probe", &ctx)) == AN_OK &&
		(rc = an_sock_connect(&st, "probe", argv[1], atoi(argv[2]), &d, &fd)) == AN_OK &&
		(rc = an_tls_connect(&st, ctx, fd, argv[1], &d, "probe", &t)) == AN_OK &&
		(rc = an_tls_send(&st, t, argv[9], strlen(argv[9]), &d, "probe", "the request")) == AN_OK)
	{
		while ((rc = an_tls_recv(&st, t, buf, sizeof(buf), &got, &d, "probe", "the answer")) == AN_OK)
			total += got;
		if (total > 0 && rc == AN_E_CONNECT)
			rc = AN_OK;
	}
	if (rc == AN_OK)
		printf("ok %zu\n", total);
	else
		printf("error %d: %s%s%s\n", rc, st.err.msg, st.err.hint[0] ? " | " : "", st.err.hint);
	an_tls_free(t, 1);
	if (fd >= 0)
		close(fd);
	an_tls_ctx_free(ctx);
	return rc == AN_OK ? 0 : 1;
}
