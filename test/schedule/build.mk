# build.mk — the schedule parser's table test, linked against the core
# sources it tests (no database needed; time zones from ICU, as configured).
SCHEDULE_TEST_SRCS = test/schedule/schedule_test.c $(SCHEDULE_SRCS) core/validate.c

test-programs: test/bin/schedule_test

test/bin/schedule_test: $(SCHEDULE_TEST_SRCS) core/schedule.h core/schedule_wall.h core/tz.h core/anarchon.h build/config.h
	@mkdir -p test/bin
	$(CC) $(TEST_CFLAGS) $(SCHEDULE_CFLAGS) -Icore -o $@ $(SCHEDULE_TEST_SRCS) $(SCHEDULE_LIBS) -lm
