# build.mk — programs of the tls suite: tls_probe (a TLS client on the
# stores' own socket and TLS code) and nkey_tool (NATS nkeys and creds).
TLS_PROBE_SRCS = test/tls/tls_probe.c
NKEY_TOOL_SRCS = test/tls/nkey_tool.c

ifeq ($(AN_HAVE_OPENSSL),yes)
test-programs: test/bin/tls_probe test/bin/nkey_tool
endif

test/bin/tls_probe: $(TLS_PROBE_SRCS) $(AN_LIBS) $(wildcard core/*.h) $(REMOTE_HEADERS) test/testutil.h build/config.h
	@mkdir -p test/bin
	$(CC) $(TEST_CFLAGS) -Icore $(REMOTE_INCLUDES) $(REMOTE_CFLAGS) -o $@ $(TLS_PROBE_SRCS) $(AN_LINK_LIBS) $(REMOTE_LIBS) $(CLIENT_LIBS)

test/bin/nkey_tool: $(NKEY_TOOL_SRCS) $(AN_LIBS) stores/nats/nats_nkey.h net/crc16.h
	@mkdir -p test/bin
	$(CC) $(TEST_CFLAGS) -Icore $(REMOTE_INCLUDES) -o $@ $(NKEY_TOOL_SRCS) $(AN_LINK_LIBS) $(REMOTE_LIBS) $(CLIENT_LIBS)
