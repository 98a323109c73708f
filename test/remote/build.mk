# build.mk — the remote suite's programs: the store URL parser and the NATS
# reader, each on a table.
test-programs: test/bin/urlparse

test/bin/urlparse: test/remote/urlparse.c $(AN_LIBS) net/url.h core/anarchon.h build/config.h
	@mkdir -p test/bin
	$(CC) $(TEST_CFLAGS) -Icore -Inet -o $@ test/remote/urlparse.c $(AN_LINK_LIBS) $(REMOTE_LIBS) $(CLIENT_LIBS)

# The NATS reader on a table, without a server.
test-programs: test/bin/nats_codec_test

test/bin/nats_codec_test: test/remote/nats_codec_test.c $(AN_LIBS) stores/nats/nats_codec.h
	@mkdir -p test/bin
	$(CC) $(TEST_CFLAGS) -Istores/nats -o $@ test/remote/nats_codec_test.c $(AN_LINK_LIBS) $(REMOTE_LIBS) $(CLIENT_LIBS)
