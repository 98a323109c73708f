# amqp.mk — the RabbitMQ store (included by remote.mk when configure found
# rabbitmq-c).  session_claims.c and sock.c are shared with the NATS store:
# listed once, whichever comes first.
AMQP_SHARED_SRCS := $(filter-out $(REMOTE_SRCS),remote/session_claims.c remote/sock.c)
AMQP_SRCS := remote/amqp.c remote/amqp_link.c $(AMQP_SHARED_SRCS)
REMOTE_SRCS += $(AMQP_SRCS)
