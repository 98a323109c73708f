# nats.mk — the NATS JetStream store (always built: it speaks the protocol
# itself).  session_claims.c and sock.c are shared with the RabbitMQ store:
# listed once, whichever comes first.
NATS_SHARED_SRCS := $(filter-out $(REMOTE_SRCS),remote/session_claims.c remote/sock.c)
NATS_SRCS := remote/nats.c remote/nats_link.c remote/nats_codec.c remote/nats_json.c $(NATS_SHARED_SRCS)
REMOTE_SRCS += $(NATS_SRCS)
