# remote.mk — the network stores.  Each one is compiled in when its client
# library is installed (pkg-config finds it), so `make sqlite` and `make demo`
# work on a machine that has none of them; `make test` installs them all.
# A store adds its sources under its own `ifneq` block below.
PKG_CONFIG ?= pkg-config

REMOTE_SRCS = remote/url.c remote/registry.c remote/wait.c
REMOTE_CFLAGS =
REMOTE_LIBS =

HAVE_HIREDIS := $(shell $(PKG_CONFIG) --exists hiredis 2>/dev/null && echo yes)
HAVE_AMQP := $(shell $(PKG_CONFIG) --exists librabbitmq 2>/dev/null && echo yes)
HAVE_NATS := $(shell $(PKG_CONFIG) --exists libnats 2>/dev/null && echo yes)

# Redis: sources listed in remote/redis.mk (owned by the Redis store).
ifeq ($(HAVE_HIREDIS),yes)
-include remote/redis.mk
endif
# RabbitMQ and NATS: remote/amqp.mk and remote/nats.mk.
ifeq ($(HAVE_AMQP),yes)
-include remote/amqp.mk
endif
ifeq ($(HAVE_NATS),yes)
-include remote/nats.mk
endif
