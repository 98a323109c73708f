# anarchon — one claim per (job, slot), decided in PostgreSQL, SQLite or a
# network store.
#
#   make            the PostgreSQL extension (PGXS; needs postgresql-server-dev)
#   make install    install it into the PostgreSQL found by pg_config
#   make sqlite     sqlite/anarchon.so, the SQLite loadable extension
#   make demo       several SQLite instances contend for one schedule
#   make test       install what is missing, start the servers, run every suite
#   make bench      throughput as ratios against each store's own primitive
#
# The PostgreSQL part is optional at build time: without pg_config the sqlite,
# demo and bench targets still work.

CC ?= cc
WERROR = -Wall -Wextra -Werror
PKG_CONFIG ?= pkg-config

include core/core.mk
include remote/remote.mk

# ---------------------------------------------------------------- SQLite

SQLITE_SRCS = $(wildcard sqlite/*.c)
SQLITE_CFLAGS = $(WERROR) -std=c11 -D_GNU_SOURCE -O2 -g -fPIC -Icore -Iremote $(REMOTE_CFLAGS) \
	$(shell $(PKG_CONFIG) --cflags sqlite3 2>/dev/null)
SQLITE_OBJS = $(patsubst %.c,build/sqlite/%.o,$(SQLITE_SRCS) $(CORE_SRCS) $(REMOTE_SRCS))
SQLITE_HEADERS = $(wildcard core/*.h sqlite/*.h remote/*.h)

.PHONY: sqlite demo test bench

sqlite: sqlite/anarchon.so

sqlite/anarchon.so: $(SQLITE_OBJS)
	$(CC) -shared -o $@ $^ $(REMOTE_LIBS) -lm

build/sqlite/%.o: %.c $(SQLITE_HEADERS) core/core.mk remote/remote.mk
	@mkdir -p $(dir $@)
	$(CC) $(SQLITE_CFLAGS) -c -o $@ $<

# ---------------------------------------------------------------- tools and suites

include test/test.mk

demo:
	@bash test/demo.sh

test:
	@bash test/run

bench:
	@bash test/bench/run

# ---------------------------------------------------------------- PostgreSQL (PGXS)

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs 2>/dev/null)

ifneq ($(wildcard pg/pg.mk),)
include pg/pg.mk
endif

EXTRA_CLEAN += build sqlite/anarchon.so test/bin bench.json

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
