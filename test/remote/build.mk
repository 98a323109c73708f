# build.mk — the remote suite's programs: the store URL parser and the NATS
# reader, each on a table.
test-programs: test/bin/urlparse

test/bin/urlparse: test/remote/urlparse.c remote/net/url.c core/names.c core/validate.c remote/net/url.h core/anarchon.h build/config.h
	@mkdir -p test/bin
	$(CC) $(TEST_CFLAGS) -Icore -Iremote/net -o $@ test/remote/urlparse.c remote/net/url.c core/names.c core/validate.c

# The NATS reader on a table, without a server.
test-programs: test/bin/nats_codec_test

test/bin/nats_codec_test: test/remote/nats_codec_test.c remote/nats/nats_codec.c remote/nats/nats_codec.h
	@mkdir -p test/bin
	$(CC) $(TEST_CFLAGS) -Iremote/nats -o $@ test/remote/nats_codec_test.c remote/nats/nats_codec.c
