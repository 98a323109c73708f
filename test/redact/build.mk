# build.mk — the redact suite's program: an_redact_url on a table of URLs.
test-programs: test/bin/redact_probe

test/bin/redact_probe: test/redact/redact_probe.c $(AN_LIBS) net/redact.h net/url.h core/anarchon.h build/config.h
	@mkdir -p test/bin
	$(CC) $(TEST_CFLAGS) -Icore -Inet -o $@ test/redact/redact_probe.c $(AN_LINK_LIBS) $(REMOTE_LIBS) $(CLIENT_LIBS)
