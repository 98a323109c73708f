/*
 * amqp_format.h — the format marker of a RabbitMQ prefix (amqp_format.c).
 */
#ifndef ANARCHON_AMQP_FORMAT_H
#define ANARCHON_AMQP_FORMAT_H

#include "amqp_link.h"

/*
 * Declare the marker of prefix in the link's virtual host vhost, with
 * ttl_ms as its slot_ttl_ms, and look for a later format's: AN_OK, or st
 * fails with AN_E_CONFIG (a later format's marker, or the prefix's marker
 * holding another slot_ttl_ms).  Called on each new connection, before
 * anything is decided on it; on a failure the caller closes the connection.
 */
int			amqp_format_check(an_store *st, amqp_link *l, const char *prefix, const char *vhost,
							  int64_t ttl_ms, const an_deadline *d);

#endif							/* ANARCHON_AMQP_FORMAT_H */
