/*
 * registry.c — which network stores this build has, by URL scheme.
 *
 * A Redis or RabbitMQ store is listed when its client library was found at
 * build time (configure defines AN_WITH_<STORE>); a URL for a store left out
 * gets an error that says which package to install.
 */
#include <string.h>
#include <strings.h>

#include "remote.h"

typedef struct remote_entry
{
	const char *scheme;
	const an_store_methods *methods;
	const char *package;         /* what to install when it is missing */
} remote_entry;

static const remote_entry entries[] = {
#ifdef AN_WITH_REDIS
	{"redis", &an_redis_methods, "libhiredis-dev"},
	{"rediss", &an_redis_methods, "libhiredis-dev"},
	{"redis+sentinel", &an_redis_methods, "libhiredis-dev"},
	{"rediss+sentinel", &an_redis_methods, "libhiredis-dev"},
#else
	{"redis", NULL, "libhiredis-dev"},
	{"rediss", NULL, "libhiredis-dev"},
	{"redis+sentinel", NULL, "libhiredis-dev"},
	{"rediss+sentinel", NULL, "libhiredis-dev"},
#endif
#ifdef AN_WITH_AMQP
	{"amqp", &an_amqp_methods, "librabbitmq-dev"},
	{"amqps", &an_amqp_methods, "librabbitmq-dev"},
#else
	{"amqp", NULL, "librabbitmq-dev"},
	{"amqps", NULL, "librabbitmq-dev"},
#endif
	/* The NATS store speaks the protocol itself: always built (tls:// too). */
	{"nats", &an_nats_methods, NULL},
	{"tls", &an_nats_methods, NULL},
};

const an_store_methods *
an_remote_find(const char *url, an_err *err)
{
	const char *sep = url ? strstr(url, "://") : NULL;
	size_t		n = sep ? (size_t) (sep - url) : 0;

	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++)
	{
		if (n != strlen(entries[i].scheme) || strncasecmp(url, entries[i].scheme, n) != 0)
			continue;
		if (entries[i].methods == NULL)
			an_errf(err, "store %s:// is not available: anarchon was built without %s installed",
					entries[i].scheme, entries[i].package);
		return entries[i].methods;
	}
	an_errf(err, "unknown store: expected 'local' or a URL starting with redis://, rediss://, amqp://, amqps://, nats:// or tls://");
	return NULL;
}
