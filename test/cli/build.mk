# build.mk — the table test of core/duration.c (the durations the command's
# messages show), linked against the core library.
test-programs: test/bin/duration_test

test/bin/duration_test: test/cli/duration_test.c $(AN_CORE_LIB) core/duration.h build/config.h
	@mkdir -p test/bin
	$(CC) $(TEST_CFLAGS) -Icore -o $@ test/cli/duration_test.c $(AN_CORE_LIB)
