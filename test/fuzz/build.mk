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
# it: the project's sources are one archive, build/fuzz/libanarchon.a, and
# the linker takes from an archive only the objects that resolve a symbol a
# target needs, then what those need.  No target lists its sources by hand
# (such lists broke the fuzz build whenever a file was split or added); the
# archive holds whatever the library's makefiles list.  The schedule target
# links the time zones' data source as the test programs do (SCHEDULE_LIBS:
# core/core.mk's object, built by the project's compiler and not
# instrumented, and its libraries).
FUZZ_CC ?= clang
FUZZ_SAN = -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS = $(WERROR) -std=c11 -D_GNU_SOURCE -O1 -g -fno-omit-frame-pointer $(FUZZ_SAN) \
	-Ibuild -Icore $(REMOTE_INCLUDES) $(REMOTE_CFLAGS) $(SCHEDULE_CFLAGS)
FUZZ_TARGETS = url schedule json nats resp

# Every source of the library (core, schedules, due slots, the network
# stores that configure found).
FUZZ_LIB_SRCS = $(CORE_SRCS) $(SCHEDULE_SRCS) $(DUE_SRCS) $(REMOTE_SRCS)
FUZZ_LIB = build/fuzz/libanarchon.a
FUZZ_LIBS_schedule = $(SCHEDULE_LIBS)
build/fuzz/bin/schedule: $(TZ_SYSTEM_OBJ)
FUZZ_LIBS = -pthread $(REMOTE_LIBS) $(CLIENT_LIBS)

FUZZ_HEADERS = $(wildcard core/*.h schedule/*.h) $(REMOTE_HEADERS) build/config.h test/fuzz/fuzz.h

.PHONY: fuzz-targets
fuzz-targets: $(addprefix build/fuzz/bin/,$(FUZZ_TARGETS))

build/fuzz/obj/%.o: %.c $(FUZZ_HEADERS) test/fuzz/build.mk
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_LIB): $(patsubst %.c,build/fuzz/obj/%.o,$(FUZZ_LIB_SRCS))
	@rm -f $@
	ar rcs $@ $^

# One link rule per target (a template, so that no second expansion is needed).
define FUZZ_TARGET_RULE
build/fuzz/bin/$(1): test/fuzz/fuzz_$(1).c $$(FUZZ_LIB) $$(FUZZ_HEADERS)
	@mkdir -p build/fuzz/bin
	$$(FUZZ_CC) $$(FUZZ_CFLAGS) -fsanitize=fuzzer -o $$@ $$< $$(FUZZ_LIB) $$(FUZZ_LIBS_$(1)) $$(FUZZ_LIBS) -lm
endef
$(foreach t,$(FUZZ_TARGETS),$(eval $(call FUZZ_TARGET_RULE,$(t))))
