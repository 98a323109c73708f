# pg.mk — the PostgreSQL extension, built with PGXS (included by the top-level
# Makefile before $(PGXS)).
#
# The install script anarchon--<version>.sql is assembled at build time from
# the ordered pieces pg/sql/NN-*.sql, so another part of anarchon adds its SQL
# objects as a new piece (e.g. pg/sql/50-schedule.sql) without editing these.
# Upgrade scripts anarchon--A--B.sql live in pg/upgrade/ and are installed as
# they are.  The C sources are every pg/*.c plus the core and remote objects.

AN_PG_VERSION := $(shell sed -n 's/^\#define AN_VERSION "\(.*\)"/\1/p' core/anarchon.h)

MODULE_big = anarchon
OBJS = $(patsubst %.c,%.o,$(sort $(wildcard pg/*.c)) $(CORE_SRCS) $(SCHEDULE_SRCS) $(DUE_SRCS) $(REMOTE_SRCS))
PG_CPPFLAGS = -Ibuild -Icore $(REMOTE_INCLUDES) -Ipg $(REMOTE_CFLAGS) $(SCHEDULE_CFLAGS)
PG_CFLAGS = -Wall -Wextra -Werror -Wno-unused-parameter
# Only the entry points are exported.  -z defs cannot be used here: the
# module's references to the server (palloc, SPI, ...) resolve only when the
# postgres executable loads it; test/build checks them against it instead.
# Time zones are the server's own (pg/tz_pg.c): SCHEDULE_LIBS, the system's
# tz database for the other hosts, is not linked here.
SHLIB_LINK = $(REMOTE_LIBS) -lm -Wl,--version-script=pg/exports.map

AN_PG_SCRIPT = pg/anarchon--$(AN_PG_VERSION).sql
AN_PG_PIECES = $(sort $(wildcard pg/sql/*.sql))
# Without EXTENSION (the control file is in pg/, not at the top), PGXS would
# install DATA into contrib/.
MODULEDIR = extension
# The query file for prometheus-postgres-exporter goes next to the scripts
# (share/extension), where an installed server's pg_config finds it.
DATA = pg/anarchon.control $(wildcard pg/upgrade/anarchon--*--*.sql) pg/prometheus/anarchon-queries.yaml
DATA_built = $(AN_PG_SCRIPT)

# pg_regress: every sql/NAME.sql against expected/NAME.out (make installcheck),
# install first (it drops and creates the extension), the rest by name.
REGRESS = install $(filter-out install,$(sort $(basename $(notdir $(wildcard sql/*.sql)))))
REGRESS_OPTS = --inputdir=.

EXTRA_CLEAN += pg/anarchon--*.sql.tmp

# The core and remote sources are written for C11 (the SQLite build compiles
# them with -std=c11), where declarations may follow statements; PostgreSQL's
# own flags would turn that style into an error here.
$(patsubst %.c,%.o,$(CORE_SRCS) $(SCHEDULE_SRCS) $(DUE_SRCS) $(REMOTE_SRCS)): override CFLAGS += -Wno-declaration-after-statement

$(AN_PG_SCRIPT): $(AN_PG_PIECES) core/anarchon.h pg/pg.mk
	cat $(AN_PG_PIECES) > $@.tmp
	mv $@.tmp $@

# PGXS tracks no header dependencies: every object depends on every header
# and on what configure found.
$(OBJS): $(wildcard pg/*.h core/*.h) $(REMOTE_HEADERS) build/config.h
anarchon.so: pg/exports.map
