/*
 * format_marker.c — judging a remote store's format marker (format_marker.h).
 *
 * A host must not decide on data written in a format it does not know: a
 * later release could keep what makes a slot taken where this host never
 * looks.  So a marker that says a newer format is refused, before anything
 * is decided, and so is one this host cannot read: it is never guessed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "format_marker.h"

void
an_format_marker_mine(char *buf, size_t size)
{
	snprintf(buf, size, "%d %s", AN_REMOTE_FORMAT, AN_REMOTE_FORMAT_SINCE);
}

int
an_format_marker_judge(an_store *st, const char *who, const char *place,
					   const char *marker, const char *value)
{
	char	   *end;
	long		format = strtol(value, &end, 10);
	const char *since;

	if (end == value || format < 1 || (*end != ' ' && *end != '\0'))
	{
		an_store_fail(st, AN_E_CONFIG, "%s: %s holds no format this host can read: %.40s", who, marker, value);
		an_store_detailf(st, "anarchon writes \"<format> <release>\" there, e.g. \"%d %s\".",
						 AN_REMOTE_FORMAT, AN_REMOTE_FORMAT_SINCE);
		return an_store_hintf(st, "Restore it from a backup, or delete it if no host of a release after %s uses %s.",
							  AN_VERSION, place);
	}
	if (format <= AN_REMOTE_FORMAT)
		return AN_OK;
	since = *end == ' ' && end[1] ? end + 1 : "of a later release";
	an_store_fail(st, AN_E_CONFIG,
				  "%s: %s is in format %ld (anarchon %s), newer than format %d of this host (anarchon %s)",
				  who, place, format, since, AN_REMOTE_FORMAT, AN_VERSION);
	an_store_detailf(st, "A host of anarchon %s or later wrote to %s; this host cannot tell how it stores a slot's run, so it decides nothing there.",
					 since, place);
	return an_store_hintf(st, "Use anarchon %s or later on every host that claims on %s.", since, place);
}
