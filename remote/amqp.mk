# amqp.mk — the RabbitMQ store (included by remote.mk when librabbitmq is installed).
# noclock.c is shared with the NATS store: listed once whichever comes first.
AMQP_SHARED_SRCS := $(filter-out $(REMOTE_SRCS),remote/noclock.c)
AMQP_SRCS := remote/amqp.c remote/amqp_link.c $(AMQP_SHARED_SRCS)
REMOTE_SRCS += $(AMQP_SRCS)
REMOTE_CFLAGS += -DAN_WITH_AMQP $(shell $(PKG_CONFIG) --cflags librabbitmq)
REMOTE_LIBS += $(shell $(PKG_CONFIG) --libs librabbitmq)

# registry.c lists the store only when built with -DAN_WITH_AMQP, and the
# PostgreSQL objects (PGXS's own rule) know nothing of our headers: rebuild
# them when either changes.
remote/registry.o build/sqlite/remote/registry.o: remote/amqp.mk
$(patsubst %.c,%.o,$(AMQP_SRCS)): remote/amqp_link.h remote/noclock.h remote/wait.h core/store.h core/anarchon.h remote/url.h
