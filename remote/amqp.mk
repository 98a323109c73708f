# amqp.mk — the RabbitMQ store (included by remote.mk when librabbitmq is installed).
# noclock.c is shared with the NATS store: listed once whichever comes first.
AMQP_SHARED_SRCS := $(filter-out $(REMOTE_SRCS),remote/noclock.c)
REMOTE_SRCS += remote/amqp.c remote/amqp_link.c $(AMQP_SHARED_SRCS)
REMOTE_CFLAGS += -DAN_WITH_AMQP $(shell $(PKG_CONFIG) --cflags librabbitmq)
REMOTE_LIBS += $(shell $(PKG_CONFIG) --libs librabbitmq)
