# cli.mk — the third host: the `anarchon` command (cli/), for crontabs and
# systemd timers.  It links the same core/, stores/ and net/ as the extensions, the
# SQLite local store compiled against the SQLite library itself (SQLITE_CORE:
# the same source as the extension's, calling libsqlite3 directly), and, for
# postgresql:// stores, libpq: its header at build time, the library itself
# loaded only when such a store is opened (cli/store_pg_api.h says why).  A
# build without libpq's header links the stand-in cli/store_pg_none.c
# instead, which refuses such URLs.
CLI_PG_SRCS = $(filter-out cli/store_pg_none.c,$(wildcard cli/store_pg*.c))
ifeq ($(AN_HAVE_LIBPQ),yes)
CLI_SRCS = $(filter-out cli/store_pg_none.c,$(wildcard cli/*.c))
else
CLI_SRCS = $(filter-out $(CLI_PG_SRCS),$(wildcard cli/*.c))
endif
CLI_SQLITE_SRCS = sqlite/local_store.c sqlite/format.c sqlite/local_pause.c sqlite/local_recall.c sqlite/claim_conn.c sqlite/clock.c
CLI_CFLAGS = $(WERROR) -std=c11 -D_GNU_SOURCE -O2 -g -Ibuild -Icore -Icli -Isqlite -DSQLITE_CORE \
	$(REMOTE_INCLUDES) $(REMOTE_CFLAGS) $(SCHEDULE_CFLAGS) $(AN_SQLITE_CFLAGS) $(AN_LIBPQ_CFLAGS)
CLI_OBJS = $(patsubst %.c,build/cli/%.o,$(CLI_SRCS) $(CLI_SQLITE_SRCS))
CLI_HEADERS = $(wildcard cli/*.h core/*.h schedule/*.h sqlite/*.h) $(REMOTE_HEADERS) build/config.h

.PHONY: cli install-cli uninstall-cli

cli: cli/anarchon

cli/anarchon: $(CLI_OBJS) $(AN_LIBS) $(TZ_SYSTEM_OBJ)
	$(CC) -o $@ $(CLI_OBJS) $(AN_LINK_LIBS) $(REMOTE_LIBS) $(SCHEDULE_LIBS) $(AN_SQLITE_LIBS) -ldl -pthread -lm

build/cli/%.o: %.c $(CLI_HEADERS) cli/cli.mk core/core.mk schedule/schedule.mk stores/stores.mk $(wildcard stores/*/*.mk)
	@mkdir -p $(dir $@)
	$(CC) $(CLI_CFLAGS) -c -o $@ $<

# The example systemd units name the command where this install puts it
# (/usr/local/bin by default, /usr/bin from the package).
CLI_EXAMPLES = $(DESTDIR)$(PREFIX)/share/doc/anarchon/examples

install-cli: cli/anarchon
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 $(CLI_EXAMPLES)
	install -m 755 cli/anarchon $(DESTDIR)$(PREFIX)/bin/anarchon
	install -m 644 cli/anarchon.1 $(DESTDIR)$(PREFIX)/share/man/man1/anarchon.1
	sed 's|@BINDIR@|$(PREFIX)/bin|g' cli/examples/report.service.in > $(CLI_EXAMPLES)/report.service
	chmod 644 $(CLI_EXAMPLES)/report.service
	install -m 644 cli/examples/report.timer $(CLI_EXAMPLES)/report.timer

# Removes what install-cli installed; the stores and their runs stay.
uninstall-cli:
	rm -f $(DESTDIR)$(PREFIX)/bin/anarchon $(DESTDIR)$(PREFIX)/share/man/man1/anarchon.1 \
		$(CLI_EXAMPLES)/report.service $(CLI_EXAMPLES)/report.timer
	-rmdir $(CLI_EXAMPLES) $(DESTDIR)$(PREFIX)/share/doc/anarchon 2> /dev/null
