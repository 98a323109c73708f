/*
 * storecheck.c — the store interface's shared parts without any server: the
 * error a store records (message, hint, and the one text SQLite shows) and
 * the check_url method, which refuses a bad store URL before anything
 * connects.  The store suite compares what this prints with a table.
 *
 * First a fixed sequence of the helpers of core/store.c, then the
 * administration table (core/store_admin.c): the one refusal of each duty a
 * store lacks, and every network store's declared bits against its methods;
 * then core/dl.c's errors for a client library not installed or too old;
 * then one line of stdin per URL: what an_remote_find and the store's
 * check_url make of it.
 */
#include <stdio.h>
#include <string.h>

#include "dl.h"
#include "remote.h"
#include "store.h"

static const char *const codes[] = {
	"OK", "INPUT", "CONFIG", "BUSY", "TIMEOUT", "CONNECT", "AUTH", "CANCELED",
	"UNSUPPORTED", "STORE", "STATE", "NOMEM", "INTERNAL"
};

static int	fake_calls;

static int
fake_check_url(an_store *st, const char *url)
{
	fake_calls++;
	an_store_fail(st, AN_E_CONFIG, "fake store refuses %s", url);
	return an_store_hintf(st, "Use %s instead.", "fake://ok");
}

/* A version 1 table cannot have check_url: a host must not read it. */
static const an_store_methods fake_v1 = {.version = 1, .name = "fake", .check_url = fake_check_url};
static const an_store_methods fake_v2 = {.version = 2, .name = "fake", .check_url = fake_check_url};
static const an_store_methods fake_v2_none = {.version = 2, .name = "fake"};

static int
fake_pause(an_store *st, const an_request *rq, int64_t until)
{
	(void) st, (void) rq, (void) until;
	return AN_OK;
}

static int
fake_resume(an_store *st, const an_request *rq, int *was)
{
	(void) st, (void) rq;
	*was = 0;
	return AN_OK;
}

/*
 * Declares run-now and prune as well, without their methods: they are not
 * its (a run-now was a method until version 10, a manual claim since).
 */
static const an_store_admin fake_admin = {.pause = fake_pause, .resume = fake_resume};
static const an_store_methods fake_v9 = {
	.version = 9, .name = "fake", .caps = AN_CAP_PAUSE | AN_CAP_RUN_NOW | AN_CAP_PRUNE, .admin = &fake_admin
};
/* Version 8 had no admin: whatever it declares, it has no duty of it. */
static const an_store_methods fake_v8 = {.version = 8, .name = "fake", .caps = AN_CAP_ADMIN};

static const struct
{
	unsigned	cap;
	const char *name;
}			duties[] = {
	{AN_CAP_PAUSE, "pause"}, {AN_CAP_PAUSED, "paused"}, {AN_CAP_PAUSES, "pauses"},
	{AN_CAP_RUN_NOW, "run_now"}, {AN_CAP_PRUNE, "prune"},
};

static void
caps_line(const char *what, unsigned caps)
{
	printf("%s:", what);
	for (size_t i = 0; i < sizeof(duties) / sizeof(duties[0]); i++)
		if (caps & duties[i].cap)
			printf(" %s", duties[i].name);
	printf("\n");
}

static void show(const char *what, const an_store *st);

static void
admin(void)
{
	static const char *const urls[] = {
		"redis://127.0.0.1:1/?strategy=lease", "nats://127.0.0.1:1", "amqp://127.0.0.1:1"
	};
	an_store	st;
	an_err		err;

	an_store_init(&st, &fake_v9, NULL);
	caps_line("a version 9 table's duties", st.caps);
	for (size_t i = 0; i < sizeof(duties) / sizeof(duties[0]); i++)
		if (!an_store_can(&st, duties[i].cap))
			show(duties[i].name, &st);
		else
			printf("%s: its own\n", duties[i].name);
	an_store_lacks(&st, AN_CAP_PAUSE, "with strategy x");
	an_store_admin_for(&st, AN_CAP_PAUSE);
	show("pause, given up when open", &st);
	an_store_admin_for(&st, AN_CAP_PRUNE);
	show("prune, not given up but lacked", &st);
	an_store_init(&st, &fake_v8, NULL);
	caps_line("a version 8 table's duties", st.caps);

	/* Each network store's declared bits are the methods it has. */
	for (size_t i = 0; i < sizeof(urls) / sizeof(urls[0]); i++)
	{
		const an_store_methods *m = an_remote_find(urls[i], &err);

		if (m == NULL)
		{
			printf("%s: not built: %s\n", urls[i], err.msg);
			continue;
		}
		caps_line(m->name, m->caps & AN_CAP_DUTIES);
		if ((m->caps & AN_CAP_ADMIN) != (an_store_admin_caps(m) & AN_CAP_ADMIN))
			caps_line("  declared without a method", (m->caps & ~an_store_admin_caps(m)) & AN_CAP_ADMIN);
	}
}

static void
show(const char *what, const an_store *st)
{
	char		text[AN_ERRTEXTMAX];

	printf("%s: err=%s msg=\"%s\" detail=\"%s\" hint=\"%s\" text=\"%s\"\n", what, codes[st->err.code],
		   st->err.msg, st->err.detail, st->err.hint, an_err_text(&st->err, text, sizeof(text)));
}

static void
helpers(void)
{
	an_store	st;
	int			rc;

	an_store_init(&st, &fake_v2, NULL);
	show("init", &st);
	an_store_fail(&st, AN_E_CONFIG, "window_ms (%d ms) is shorter than max_late_ms", 1000);
	show("fail", &st);
	rc = an_store_hintf(&st, "Raise window_ms to at least max_late_ms (%d ms).", 60000);
	printf("hintf returns %s\n", codes[rc]);
	show("hint", &st);
	rc = an_store_detailf(&st, "A late claim could win a slot the store has already forgotten.");
	printf("detailf returns %s\n", codes[rc]);
	show("detail", &st);
	an_store_fail(&st, AN_E_CONNECT, "cannot connect");
	show("a new error drops the old detail and hint", &st);
	an_store_clear(&st);
	show("clear", &st);

	an_store_init(&st, &fake_v1, NULL);
	rc = an_store_check_url(&st, "fake://x");
	printf("check_url of a version 1 table: %s, called %d times\n", codes[rc], fake_calls);
	an_store_init(&st, &fake_v2_none, NULL);
	rc = an_store_check_url(&st, "fake://x");
	printf("check_url of a version 2 table without one: %s\n", codes[rc]);
	an_store_init(&st, &fake_v2, NULL);
	rc = an_store_check_url(&st, "fake://x");
	printf("check_url of a version 2 table: %s, called %d times\n", codes[rc], fake_calls);
	show("its error", &st);
}

static const char *
fill_nothing(void *handle)
{
	(void) handle;
	return NULL;
}

static const char *
fill_lacking(void *handle)
{
	return an_dl_sym(handle, "an_no_such_function") ? NULL : "an_no_such_function";
}

/* What a host says when a store's client library is not there, or lacks a function. */
static void
dl(void)
{
	an_dl_lib	none = {"libanarchon-none.so.0", "the none:// store", "anarchon-none", fill_nothing, 0};
	an_dl_lib	old = {"libc.so.6", "the old:// store", "libc6", fill_lacking, 0};
	an_dl_lib	libc = {"libc.so.6", "the libc:// store", "libc6", fill_nothing, 0};
	char		text[AN_ERRTEXTMAX];
	an_err		err;
	int			rc;

	an_err_clear(&err);
	rc = an_dl_load(&none, &err);
	printf("dl: not installed: %s: %s\n", codes[rc], an_err_text(&err, text, sizeof(text)));
	an_err_clear(&err);
	rc = an_dl_load(&old, &err);
	printf("dl: lacking a function: %s: %s\n", codes[rc], an_err_text(&err, text, sizeof(text)));
	an_err_clear(&err);
	rc = an_dl_load(&libc, &err);
	printf("dl: there: %s, loaded %d", codes[rc], libc.loaded);
	rc = an_dl_load(&libc, &err);
	printf(", again: %s, error \"%s\"\n", codes[rc], err.msg);
}

int
main(void)
{
	char		line[8192];

	helpers();
	admin();
	dl();
	while (fgets(line, sizeof(line), stdin))
	{
		an_err		err;
		char		text[AN_ERRTEXTMAX];
		const an_store_methods *m;
		an_store	st;
		int			rc;

		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#' || line[0] == '\0')
			continue;
		if ((m = an_remote_find(line, &err)) == NULL)
		{
			printf("%s -> no store: %s\n", line, err.msg);
			continue;
		}
		an_store_init(&st, m, NULL);
		rc = an_store_check_url(&st, line);
		if (rc == AN_OK)
			printf("%s -> %s ok", line, m->name);
		else
			printf("%s -> %s error %s: %s", line, m->name, codes[rc],
				   an_err_text(&st.err, text, sizeof(text)));
		/* check_url keeps nothing: close is never needed after it. */
		printf("%s\n", st.impl == NULL ? "" : " (impl left behind)");
	}
	return 0;
}
