# schedule.mk — schedules, time zones and due slots: what the hosts and the
# command need to know when a job's slots are.  It calls core/ (validation),
# never the stores.  Every schedule/*.c but the zones' sources, which are one
# object of their own (below); no file is listed by hand.  anarchon_due's
# policy (due.c) reads settings and schedules both, so only the hosts link it.
SCHEDULE_SRCS = $(filter-out schedule/due.c schedule/tz_none.c,$(sort $(wildcard schedule/*.c)))
DUE_SRCS = schedule/due.c
SCHEDULE_CFLAGS = -Ischedule

# The data of the zones is the host's (schedule/tz_source.h).  PostgreSQL
# links its own (pg/tz_pg.c, picked up with pg/*.c).  SQLite, the command and
# the test programs link the system's tz database through cctz when configure
# found it (schedule/tz_system.cc, the only C++ file), else
# schedule/tz_none.c, which refuses every zone naming the package.  The
# source is one object, built here, that SCHEDULE_LIBS carries to every link
# that needs it.
ifeq ($(AN_HAVE_CCTZ),yes)
TZ_SYSTEM_SRC = schedule/tz_system.cc
TZ_SYSTEM_LIBS = $(AN_CCTZ_LIBS) -lstdc++
else
TZ_SYSTEM_SRC = schedule/tz_none.c
TZ_SYSTEM_LIBS =
endif
TZ_SYSTEM_OBJ = build/tz/$(basename $(TZ_SYSTEM_SRC)).o
CXX ?= g++
TZ_SYSTEM_FLAGS = $(WERROR) -O2 -g -fPIC -Ibuild -Icore -Ischedule

build/tz/schedule/tz_system.o: schedule/tz_system.cc schedule/tz_source.h core/anarchon.h build/config.h schedule/schedule.mk
	@mkdir -p $(dir $@)
	$(CXX) $(TZ_SYSTEM_FLAGS) -std=c++17 $(AN_CCTZ_CFLAGS) -c -o $@ $<

build/tz/schedule/tz_none.o: schedule/tz_none.c schedule/tz_source.h core/anarchon.h build/config.h schedule/schedule.mk
	@mkdir -p $(dir $@)
	$(CC) $(TZ_SYSTEM_FLAGS) -std=c11 -c -o $@ $<

SCHEDULE_LIBS = $(TZ_SYSTEM_OBJ) $(TZ_SYSTEM_LIBS)
