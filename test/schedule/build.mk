# build.mk — the schedule parser's table test, linked against the core
# sources it tests (no database needed).
SCHEDULE_TEST_SRCS = test/schedule/schedule_test.c core/schedule.c core/schedule_search.c core/validate.c

test-programs: test/bin/schedule_test

test/bin/schedule_test: $(SCHEDULE_TEST_SRCS) core/schedule.h core/anarchon.h build/config.h
	@mkdir -p test/bin
	$(CC) $(TEST_CFLAGS) -Icore -o $@ $(SCHEDULE_TEST_SRCS) -lm
