# core.mk — C shared by both hosts and every store: words, rules, settings,
# the store interface's helpers and the lease decision table.
CORE_SRCS = core/names.c core/validate.c core/settings.c core/store.c core/lease.c core/schedule.c core/schedule_search.c
