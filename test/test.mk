# test.mk — programs the suites, the demo and the bench run.  Each is a small
# C client of a database or store, built into test/bin/.
TEST_CFLAGS = $(WERROR) -std=c11 -D_GNU_SOURCE -O2 -g -Ibuild

.PHONY: test-programs
test-programs: test/bin/claimer

test/bin/claimer: test/claimer.c test/testutil.h build/config.h
	@mkdir -p test/bin
	$(CC) $(TEST_CFLAGS) -o $@ $< $(AN_SQLITE_LIBS)
include $(wildcard test/*/build.mk)
