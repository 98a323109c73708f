# remote.mk — the network stores.  Each one is compiled in when its client
# library is installed (pkg-config finds it), so `make sqlite` and `make demo`
# work on a machine that has none of them; `make test` installs them all.
PKG_CONFIG ?= pkg-config

REMOTE_SRCS =
REMOTE_CFLAGS =
REMOTE_LIBS =
