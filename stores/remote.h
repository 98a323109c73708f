/*
 * remote.h — the network stores, as both database hosts see them.
 *
 * A host that finds a URL in its `store` setting asks an_remote_find for the
 * methods of that URL's scheme, then drives them like any store (store.h).
 * No PostgreSQL or SQLite header is included anywhere under stores/ or net/.
 */
#ifndef ANARCHON_REMOTE_H
#define ANARCHON_REMOTE_H

#include "store.h"

/*
 * The methods for url's scheme (redis://, amqp://, nats://), or NULL with a
 * message in err: unknown scheme, or a store whose client library was not
 * installed when anarchon was built.
 */
const an_store_methods *an_remote_find(const char *url, an_err *err);

/*
 * The method tables of the network stores, each defined in its store's file
 * and compiled in when its client library was found (registry.c lists them).
 */
extern const an_store_methods an_redis_methods;
extern const an_store_methods an_amqp_methods;
extern const an_store_methods an_nats_methods;

#endif							/* ANARCHON_REMOTE_H */
