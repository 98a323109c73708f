# nats.mk — the NATS JetStream store (included by remote.mk when libnats is installed).
# noclock.c is shared with the RabbitMQ store: listed once whichever comes first.
NATS_SHARED_SRCS := $(filter-out $(REMOTE_SRCS),remote/noclock.c)
NATS_SRCS := remote/nats.c remote/nats_link.c remote/nats_json.c $(NATS_SHARED_SRCS)
REMOTE_SRCS += $(NATS_SRCS)
REMOTE_CFLAGS += -DAN_WITH_NATS $(shell $(PKG_CONFIG) --cflags libnats)
REMOTE_LIBS += $(shell $(PKG_CONFIG) --libs libnats)

# registry.c lists the store only when built with -DAN_WITH_NATS, and the
# PostgreSQL objects (PGXS's own rule) know nothing of our headers: rebuild
# them when either changes.
remote/registry.o build/sqlite/remote/registry.o: remote/nats.mk
$(patsubst %.c,%.o,$(NATS_SRCS)): remote/nats_link.h remote/nats_json.h remote/noclock.h remote/wait.h core/store.h core/anarchon.h remote/url.h
