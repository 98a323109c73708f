# nats.mk — the NATS JetStream store (always built: it speaks the protocol
# itself).  Its sockets, waits and rotation are remote/net/'s (remote.mk).
NATS_SRCS := $(addprefix remote/nats/,nats.c nats_link.c nats_codec.c nats_json.c)
REMOTE_SRCS += $(NATS_SRCS)
