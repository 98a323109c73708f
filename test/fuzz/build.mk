# build.mk — the fuzz targets (test/fuzz/fuzz_*.c), built with clang and
# libFuzzer into build/fuzz/.  Only these use clang: CC stays the project's
# compiler (configure records it, and a different CC would configure again).
#
# Every object is built with AddressSanitizer and UndefinedBehaviorSanitizer,
# and undefined behaviour aborts (no recover), so that it is a crash the
# fuzzer reports and not a line in a log.  The project's sources get the
# fuzzer's coverage instrumentation without its main (fuzzer-no-link); each
# target links libFuzzer's main.  Each target links only the sources it
# reaches, so a file being changed elsewhere breaks only the targets that use
# it.  The schedule target links the time zones' data source as the test
# programs do (SCHEDULE_LIBS: core/core.mk's object, built by the project's
# compiler and not instrumented, and its libraries).
FUZZ_CC ?= clang
FUZZ_SAN = -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS = $(WERROR) -std=c11 -D_GNU_SOURCE -O1 -g -fno-omit-frame-pointer $(FUZZ_SAN) \
	-Ibuild -Icore $(REMOTE_INCLUDES) $(REMOTE_CFLAGS) $(SCHEDULE_CFLAGS)
FUZZ_TARGETS = url schedule json nats resp

# What each target links besides its own file.
FUZZ_SRCS_url = remote/net/url.c $(CORE_SRCS)
FUZZ_SRCS_schedule = $(SCHEDULE_SRCS) core/validate.c
FUZZ_SRCS_json = remote/nats/nats_json.c
# The link speaks through an_conn, whose TLS and the logins' nkeys come with it when built with OpenSSL.
# tls.c asks url_tls.c whether a servername is one host; the Redis and NATS
# stores judge their prefix's format with format_marker.c.
FUZZ_TLS_SRCS = remote/net/conn.c $(filter remote/net/tls.c remote/net/tls_bio.c,$(REMOTE_SRCS)) remote/net/url_tls.c \
	remote/net/format_marker.c
FUZZ_SRCS_nats = $(filter-out remote/nats/nats.c,$(NATS_SRCS)) remote/net/sock.c remote/net/url.c $(FUZZ_TLS_SRCS) \
	remote/net/crc16.c remote/net/wait.c remote/net/rotate.c $(CORE_SRCS)
# The Redis store owns its socket too (an_conn) and reads its TLS parameters with url_tls.c.
FUZZ_SRCS_resp = $(filter remote/redis/%,$(REMOTE_SRCS)) remote/net/url.c remote/net/wait.c \
	remote/net/sock.c $(FUZZ_TLS_SRCS) remote/net/crc16.c remote/net/rotate.c $(CORE_SRCS)
FUZZ_LIBS_schedule = $(SCHEDULE_LIBS)
build/fuzz/bin/schedule: $(TZ_SYSTEM_OBJ)
FUZZ_LIBS_resp = -pthread $(REMOTE_LIBS)
FUZZ_LIBS_nats = -pthread $(REMOTE_LIBS)

FUZZ_HEADERS = $(wildcard core/*.h) $(REMOTE_HEADERS) build/config.h test/fuzz/fuzz.h

.PHONY: fuzz-targets
fuzz-targets: $(addprefix build/fuzz/bin/,$(FUZZ_TARGETS))

build/fuzz/obj/%.o: %.c $(FUZZ_HEADERS) test/fuzz/build.mk
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

# One link rule per target (a template, so that no second expansion is needed).
define FUZZ_TARGET_RULE
build/fuzz/bin/$(1): test/fuzz/fuzz_$(1).c $$(patsubst %.c,build/fuzz/obj/%.o,$$(FUZZ_SRCS_$(1))) $$(FUZZ_HEADERS)
	@mkdir -p build/fuzz/bin
	$$(FUZZ_CC) $$(FUZZ_CFLAGS) -fsanitize=fuzzer -o $$@ $$< \
		$$(patsubst %.c,build/fuzz/obj/%.o,$$(FUZZ_SRCS_$(1))) $$(FUZZ_LIBS_$(1)) -lm
endef
$(foreach t,$(FUZZ_TARGETS),$(eval $(call FUZZ_TARGET_RULE,$(t))))
