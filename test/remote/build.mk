# build.mk — the remote suite's programs: the store URL parser and the NATS
# reader, each on a table.
test-programs: test/bin/urlparse

test/bin/urlparse: test/remote/urlparse.c remote/url.c core/names.c core/validate.c remote/url.h core/anarchon.h build/config.h
	@mkdir -p test/bin
	$(CC) $(TEST_CFLAGS) -Icore -Iremote -o $@ test/remote/urlparse.c remote/url.c core/names.c core/validate.c

# The NATS reader on a table, without a server.
test-programs: test/bin/nats_codec_test

test/bin/nats_codec_test: test/remote/nats_codec_test.c remote/nats_codec.c remote/nats_codec.h
	@mkdir -p test/bin
	$(CC) $(TEST_CFLAGS) -Iremote -o $@ test/remote/nats_codec_test.c remote/nats_codec.c
