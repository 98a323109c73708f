# nats.mk — the NATS JetStream store (always built: it speaks the protocol
# itself).  Its sockets, waits and rotation are net/'s (stores/stores.mk).
# nkeys and .creds files sign with Ed25519 through OpenSSL: nats_nkey.c only with it.
NATS_SRCS := $(sort $(wildcard stores/nats/*.c))
ifneq ($(AN_HAVE_OPENSSL),yes)
NATS_SRCS := $(filter-out stores/nats/nats_nkey.c,$(NATS_SRCS))
endif
REMOTE_SRCS += $(NATS_SRCS)
