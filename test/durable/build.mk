# build.mk — the durable suite's unit program: core/lease.c's stop time.
LEASE_DEADLINE_SRCS = test/durable/lease_deadline_test.c

test-programs: test/bin/lease_deadline_test

test/bin/lease_deadline_test: $(LEASE_DEADLINE_SRCS) $(AN_CORE_LIB) $(wildcard core/*.h) build/config.h
	@mkdir -p test/bin
	$(CC) $(TEST_CFLAGS) -Icore -o $@ $(LEASE_DEADLINE_SRCS) $(AN_CORE_LIB) -lm
