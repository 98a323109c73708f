/*
 * amqp_format.c — which format a RabbitMQ prefix is in, and its slot_ttl_ms.
 *
 * As on Redis and NATS (format_marker.h), a prefix records the format of
 * what anarchon keeps under it, per virtual host, so that a host never
 * decides on queues a later release writes in a way it does not know.  On
 * RabbitMQ the record is the existence of queues, not a message: a host of
 * format F declares <prefix>.format.2 up to <prefix>.format.F, and looks
 * passively for <prefix>.format.F+1.  Where that queue exists, a later
 * release has used the prefix, and this host refuses to decide anything
 * there.  A virtual host without <prefix>.format.2 is format 1 (0.1.0,
 * which never looks at these queues).
 *
 * A message would say more, but RabbitMQ shows a message only by handing it
 * to one client, which hides it from the others until it is given back: a
 * read needs a lock, and a lock taken on every new connection made hosts
 * that connected in the same second wait for each other past timeout_ms.
 * A queue's existence is read by anyone at once, and declaring it twice is
 * one queue.
 *
 * The same declaration records the prefix's slot_ttl_ms, as the queue's
 * x-message-ttl (no message is ever published there).  A gate lives
 * slot_ttl_ms after its last use, and each host checks that its own
 * max_late_ms fits in its own slot_ttl_ms; but a gate declared by a host
 * with a short slot_ttl_ms could expire before a host with a longer
 * max_late_ms claims the slot, which would then be won again.  So every
 * host of a prefix uses one slot_ttl_ms: the broker refuses to declare the
 * marker again with another x-message-ttl (406 PRECONDITION_FAILED, with
 * both values in its text), and the host is refused before it decides
 * anything.
 *
 * The cost is a declaration, a passive declaration answered 404, and the
 * channel opened again after it: three round trips per new connection,
 * none per claim, and no host waits for another.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amqp_format.h"
#include "format_marker.h"
#include "wait.h"

/* Declare queue: a marker (durable, x-message-ttl ttl_ms), or passively (only looked up). */
static int
declare(an_store *st, amqp_link *l, const an_deadline *d, const char *queue, int passive, int64_t ttl_ms)
{
	amqp_table_entry_t args[2];
	amqp_queue_declare_t q;

	memset(&q, 0, sizeof(q));
	args[0].key = amqp_cstring_bytes("x-message-ttl");
	args[0].value.kind = AMQP_FIELD_KIND_I64;
	args[0].value.value.i64 = ttl_ms;
	/* Classic, whatever the virtual host's default: quorum queues are heavier, and nothing is kept here. */
	args[1].key = amqp_cstring_bytes("x-queue-type");
	args[1].value.kind = AMQP_FIELD_KIND_UTF8;
	args[1].value.value.bytes = amqp_cstring_bytes("classic");
	q.queue = amqp_cstring_bytes(queue);
	q.passive = passive != 0;
	q.durable = !passive;
	if (!passive)
	{
		q.arguments.num_entries = 2;
		q.arguments.entries = args;
	}
	for (;;)
	{
		if (amqp_link_rpc(st, l, d, "the format marker's queue", AMQP_QUEUE_DECLARE_METHOD, &q,
						  AMQP_QUEUE_DECLARE_OK_METHOD, NULL) == AN_OK)
			return AN_OK;
		/*
		 * Just after a restart the broker answers for a durable queue it has
		 * not started again with 404 "... is down or inaccessible": asked
		 * again after a short wait, while the call's time lasts.
		 */
		if (l->last_code != 404 || strstr(st->err.msg, "down or inaccessible") == NULL ||
			an_deadline_left(d) <= AN_WAIT_SLICE_MS)
			return st->err.code;
		an_store_clear(st);
		if (an_wait_until(st, an_mono_ms() + AN_WAIT_SLICE_MS, l->who, "recover the format marker's queue after a restart") != AN_OK ||
			amqp_link_channel(st, l, d) != AN_OK)
			return st->err.code;
	}
}

/*
 * The value the broker's 406 calls current, or -1: RabbitMQ 3.x says "...
 * but current is '120000'", 4.x "... but current is the value '120000' ...".
 */
static long long
current_value(const char *text)
{
	const char *p = strstr(text, "current is ");

	if (p == NULL)
		return -1;
	p += strlen("current is ");
	if (strncmp(p, "the value ", strlen("the value ")) == 0)
		p += strlen("the value ");
	return *p == '\'' ? strtoll(p + 1, NULL, 10) : -1;
}

/* The marker exists with another x-message-ttl: st fails, naming both values. */
static int
refuse_ttl(an_store *st, const amqp_link *l, const char *place, const char *queue, int64_t ttl_ms)
{
	char		why[AN_ERRMAX];
	long long	recorded = current_value(st->err.msg);
	const char *text = strstr(st->err.msg, "406 ");

	snprintf(why, sizeof(why), "%s", text ? text : st->err.msg);
	if (recorded > 0)
		an_store_fail(st, AN_E_CONFIG, "%s: slot_ttl_ms (%lld ms) differs from the %lld ms recorded for %s",
					  l->who, (long long) ttl_ms, recorded, place);
	else
		an_store_fail(st, AN_E_CONFIG, "%s: slot_ttl_ms (%lld ms) differs from the one recorded for %s",
					  l->who, (long long) ttl_ms, place);
	/* With the value found, the message says it all; else the broker's own words. */
	if (recorded > 0)
		an_store_detailf(st, "Two slot_ttl_ms on one prefix could let a gate declared with the shorter one expire "
						 "before a host with a longer max_late_ms claims its slot, which would then be won again. "
						 "The prefix's is the x-message-ttl of the queue %s, declared by its first host.", queue);
	else
		an_store_detailf(st, "The prefix's slot_ttl_ms is the x-message-ttl of the queue %s. RabbitMQ answered %s.",
						 queue, why);
	if (recorded > 0)
		return an_store_hintf(st, "Use slot_ttl_ms=%lld on this host. To change it for the prefix, see \"Changing "
							  "slot_ttl_ms\" in doc/stores-amqp-nats.md.", recorded);
	return an_store_hintf(st, "Use the prefix's slot_ttl_ms on this host (rabbitmqctl list_queues name arguments "
						  "shows it). To change it, see \"Changing slot_ttl_ms\" in doc/stores-amqp-nats.md.");
}

/* <prefix>.format.N+1 exists: a later release used the prefix. */
static int
refuse_newer(an_store *st, const amqp_link *l, const char *place, const char *queue)
{
	an_store_fail(st, AN_E_CONFIG,
				  "%s: %s is in format %d or later (a later release of anarchon), newer than format %d of this host (anarchon %s)",
				  l->who, place, AN_REMOTE_FORMAT + 1, AN_REMOTE_FORMAT, AN_VERSION);
	an_store_detailf(st, "The queue %s says that a host of a later release wrote to %s; this host cannot tell how "
					 "it stores a slot's run, so it decides nothing there.", queue, place);
	return an_store_hintf(st, "Use the release of anarchon that wrote %s, or a later one, on every host that claims on %s.",
						  queue, place);
}

int
amqp_format_check(an_store *st, amqp_link *l, const char *prefix, const char *vhost, int64_t ttl_ms,
				  const an_deadline *d)
{
	char		queue[96];
	char		place[sizeof(queue) + 320];	/* a virtual host's name is up to 255 bytes */

	snprintf(place, sizeof(place), "prefix %s of virtual host %s", prefix, vhost);
	if (amqp_link_channel(st, l, d) != AN_OK)
		return st->err.code;
	for (int f = 2; f <= AN_REMOTE_FORMAT; f++)
	{
		snprintf(queue, sizeof(queue), "%s.format.%d", prefix, f);
		if (declare(st, l, d, queue, 0, ttl_ms) == AN_OK)
			continue;
		if (l->last_code == 406)
			return refuse_ttl(st, l, place, queue, ttl_ms);
		return st->err.code;
	}
	snprintf(queue, sizeof(queue), "%s.format.%d", prefix, AN_REMOTE_FORMAT + 1);
	if (declare(st, l, d, queue, 1, 0) == AN_OK)
		return refuse_newer(st, l, place, queue);
	if (l->last_code != 404)
		return st->err.code;
	/* No such queue: the answer wanted.  The broker closed the channel with it. */
	an_store_clear(st);
	return amqp_link_channel(st, l, d);
}
