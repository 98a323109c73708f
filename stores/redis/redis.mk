# redis.mk — the Redis store (hiredis), included by stores/stores.mk when configure
# found hiredis.  The Lua scripts are C strings in stores/redis/redis_scripts.c.
REMOTE_SRCS += $(sort $(wildcard stores/redis/*.c))
