# remote.mk — the network stores.  Each one is compiled in when configure
# found its client library (build/config.mk says which), so `make sqlite` and
# `make demo` work on a machine that has none of them; `make test` installs
# them all and refuses to run without them.  A store adds its sources under
# its own block below; its compiler and linker flags come from configure.
REMOTE_SRCS = remote/url.c remote/registry.c remote/wait.c remote/sock.c remote/rotate.c
REMOTE_CFLAGS = $(AN_REMOTE_CFLAGS)
REMOTE_LIBS = $(AN_REMOTE_LIBS)

HAVE_HIREDIS := $(AN_HAVE_HIREDIS)
HAVE_AMQP := $(AN_HAVE_AMQP)
HAVE_NATS := $(AN_HAVE_NATS)

# Redis: sources listed in remote/redis.mk (owned by the Redis store).
ifeq ($(HAVE_HIREDIS),yes)
include remote/redis.mk
endif
# RabbitMQ and NATS: remote/amqp.mk and remote/nats.mk.
ifeq ($(HAVE_AMQP),yes)
include remote/amqp.mk
endif
ifeq ($(HAVE_NATS),yes)
include remote/nats.mk
endif
