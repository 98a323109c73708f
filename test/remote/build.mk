# build.mk — the remote suite's program: the store URL parser on a table.
test-programs: test/bin/urlparse

test/bin/urlparse: test/remote/urlparse.c remote/url.c core/names.c core/validate.c remote/url.h core/anarchon.h build/config.h
	@mkdir -p test/bin
	$(CC) $(TEST_CFLAGS) -Icore -Iremote -o $@ test/remote/urlparse.c remote/url.c core/names.c core/validate.c
