# anarchon — one claim per (job, slot), decided in PostgreSQL, SQLite or a
# network store.
#
#   make            the PostgreSQL extension (PGXS; needs postgresql-server-dev)
#   make install    install it into the PostgreSQL found by pg_config
#   make uninstall  remove those files (PGXS); no database is touched
#   make sqlite     sqlite/anarchon.so, the SQLite loadable extension
#   make install-sqlite  install it in $(PREFIX)/lib/sqlite3 (PREFIX=/usr/local)
#   make uninstall-sqlite, make uninstall-cli  remove what those installed
#   make cli       cli/anarchon, the command for crontabs and systemd timers
#   make install-cli  install it and its man page under $(PREFIX)
#   make deb        Debian packages in build/deb/ (postgresql-NN-anarchon,
#                   libsqlite3-mod-anarchon, anarchon-cli)
#   make demo       several SQLite instances contend for one schedule
#   make test       install what is missing, start the servers, run every suite
#   make bench      throughput as ratios against each store's own primitive
#   make test-platforms  every suite again in Debian 13 and sid chroots
#   make soak       the fault suite at full size: 10^5 claims per store
#   make fuzz       every fuzz target for FUZZ_SECONDS (300) each, new inputs
#                   kept in build/fuzz-corpus/ (test/fuzz/run.sh; needs clang)
#
# The PostgreSQL part is optional at build time: without pg_config the sqlite,
# demo and bench targets still work.

CC ?= cc
# Warnings are errors in development and CI builds only (`make test` sets
# ANARCHON_DEV=1): a user's newer compiler may warn about what ours does not,
# and must not fail the build for it (doc/building.md, "Warnings").
ANARCHON_DEV ?=
WERROR = -Wall -Wextra $(if $(filter 1,$(ANARCHON_DEV)),-Werror)
PKG_CONFIG ?= pkg-config
PG_CONFIG ?= pg_config

# ---------------------------------------------------------------- configure
#
# build/config.mk and build/config.h say which client libraries were found
# (see configure).  configure runs again when the package database changed
# since its last run, or when CC, PKG_CONFIG, PG_CONFIG or ANARCHON_DEV differ from what it
# recorded; it rewrites a file only when its content changes, and every
# object depends on build/config.h.
-include build/config.mk

AN_CONFIG_INPUTS = $(CC)|$(PKG_CONFIG)|$(PG_CONFIG)|$(ANARCHON_DEV)
ifneq ($(AN_CONFIGURED_INPUTS),$(AN_CONFIG_INPUTS))
AN_RECONFIGURE = reconfigure
endif

build/config.stamp: configure VERSION $(wildcard /var/lib/dpkg/status) $(AN_RECONFIGURE)
	@CC='$(CC)' PKG_CONFIG='$(PKG_CONFIG)' PG_CONFIG='$(PG_CONFIG)' ANARCHON_DEV='$(ANARCHON_DEV)' sh ./configure --quiet

build/config.mk build/config.h: build/config.stamp ;

.PHONY: reconfigure
reconfigure:

include core/core.mk
include schedule/schedule.mk
include stores/stores.mk
include libs.mk

# Only the entry points leave the shared objects (pg/exports.map, sqlite/exports.map), and the
# SQLite extension must resolve every symbol at link time (-z defs).
AN_SO_LDFLAGS = -Wl,-z,defs -Wl,--version-script=sqlite/exports.map

# ---------------------------------------------------------------- SQLite

SQLITE_SRCS = $(wildcard sqlite/*.c)
SQLITE_CFLAGS = $(WERROR) -std=c11 -D_GNU_SOURCE -O2 -g -fPIC -Ibuild -Icore $(REMOTE_INCLUDES) $(REMOTE_CFLAGS) \
	$(SCHEDULE_CFLAGS) $(AN_SQLITE_CFLAGS)
SQLITE_OBJS = $(patsubst %.c,build/sqlite/%.o,$(SQLITE_SRCS))
SQLITE_HEADERS = $(wildcard core/*.h schedule/*.h sqlite/*.h) $(REMOTE_HEADERS) build/config.h

.PHONY: sqlite install-sqlite uninstall-sqlite deb demo test test-platforms soak bench

sqlite: sqlite/anarchon.so

sqlite/anarchon.so: $(SQLITE_OBJS) $(AN_LIBS) $(TZ_SYSTEM_OBJ) sqlite/exports.map
	$(CC) -shared $(AN_SO_LDFLAGS) -o $@ $(SQLITE_OBJS) $(AN_LINK_LIBS) $(REMOTE_LIBS) $(SCHEDULE_LIBS) -lm

# Where `.load` and load_extension() find it when given this folder's path.
PREFIX ?= /usr/local
SQLITE_EXTDIR ?= $(PREFIX)/lib/sqlite3

install-sqlite: sqlite/anarchon.so
	install -d $(DESTDIR)$(SQLITE_EXTDIR)
	install -m 644 sqlite/anarchon.so $(DESTDIR)$(SQLITE_EXTDIR)/anarchon.so

# Removes what install-sqlite installed, nothing else: a database file's
# tables and runs are the application's and stay.
uninstall-sqlite:
	rm -f $(DESTDIR)$(SQLITE_EXTDIR)/anarchon.so
	-rmdir $(DESTDIR)$(SQLITE_EXTDIR) 2> /dev/null

# postgresql-NN-anarchon for each installed PostgreSQL, libsqlite3-mod-anarchon and
# anarchon-cli, each built from the sources in a copy (debian/build-debs.sh).
deb:
	@bash debian/build-debs.sh

build/sqlite/%.o: %.c $(SQLITE_HEADERS) core/core.mk schedule/schedule.mk stores/stores.mk $(wildcard stores/*/*.mk)
	@mkdir -p $(dir $@)
	$(CC) $(SQLITE_CFLAGS) -c -o $@ $<

# ---------------------------------------------------------------- the command

include cli/cli.mk

# ---------------------------------------------------------------- tools and suites

include test/test.mk

demo:
	@bash test/demo.sh

test:
	@bash test/run

test-platforms:
	@bash test/platforms.sh

soak:
	@ANARCHON_FAULT_SLOTS=$${ANARCHON_FAULT_SLOTS:-1250} ANARCHON_FAULT_STEP_MS=$${ANARCHON_FAULT_STEP_MS:-20} \
		ANARCHON_FAULT_TABLE=$(CURDIR)/doc/fault-table.md \
		ANARCHON_SUITES=fault bash test/run

bench:
	@bash test/bench/run

# test/fuzz/build.mk builds the targets; FUZZ_SECONDS=N runs each for N s.
.PHONY: fuzz
fuzz:
	@bash test/fuzz/run.sh --long

# ---------------------------------------------------------------- PostgreSQL (PGXS)

PGXS := $(AN_PGXS)

ifneq ($(wildcard pg/pg.mk),)
include pg/pg.mk
endif

EXTRA_CLEAN += build sqlite/anarchon.so cli/anarchon test/bin bench.json

ifneq ($(PGXS),)
.DEFAULT_GOAL := all
include $(PGXS)
else
.DEFAULT_GOAL := all
all:
	@echo "PostgreSQL server headers not found (no pg_config --pgxs)." >&2
	@echo "Install them with: apt-get install postgresql-server-dev-15" >&2
	@echo "(make sqlite and make demo do not need them.)" >&2
	@exit 1
clean:
	rm -rf $(EXTRA_CLEAN)
endif
