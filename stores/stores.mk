# stores.mk — the network stores, and the connection layer under them.  Each one is compiled in when configure
# found its client library (build/config.mk says which), so `make sqlite` and
# `make demo` work on a machine that has none of them; `make test` installs
# them all and refuses to run without them.  A store adds its sources under
# its own block below; its compiler and linker flags come from configure.
#
# The layers: stores/ itself is the entry point (registry.c, remote.h), each
# store has its own folder under it, and net/ is the connection layer every
# store shares (sockets, waits, deadlines, the rotation over servers, URLs).
# They are two libraries (libs.mk): net/ never calls stores/.  Every folder
# is on the include path: sources include by file name.
REMOTE_DIRS = stores net stores/redis stores/nats stores/amqp
REMOTE_INCLUDES = $(addprefix -I,$(REMOTE_DIRS))
REMOTE_HEADERS = $(wildcard $(addsuffix /*.h,$(REMOTE_DIRS)))
# No file is listed by hand: each folder's *.c, less what a missing library
# leaves out (net/tls*.c without OpenSSL).
NET_SRCS = $(filter-out net/tls%.c,$(sort $(wildcard net/*.c)))
REMOTE_SRCS = stores/registry.c
REMOTE_CFLAGS = $(AN_REMOTE_CFLAGS)
# The hosts link no client library: each is loaded on first use (core/dl.h).
# CLIENT_LIBS links them, for the test programs that call them directly.
REMOTE_LIBS = $(AN_REMOTE_LIBS)
CLIENT_LIBS = $(AN_CLIENT_LIBS)

HAVE_HIREDIS := $(AN_HAVE_HIREDIS)
HAVE_AMQP := $(AN_HAVE_AMQP)
HAVE_NATS := $(AN_HAVE_NATS)
HAVE_OPENSSL := $(AN_HAVE_OPENSSL)

# TLS (OpenSSL): the one TLS layer of the stores that own their sockets.
ifeq ($(HAVE_OPENSSL),yes)
NET_SRCS += $(sort $(wildcard net/tls*.c))
endif

# Redis: sources listed in stores/redis/redis.mk (owned by the Redis store).
ifeq ($(HAVE_HIREDIS),yes)
include stores/redis/redis.mk
endif
# RabbitMQ and NATS: stores/amqp/amqp.mk and stores/nats/nats.mk.
ifeq ($(HAVE_AMQP),yes)
include stores/amqp/amqp.mk
endif
ifeq ($(HAVE_NATS),yes)
include stores/nats/nats.mk
endif

# Every source of the network layer: the stores (REMOTE_SRCS) and net/.
STORES_SRCS := $(REMOTE_SRCS)
REMOTE_SRCS += $(NET_SRCS)
