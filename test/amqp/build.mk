# build.mk — the driver both the RabbitMQ and the NATS suites (and their
# bench scripts) run: a store found by an_remote_find, driven from the shell.
MQ_DRIVER_OBJS = $(AN_LIBS)

test-programs: test/bin/mq-driver

test/bin/mq-driver: test/amqp/mq_driver.c $(MQ_DRIVER_OBJS) test/testutil.h build/config.h
	@mkdir -p test/bin
	$(CC) $(TEST_CFLAGS) -Icore $(REMOTE_INCLUDES) $(REMOTE_CFLAGS) -o $@ $< $(AN_LINK_LIBS) $(REMOTE_LIBS) $(CLIENT_LIBS) -lm

# mq-base: the bare server operations the RabbitMQ and NATS bench rows are
# measured against (test/bench/amqp.sh, test/bench/nats.sh).
# (also the RabbitMQ suite's check of a returned publish)
ifeq ($(HAVE_AMQP)$(AN_HAVE_LIBNATS),yesyes)
test-programs: test/bin/mq-base
endif

test/bin/mq-base: test/amqp/mq_base.c $(MQ_DRIVER_OBJS) test/testutil.h build/config.h
	@mkdir -p test/bin
	$(CC) $(TEST_CFLAGS) -Icore $(REMOTE_INCLUDES) $(REMOTE_CFLAGS) $(AN_LIBNATS_CFLAGS) -o $@ $< $(AN_LINK_LIBS) $(REMOTE_LIBS) $(CLIENT_LIBS) $(AN_LIBNATS_LIBS)

# mq-marker: a later release's RabbitMQ format marker, declared by hand
# (test/amqp/run.sh, test/mixed/run.sh).
ifeq ($(HAVE_AMQP),yes)
test-programs: test/bin/mq-marker
endif

test/bin/mq-marker: test/amqp/mq_marker.c test/testutil.h build/config.h
	@mkdir -p test/bin
	$(CC) $(TEST_CFLAGS) -Icore $(REMOTE_INCLUDES) $(REMOTE_CFLAGS) -o $@ $< $(REMOTE_LIBS) $(CLIENT_LIBS)
