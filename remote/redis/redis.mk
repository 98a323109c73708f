# redis.mk — the Redis store (hiredis), included by remote.mk when configure
# found hiredis.  The Lua scripts are C strings in remote/redis/redis_scripts.c.
REMOTE_SRCS += $(sort $(wildcard remote/redis/*.c))
