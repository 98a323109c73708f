# nats.mk — the NATS JetStream store (included by remote.mk when configure
# found nats.c).  session_claims.c is shared with the RabbitMQ store: listed once
# whichever comes first.
NATS_SHARED_SRCS := $(filter-out $(REMOTE_SRCS),remote/session_claims.c)
NATS_SRCS := remote/nats.c remote/nats_link.c remote/nats_json.c remote/sock.c $(NATS_SHARED_SRCS)
REMOTE_SRCS += $(NATS_SRCS)
