# nats.mk — the NATS JetStream store (included by remote.mk when libnats is installed).
# noclock.c is shared with the RabbitMQ store: listed once whichever comes first.
NATS_SHARED_SRCS := $(filter-out $(REMOTE_SRCS),remote/noclock.c)
REMOTE_SRCS += remote/nats.c remote/nats_link.c remote/nats_json.c $(NATS_SHARED_SRCS)
REMOTE_CFLAGS += -DAN_WITH_NATS $(shell $(PKG_CONFIG) --cflags libnats)
REMOTE_LIBS += $(shell $(PKG_CONFIG) --libs libnats)
