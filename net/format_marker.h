/*
 * format_marker.h — the format markers of the remote stores: what a host
 * reads in a prefix's marker (Redis <prefix>:format, the NATS message on
 * <prefix>.format), judged the same way for every store.
 */
#ifndef ANARCHON_FORMAT_MARKER_H
#define ANARCHON_FORMAT_MARKER_H

#include "store.h"

/*
 * The format of what this release stores under a prefix of a remote store;
 * 1 was 0.1.0's, which wrote no marker.  A marker holds "<format> <first
 * release of that format>", e.g. "2 0.2.0".
 */
#define AN_REMOTE_FORMAT        2
#define AN_REMOTE_FORMAT_SINCE  "0.2.0"

/* AN_REMOTE_FORMAT's marker text, "2 0.2.0", into buf. */
void		an_format_marker_mine(char *buf, size_t size);

/*
 * Judge the marker's text value: AN_OK for a format up to this host's;
 * else st fails with AN_E_CONFIG (a newer format, naming both formats and
 * releases, or a text that is no format).  who starts the message ("redis
 * store redis://h:p"), place names what the format is of ("prefix cron"),
 * marker where it is kept ("the key cron:format").
 */
int			an_format_marker_judge(an_store *st, const char *who, const char *place,
								   const char *marker, const char *value);

#endif							/* ANARCHON_FORMAT_MARKER_H */
