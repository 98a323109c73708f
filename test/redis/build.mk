# build.mk — programs of the Redis suite and bench: rdrive calls any network
# store through the store interface (the core and remote libraries, no database).
RDRIVE_SRCS = test/redis/rdrive.c

test-programs: test/bin/rdrive

test/bin/rdrive: $(RDRIVE_SRCS) $(AN_LIBS) $(wildcard core/*.h) $(REMOTE_HEADERS) test/testutil.h build/config.h
	@mkdir -p test/bin
	$(CC) $(TEST_CFLAGS) -Icore $(REMOTE_INCLUDES) $(REMOTE_CFLAGS) -o $@ $(RDRIVE_SRCS) $(AN_LINK_LIBS) $(REMOTE_LIBS) $(CLIENT_LIBS)

# rbench: one client of test/bench/redis.sh (baseline, store interface, SQLite,
# PostgreSQL); it talks to Redis with hiredis itself, so only with hiredis.
ifeq ($(HAVE_HIREDIS),yes)
test-programs: test/bin/rbench
endif

RBENCH_SRCS = test/redis/rbench.c
test/bin/rbench: $(RBENCH_SRCS) $(AN_LIBS) $(wildcard core/*.h) $(REMOTE_HEADERS) test/testutil.h build/config.h
	@mkdir -p test/bin
	$(CC) $(TEST_CFLAGS) -Icore $(REMOTE_INCLUDES) $(REMOTE_CFLAGS) -I$(shell pg_config --includedir 2>/dev/null || echo /usr/include/postgresql) \
		-o $@ $(RBENCH_SRCS) $(AN_LINK_LIBS) $(REMOTE_LIBS) $(CLIENT_LIBS) -lhiredis -lsqlite3 -lpq

# fleet: the fleet's load generator (test/bench/fleet.sh, doc/scale.md).
ifeq ($(HAVE_HIREDIS),yes)
test-programs: test/bin/fleet
endif

FLEET_SRCS = test/bench/fleet.c
test/bin/fleet: $(FLEET_SRCS) $(AN_LIBS) $(wildcard core/*.h) $(REMOTE_HEADERS) test/testutil.h build/config.h
	@mkdir -p test/bin
	$(CC) $(TEST_CFLAGS) -Icore $(REMOTE_INCLUDES) $(REMOTE_CFLAGS) -I$(shell pg_config --includedir 2>/dev/null || echo /usr/include/postgresql) \
		-o $@ $(FLEET_SRCS) $(AN_LINK_LIBS) $(REMOTE_LIBS) $(CLIENT_LIBS) -lhiredis -lpq
