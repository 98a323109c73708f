# nats.mk — the NATS JetStream store (always built: it speaks the protocol
# itself).  Its sockets, waits and rotation are remote/net/'s (remote.mk).
NATS_SRCS := $(addprefix remote/nats/,nats.c nats_link.c nats_auth.c nats_codec.c nats_json.c)
# nkeys and .creds files sign with Ed25519 through OpenSSL.
ifeq ($(AN_HAVE_OPENSSL),yes)
NATS_SRCS += remote/nats/nats_nkey.c
endif
REMOTE_SRCS += $(NATS_SRCS)
