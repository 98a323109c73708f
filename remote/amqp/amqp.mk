# amqp.mk — the RabbitMQ store (included by remote.mk when configure found
# rabbitmq-c).  Its sockets, waits and rotation are remote/net/'s (remote.mk).
AMQP_SRCS := $(sort $(wildcard remote/amqp/*.c))
REMOTE_SRCS += $(AMQP_SRCS)
