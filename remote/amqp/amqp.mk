# amqp.mk — the RabbitMQ store (included by remote.mk when configure found
# rabbitmq-c).  Its sockets, waits and rotation are remote/net/'s (remote.mk).
AMQP_SRCS := $(addprefix remote/amqp/,amqp.c amqp_format.c amqp_link.c)
REMOTE_SRCS += $(AMQP_SRCS)
