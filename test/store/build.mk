# build.mk — the store suite's program: core/store.c's helpers and every
# network store's check_url, linked without any database.
STORECHECK_SRCS = test/store/storecheck.c

test-programs: test/bin/storecheck

test/bin/storecheck: $(STORECHECK_SRCS) $(AN_LIBS) $(wildcard core/*.h) $(REMOTE_HEADERS) build/config.h
	@mkdir -p test/bin
	$(CC) $(TEST_CFLAGS) -Icore $(REMOTE_INCLUDES) $(REMOTE_CFLAGS) -o $@ $(STORECHECK_SRCS) $(AN_LINK_LIBS) $(REMOTE_LIBS) $(CLIENT_LIBS) -lm

# The decision tables of core/ (lease, won/lost), row by row, on a run in memory.
TABLES_SRCS = test/store/tables_test.c

test-programs: test/bin/tables_test

test/bin/tables_test: $(TABLES_SRCS) $(AN_CORE_LIB) $(wildcard core/*.h) build/config.h
	@mkdir -p test/bin
	$(CC) $(TEST_CFLAGS) -Icore -o $@ $(TABLES_SRCS) $(AN_CORE_LIB) -lm
