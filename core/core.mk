# core.mk — the store protocol, shared by every host and store: words, rules,
# settings, the store interface's helpers, its administration and counters,
# the decision tables of lease and won/lost stores.  Every core/*.c; no file
# is listed by hand.  The schedules and time zones are schedule/'s
# (schedule/schedule.mk).
CORE_SRCS = $(sort $(wildcard core/*.c))
