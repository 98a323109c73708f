# nats.mk — the NATS JetStream store (always built: it speaks the protocol
# itself).  Its sockets, waits and rotation are remote/net/'s (remote.mk).
# nkeys and .creds files sign with Ed25519 through OpenSSL: nats_nkey.c only with it.
NATS_SRCS := $(sort $(wildcard remote/nats/*.c))
ifneq ($(AN_HAVE_OPENSSL),yes)
NATS_SRCS := $(filter-out remote/nats/nats_nkey.c,$(NATS_SRCS))
endif
REMOTE_SRCS += $(NATS_SRCS)
