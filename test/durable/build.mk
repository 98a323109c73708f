# build.mk — the durable suite's unit program: core/lease.c's stop time.
LEASE_DEADLINE_SRCS = test/durable/lease_deadline_test.c $(CORE_SRCS)

test-programs: test/bin/lease_deadline_test

test/bin/lease_deadline_test: $(LEASE_DEADLINE_SRCS) $(wildcard core/*.h) build/config.h
	@mkdir -p test/bin
	$(CC) $(TEST_CFLAGS) -Icore -o $@ $(LEASE_DEADLINE_SRCS) -lm
