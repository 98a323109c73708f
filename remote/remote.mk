# remote.mk — the network stores.  Each one is compiled in when configure
# found its client library (build/config.mk says which), so `make sqlite` and
# `make demo` work on a machine that has none of them; `make test` installs
# them all and refuses to run without them.  A store adds its sources under
# its own block below; its compiler and linker flags come from configure.
#
# The layers: remote/ itself is the entry point (registry.c, remote.h),
# remote/net/ the connection layer every store shares (sockets, waits,
# deadlines, the rotation over servers, URLs), and each store has its own
# folder.  Every folder is on the include path: sources include by file name.
REMOTE_DIRS = remote remote/net remote/redis remote/nats remote/amqp
REMOTE_INCLUDES = $(addprefix -I,$(REMOTE_DIRS))
REMOTE_HEADERS = $(wildcard $(addsuffix /*.h,$(REMOTE_DIRS)))
# No file is listed by hand: each folder's *.c, less what a missing library
# leaves out (remote/net/tls*.c without OpenSSL).
REMOTE_SRCS = remote/registry.c $(filter-out remote/net/tls%.c,$(sort $(wildcard remote/net/*.c)))
REMOTE_CFLAGS = $(AN_REMOTE_CFLAGS)
REMOTE_LIBS = $(AN_REMOTE_LIBS)

HAVE_HIREDIS := $(AN_HAVE_HIREDIS)
HAVE_AMQP := $(AN_HAVE_AMQP)
HAVE_NATS := $(AN_HAVE_NATS)
HAVE_OPENSSL := $(AN_HAVE_OPENSSL)

# TLS (OpenSSL): the one TLS layer of the stores that own their sockets.
ifeq ($(HAVE_OPENSSL),yes)
REMOTE_SRCS += $(sort $(wildcard remote/net/tls*.c))
endif

# Redis: sources listed in remote/redis/redis.mk (owned by the Redis store).
ifeq ($(HAVE_HIREDIS),yes)
include remote/redis/redis.mk
endif
# RabbitMQ and NATS: remote/amqp/amqp.mk and remote/nats/nats.mk.
ifeq ($(HAVE_AMQP),yes)
include remote/amqp/amqp.mk
endif
ifeq ($(HAVE_NATS),yes)
include remote/nats/nats.mk
endif
