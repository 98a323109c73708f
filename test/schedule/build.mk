# build.mk — the schedule parser's table test and the property test over
# every zone, linked against the libraries they test (no database needed;
# time zones from the system's tz database, as configured).
SCHEDULE_TEST_SRCS = test/schedule/schedule_test.c
PROPERTY_TEST_SRCS = test/schedule/property_test.c
SCHEDULE_TEST_LIBS = -Wl,--start-group $(AN_SCHEDULE_LIB) $(AN_CORE_LIB) -Wl,--end-group

test-programs: test/bin/schedule_test test/bin/property_test

test/bin/schedule_test: $(SCHEDULE_TEST_SRCS) $(AN_SCHEDULE_LIB) $(AN_CORE_LIB) $(TZ_SYSTEM_OBJ) schedule/schedule.h schedule/schedule_wall.h schedule/tz.h core/anarchon.h build/config.h
	@mkdir -p test/bin
	$(CC) $(TEST_CFLAGS) $(SCHEDULE_CFLAGS) -Icore -o $@ $(SCHEDULE_TEST_SRCS) $(SCHEDULE_TEST_LIBS) $(SCHEDULE_LIBS) -lm

test/bin/property_test: $(PROPERTY_TEST_SRCS) $(AN_SCHEDULE_LIB) $(AN_CORE_LIB) $(TZ_SYSTEM_OBJ) schedule/schedule.h schedule/schedule_wall.h schedule/tz.h core/anarchon.h build/config.h
	@mkdir -p test/bin
	$(CC) $(TEST_CFLAGS) $(SCHEDULE_CFLAGS) -Icore -o $@ $(PROPERTY_TEST_SRCS) $(SCHEDULE_TEST_LIBS) $(SCHEDULE_LIBS) -lm
