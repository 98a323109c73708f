/*
 * nats_link.c — a NATS connection with sliced, cancellable requests
 * (see nats_link.h).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nats_link.h"

/*
 * nats.c's threads outlive natsConnection_Destroy by a moment, and a host
 * may unload us right after closing the store (SQLite unloads extensions
 * when the database connection closes, which takes libnats with it): a
 * thread then runs unmapped code.  Pin libnats in memory for the life of
 * the process.  Its threads never call anarchon code, so only it must stay.
 */
static void
pin_libnats(void)
{
	static int	pinned;
	Dl_info		info;

	if (pinned)
		return;
	if (dladdr((void *) natsConnection_Connect, &info) && info.dli_fname &&
		dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) != NULL)
		pinned = 1;
}

/* Map a nats.c status met while connecting to our error classes. */
static int
connect_failed(an_store *st, nats_link *l, natsStatus s, int64_t timeout_ms)
{
	switch (s)
	{
		case NATS_CONNECTION_AUTH_FAILED:
			return an_store_fail(st, AN_E_AUTH, "%s refused the connection: authorization failed (check the token in the store URL)", l->who);
		case NATS_TIMEOUT:
			return an_store_fail(st, AN_E_TIMEOUT, "%s did not complete the connection within timeout_ms (%lld ms)",
								 l->who, (long long) timeout_ms);
		case NATS_NO_MEMORY:
			return an_store_fail(st, AN_E_NOMEM, "out of memory connecting to %s", l->who);
		default:
			return an_store_fail(st, AN_E_CONNECT, "could not connect to %s: %s", l->who, natsStatus_GetText(s));
	}
}

int
nats_link_open(an_store *st, nats_link *l, const char *host, int port,
			   const char *token, const an_deadline *d)
{
	natsOptions *opts = NULL;
	natsInbox  *inbox = NULL;
	natsStatus	s;
	char		url[300];
	int64_t		left = an_deadline_left(d);
	int			rc = AN_OK;

	if (left <= 0)
		left = 1;
	pin_libnats();
	snprintf(url, sizeof(url), strchr(host, ':') ? "nats://[%s]:%d" : "nats://%s:%d", host, port);
	s = natsOptions_Create(&opts);
	if (s == NATS_OK)
		s = natsOptions_SetURL(opts, url);
	if (s == NATS_OK && token)
		s = natsOptions_SetToken(opts, token);
	if (s == NATS_OK)
		s = natsOptions_SetName(opts, "anarchon");
	if (s == NATS_OK)
		s = natsOptions_SetTimeout(opts, left);
	/*
	 * After a server restart nats.c reconnects by itself, quickly and without
	 * end; requests sent meanwhile wait in its buffer and time out like any
	 * other request when the server stays away.
	 */
	if (s == NATS_OK)
		s = natsOptions_SetMaxReconnect(opts, -1);
	if (s == NATS_OK)
		s = natsOptions_SetReconnectWait(opts, 100);
	/* Every publish is a request we wait for: send it now, not at the flusher's next turn. */
	if (s == NATS_OK)
		s = natsOptions_SetSendAsap(opts, true);
	if (s != NATS_OK)
	{
		natsOptions_Destroy(opts);
		return an_store_fail(st, AN_E_INTERNAL, "could not set up a NATS connection: %s", natsStatus_GetText(s));
	}
	s = natsConnection_Connect(&l->nc, opts);
	natsOptions_Destroy(opts);
	if (s != NATS_OK)
	{
		l->nc = NULL;
		return connect_failed(st, l, s, d->timeout_ms);
	}
	s = natsInbox_Create(&inbox);
	if (s == NATS_OK)
	{
		char		pattern[sizeof(l->inbox) + 2];

		snprintf(l->inbox, sizeof(l->inbox), "%s", (const char *) inbox);
		snprintf(pattern, sizeof(pattern), "%s.*", l->inbox);
		s = natsConnection_SubscribeSync(&l->sub, l->nc, pattern);
	}
	natsInbox_Destroy(inbox);
	if (s != NATS_OK)
	{
		rc = an_store_fail(st, AN_E_CONNECT, "could not subscribe for answers on %s: %s", l->who, natsStatus_GetText(s));
		nats_link_close(l);
	}
	return rc;
}

void
nats_link_close(nats_link *l)
{
	if (l->sub)
		natsSubscription_Destroy(l->sub);
	if (l->nc)
	{
		natsConnection_Close(l->nc);
		natsConnection_Destroy(l->nc);
	}
	l->sub = NULL;
	l->nc = NULL;
}

/* The connection is gone for good (closed by nats.c or by a failed call). */
static int
dropped(an_store *st, nats_link *l, const char *what, natsStatus s)
{
	nats_link_close(l);
	return an_store_fail(st, AN_E_CONNECT, "lost the connection to %s while sending %s: %s",
						 l->who, what, natsStatus_GetText(s));
}

static int
send_request(nats_link *l, const char *subject, const char *reply,
			 const char *msgid, const char *body, natsStatus *out)
{
	natsMsg    *m = NULL;
	natsStatus	s;

	s = natsMsg_Create(&m, subject, reply, body, (int) strlen(body));
	if (s == NATS_OK && msgid)
		s = natsMsgHeader_Set(m, "Nats-Msg-Id", msgid);
	if (s == NATS_OK)
		s = natsConnection_PublishMsg(l->nc, m);
	natsMsg_Destroy(m);
	*out = s;
	return s == NATS_OK ? 0 : -1;
}

int
nats_link_request(an_store *st, nats_link *l, const an_deadline *d,
				  const char *what, const char *subject, const char *msgid,
				  const char *body, const char *noresp, char **reply)
{
	char		rsubj[sizeof(l->inbox) + 24];
	natsStatus	s;
	int			rc;
	int			slice;

	*reply = NULL;
	snprintf(rsubj, sizeof(rsubj), "%s.%llu", l->inbox, (unsigned long long) ++l->nreq);
	if (send_request(l, subject, rsubj, msgid, body, &s) < 0)
		return s == NATS_NO_MEMORY ? an_store_fail(st, AN_E_NOMEM, "out of memory") : dropped(st, l, what, s);

	while ((rc = an_wait_tick(st, d, l->who, what, &slice)) == AN_OK)
	{
		natsMsg    *m = NULL;
		const char *data;
		int			len;

		s = natsSubscription_NextMsg(&m, l->sub, slice);
		if (s == NATS_TIMEOUT)
			continue;
		if (s == NATS_NO_RESPONDERS)
			return an_store_fail(st, AN_E_CONFIG, "%s: %s", l->who, noresp);
		if (s != NATS_OK)
			return dropped(st, l, what, s);
		if (strcmp(natsMsg_GetSubject(m), rsubj) != 0)
		{
			/* The answer to an earlier request that was given up. */
			natsMsg_Destroy(m);
			continue;
		}
		if (natsMsg_IsNoResponders(m))
		{
			natsMsg_Destroy(m);
			return an_store_fail(st, AN_E_CONFIG, "%s: %s", l->who, noresp);
		}
		data = natsMsg_GetData(m);
		len = natsMsg_GetDataLength(m);
		*reply = malloc((size_t) len + 1);
		if (*reply == NULL)
		{
			natsMsg_Destroy(m);
			return an_store_fail(st, AN_E_NOMEM, "out of memory");
		}
		memcpy(*reply, data ? data : "", (size_t) len);
		(*reply)[len] = '\0';
		natsMsg_Destroy(m);
		return AN_OK;
	}
	return rc;
}
