# libs.mk — the four libraries every program links: the store protocol
# (core/), the schedules and time zones (schedule/), the network stores
# (stores/) and their connection layer (net/).  Each is a static
# archive of position-independent objects, compiled once with one set of
# flags, and linked by the SQLite module, the PostgreSQL module, the command
# and the test programs.  The fuzzers and the sanitizer build of the schedule
# suite compile the same source lists into instrumented objects of their own:
# an uninstrumented object cannot be shared with them.
#
# -fwrapv and -fno-strict-aliasing are PostgreSQL's own flags, which its
# module's objects were always compiled with; every host now gets the same.
AN_LIB_CFLAGS = $(WERROR) -std=c11 -D_GNU_SOURCE -O2 -g -fPIC -fwrapv -fno-strict-aliasing \
	-Ibuild -Icore $(REMOTE_INCLUDES) $(REMOTE_CFLAGS) $(SCHEDULE_CFLAGS)
AN_CORE_LIB = build/lib/libanarchon-core.a
AN_SCHEDULE_LIB = build/lib/libanarchon-schedule.a
AN_STORES_LIB = build/lib/libanarchon-stores.a
AN_NET_LIB = build/lib/libanarchon-net.a
AN_LIBS = $(AN_STORES_LIB) $(AN_NET_LIB) $(AN_SCHEDULE_LIB) $(AN_CORE_LIB)
# A group: stores/ calls net/, both and the schedules call core/, and no lower one
# calls back, but the linker need not be told the order.
AN_LINK_LIBS = -Wl,--start-group $(AN_LIBS) -Wl,--end-group

an_lib_objs = $(patsubst %.c,build/lib/obj/%.o,$(1))

build/lib/obj/%.o: %.c $(wildcard core/*.h schedule/*.h) $(REMOTE_HEADERS) build/config.h libs.mk core/core.mk schedule/schedule.mk stores/stores.mk $(wildcard stores/*/*.mk)
	@mkdir -p $(dir $@)
	$(CC) $(AN_LIB_CFLAGS) -c -o $@ $<

# Made anew from the current list, so that a removed file leaves no object behind.
define an_archive
	@mkdir -p $(dir $@)
	@rm -f $@
	$(AR) rcs $@ $^
endef

$(AN_CORE_LIB): $(call an_lib_objs,$(CORE_SRCS))
	$(an_archive)

$(AN_SCHEDULE_LIB): $(call an_lib_objs,$(SCHEDULE_SRCS) $(DUE_SRCS))
	$(an_archive)

$(AN_STORES_LIB): $(call an_lib_objs,$(STORES_SRCS))
	$(an_archive)

$(AN_NET_LIB): $(call an_lib_objs,$(NET_SRCS))
	$(an_archive)

.PHONY: libs
libs: $(AN_LIBS)
