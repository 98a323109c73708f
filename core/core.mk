# core.mk — C shared by both hosts and every store: words, rules, settings,
# the store interface's helpers and their counters, the decision tables of
# lease and won/lost stores; and, for the two database hosts only, the
# schedules with their time zones.
CORE_SRCS = core/names.c core/validate.c core/settings.c core/store.c core/stats.c core/lease.c core/wonlost.c
SCHEDULE_SRCS = core/schedule.c core/schedule_search.c core/schedule_zone.c core/schedule_range.c \
	core/schedule_fire.c core/tz.c
# Time zones come from ICU when configure found it (core/tz.h); only the
# schedule sources need these flags.
SCHEDULE_CFLAGS = $(AN_ICU_CFLAGS)
SCHEDULE_LIBS = $(AN_ICU_LIBS)
