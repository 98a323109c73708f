# redis.mk — the Redis store (hiredis), included by remote.mk when configure
# found hiredis.  The Lua scripts are C strings in remote/redis/redis_scripts.c.
REMOTE_SRCS += $(addprefix remote/redis/,redis_store.c redis_conn.c redis_cmd.c \
	redis_scripts.c redis_lease.c redis_stream.c redis_durable.c \
	redis_missed.c redis_route.c redis_cluster.c redis_sentinel.c \
	redis_mark.c redis_run_now.c redis_pause.c redis_format.c)
