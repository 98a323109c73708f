# core.mk — C shared by both hosts and every store: words, rules, settings,
# the store interface's helpers and their counters, the decision tables of
# lease and won/lost stores; and, for the database hosts only, the schedules
# with their time zones.
#
# No file is listed by hand: the schedules are core/schedule*.c and core/tz.c,
# anarchon_due's policy core/due.c (settings and schedules both, so only the
# hosts link it), the zones' source its own object (below), and every other
# core/*.c is the store protocol's.
SCHEDULE_SRCS = $(sort $(wildcard core/schedule*.c)) core/tz.c
DUE_SRCS = core/due.c
CORE_SRCS = $(filter-out $(SCHEDULE_SRCS) $(DUE_SRCS) core/tz_none.c,$(sort $(wildcard core/*.c)))

# The data of the zones is the host's (core/tz_source.h).  PostgreSQL links
# its own (pg/tz_pg.c, picked up with pg/*.c).  SQLite, the command and the
# test programs link the system's tz database through cctz when configure
# found it (core/tz_system.cc, the only C++ file), else core/tz_none.c,
# which refuses every zone naming the package.  The source is one object,
# built here, that SCHEDULE_LIBS carries to every link that needs it.
ifeq ($(AN_HAVE_CCTZ),yes)
TZ_SYSTEM_SRC = core/tz_system.cc
TZ_SYSTEM_LIBS = $(AN_CCTZ_LIBS) -lstdc++
else
TZ_SYSTEM_SRC = core/tz_none.c
TZ_SYSTEM_LIBS =
endif
TZ_SYSTEM_OBJ = build/tz/$(basename $(TZ_SYSTEM_SRC)).o
CXX ?= g++
TZ_SYSTEM_FLAGS = $(WERROR) -O2 -g -fPIC -Ibuild -Icore

build/tz/core/tz_system.o: core/tz_system.cc core/tz_source.h core/anarchon.h build/config.h core/core.mk
	@mkdir -p $(dir $@)
	$(CXX) $(TZ_SYSTEM_FLAGS) -std=c++17 $(AN_CCTZ_CFLAGS) -c -o $@ $<

build/tz/core/tz_none.o: core/tz_none.c core/tz_source.h core/anarchon.h build/config.h core/core.mk
	@mkdir -p $(dir $@)
	$(CC) $(TZ_SYSTEM_FLAGS) -std=c11 -c -o $@ $<

SCHEDULE_CFLAGS =
SCHEDULE_LIBS = $(TZ_SYSTEM_OBJ) $(TZ_SYSTEM_LIBS)
