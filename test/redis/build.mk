# build.mk — programs of the Redis suite and bench: rdrive calls any network
# store through the store interface (core + remote objects, no database).
RDRIVE_SRCS = test/redis/rdrive.c $(CORE_SRCS) $(REMOTE_SRCS)

test-programs: test/bin/rdrive

test/bin/rdrive: $(RDRIVE_SRCS) $(wildcard core/*.h) $(REMOTE_HEADERS) test/testutil.h build/config.h
	@mkdir -p test/bin
	$(CC) $(TEST_CFLAGS) -Icore $(REMOTE_INCLUDES) $(REMOTE_CFLAGS) -o $@ $(RDRIVE_SRCS) $(REMOTE_LIBS)

# rbench: one client of test/bench/redis.sh (baseline, store interface, SQLite,
# PostgreSQL); it talks to Redis with hiredis itself, so only with hiredis.
ifeq ($(HAVE_HIREDIS),yes)
test-programs: test/bin/rbench
endif

RBENCH_SRCS = test/redis/rbench.c $(CORE_SRCS) $(REMOTE_SRCS)
test/bin/rbench: $(RBENCH_SRCS) $(wildcard core/*.h) $(REMOTE_HEADERS) test/testutil.h build/config.h
	@mkdir -p test/bin
	$(CC) $(TEST_CFLAGS) -Icore $(REMOTE_INCLUDES) $(REMOTE_CFLAGS) -I$(shell pg_config --includedir 2>/dev/null || echo /usr/include/postgresql) \
		-o $@ $(RBENCH_SRCS) $(REMOTE_LIBS) -lhiredis -lsqlite3 -lpq

# fleet: the fleet's load generator (test/bench/fleet.sh, doc/scale.md).
ifeq ($(HAVE_HIREDIS),yes)
test-programs: test/bin/fleet
endif

FLEET_SRCS = test/bench/fleet.c $(CORE_SRCS) $(REMOTE_SRCS)
test/bin/fleet: $(FLEET_SRCS) $(wildcard core/*.h) $(REMOTE_HEADERS) test/testutil.h build/config.h
	@mkdir -p test/bin
	$(CC) $(TEST_CFLAGS) -Icore $(REMOTE_INCLUDES) $(REMOTE_CFLAGS) -I$(shell pg_config --includedir 2>/dev/null || echo /usr/include/postgresql) \
		-o $@ $(FLEET_SRCS) $(REMOTE_LIBS) -lhiredis -lpq
