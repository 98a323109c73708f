# redis.mk — the Redis store (hiredis), included by remote.mk when configure
# found hiredis.  The Lua scripts are C strings in remote/redis_scripts.c.
REMOTE_SRCS += remote/redis_store.c remote/redis_conn.c remote/redis_cmd.c \
	remote/redis_scripts.c remote/redis_lease.c remote/redis_stream.c remote/redis_durable.c \
	remote/redis_missed.c remote/redis_route.c remote/redis_cluster.c remote/redis_sentinel.c \
	remote/redis_mark.c
