# amqp.mk — the RabbitMQ store (included by stores/stores.mk when configure found
# rabbitmq-c).  Its sockets, waits and rotation are net/'s (stores/stores.mk).
AMQP_SRCS := $(sort $(wildcard stores/amqp/*.c))
REMOTE_SRCS += $(AMQP_SRCS)
