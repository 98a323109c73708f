# build.mk — the SQLite suite's own programs: the probe of how the extension
# treats the connection that loads it, and the pre-forking server.
test-programs: test/bin/sqlite_probe test/bin/sqlite_prefork

test/bin/sqlite_probe: test/sqlite/probe.c test/sqlite/probe_vfs.h build/config.h
	@mkdir -p test/bin
	$(CC) $(TEST_CFLAGS) -o $@ $< $(AN_SQLITE_LIBS)

test/bin/sqlite_prefork: test/sqlite/prefork.c test/sqlite/probe_vfs.h build/config.h
	@mkdir -p test/bin
	$(CC) $(TEST_CFLAGS) -o $@ $< $(AN_SQLITE_LIBS)
