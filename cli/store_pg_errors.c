/*
 * store_pg_errors.c — what the PostgreSQL store's failures are, in the one
 * shape of an error in anarchon (store.h): a connection libpq could not make,
 * by what libpq says about it, and a query the server refused, by its
 * SQLSTATE, with the server's own message, DETAIL and HINT.
 */
#include <stdio.h>
#include <string.h>

#include "store_pg_int.h"

/* text as a sentence: a capital first, a period last unless it ends one. */
static void
sentence(char *text)
{
	size_t		n = strlen(text);

	if (n == 0)
		return;
	if (text[0] >= 'a' && text[0] <= 'z')
		text[0] = (char) (text[0] - 'a' + 'A');
	if (strchr(".?!", text[n - 1]) == NULL && n + 1 < AN_ERRMAX)
		strcpy(text + n, ".");
}

/*
 * libpq's error text, scrubbed, in two parts: its first line without the
 * "connection to server at ... failed: " and "FATAL:  " prefixes, and the
 * rest (libpq's own hints, the other hosts of a list) joined as a sentence.
 */
void
an_pg_libpq_text(const an_pg *pg, const char *raw, char *first, char *rest)
{
	char		buf[2 * AN_ERRMAX];
	char	   *p = buf;
	char	   *nl;
	const char *cut;
	size_t		n = 0;

	an_pg_scrub(pg, raw && raw[0] ? raw : "no reason given", buf, sizeof(buf));
	if ((nl = strchr(p, '\n')) != NULL)
		*nl++ = '\0';
	if (strncmp(p, "connection to server", 20) == 0 && (cut = strstr(p, " failed: ")) != NULL)
		p += cut - p + 9;
	for (const char *const *sev = (const char *const[]) {"FATAL:  ", "ERROR:  ", NULL}; *sev; sev++)
		if (strncmp(p, *sev, strlen(*sev)) == 0)
			p += strlen(*sev);
	snprintf(first, AN_ERRMAX, "%.*s", AN_ERRMAX - 1, p);
	for (; nl && *nl && n + 1 < AN_ERRMAX; nl++)
	{
		char		c = (*nl == '\n' || *nl == '\t') ? ' ' : *nl;

		if (c != ' ' || (n > 0 && rest[n - 1] != ' '))
			rest[n++] = c;
	}
	while (n > 0 && rest[n - 1] == ' ')
		n--;
	rest[n] = '\0';
	sentence(rest);
}

/* A connection libpq could not make, by what it says. */
int
an_pg_connect_failed(an_store *st, an_pg *pg)
{
	const char *raw = PQerrorMessage(pg->conn);
	char		first[AN_ERRMAX],
				rest[AN_ERRMAX];
	an_error	code = AN_E_CONNECT;
	const char *hint = NULL;

	an_pg_libpq_text(pg, raw, first, rest);
	if (PQconnectionNeedsPassword(pg->conn))
	{
		code = AN_E_AUTH;
		snprintf(first, sizeof(first), "the server asks for a password and none was given");
		hint = "Give the password in ~/.pgpass or PGPASSWORD, or in the URL.";
	}
	else if (strstr(raw, "authentication failed") || strstr(raw, "no pg_hba.conf entry")
			 || strstr(raw, "permission denied") || (strstr(raw, "role \"") && strstr(raw, "does not exist")))
	{
		code = AN_E_AUTH;
		hint = "Check the user and the password (in the URL, ~/.pgpass or PGPASSWORD) and the server's pg_hba.conf.";
	}
	else if (strstr(raw, "database \"") && strstr(raw, "does not exist"))
	{
		code = AN_E_CONFIG;
		hint = "Name an existing database in the URL, one where CREATE EXTENSION anarchon was run.";
	}
	else if (strncmp(first, "invalid ", 8) == 0 || strncmp(first, "could not match ", 16) == 0)
		code = AN_E_CONFIG;     /* a parameter libpq refused before connecting */
	an_pg_drop(pg);
	an_store_fail(st, code, "cannot connect to PostgreSQL at %s: %s", pg->where, first);
	if (rest[0])
		an_store_detailf(st, "%s", rest);
	return hint ? an_store_hintf(st, "%s", hint) : (int) code;
}

/* The class of a server's SQLSTATE (errcodes.txt). */
static an_error
sqlstate_error(const char *s)
{
	if (s == NULL || strlen(s) != 5)
		return AN_E_STORE;
	if (strncmp(s, "08", 2) == 0 || strncmp(s, "57P", 3) == 0)
		return AN_E_CONNECT;    /* connection exceptions; shutdowns, "cannot connect now" */
	if (strcmp(s, "57014") == 0)
		return AN_E_CANCELED;
	if (strcmp(s, "55P03") == 0)
		return AN_E_BUSY;
	if (strncmp(s, "28", 2) == 0 || strcmp(s, "42501") == 0)
		return AN_E_AUTH;
	if (strncmp(s, "22", 2) == 0)
		return AN_E_INPUT;
	if (strcmp(s, "0A000") == 0)
		return AN_E_UNSUPPORTED;
	if (strcmp(s, "42883") == 0 || strcmp(s, "3F000") == 0)
		return AN_E_CONFIG;     /* the extension's function or schema is missing */
	return AN_E_STORE;
}

/*
 * The server's hint as this host's user reads it.  The command passes every
 * setting of a call as the function's argument, so a hint to raise
 * anarchon.busy_timeout_ms (a GUC the call does not read) is a hint to give
 * --busy-timeout-ms (an_store_setting).  An administrator's GUCs
 * (anarchon.max_lease_ms, ...) are not the command's and stay as they are.
 */
static void
hint_for_host(const an_store *st, const char *hint, char *out, size_t outlen)
{
	static const char *const passed[] = {"lease_ms", "max_late_ms", "attempts", "overlap", "busy_timeout_ms", NULL};
	size_t		n = 0;

	while (*hint && n + 1 < outlen)
	{
		const char *spelt = NULL;
		size_t		len = 0;

		if (strncmp(hint, "anarchon.", 9) == 0)
			for (int i = 0; passed[i]; i++)
			{
				len = strlen(passed[i]);
				if (strncmp(hint + 9, passed[i], len) == 0 &&
					!(hint[9 + len] == '_' || (hint[9 + len] >= 'a' && hint[9 + len] <= 'z')))
				{
					spelt = an_store_setting(st, passed[i]);
					break;
				}
			}
		if (spelt)
		{
			n += (size_t) snprintf(out + n, outlen - n, "%s", spelt);
			hint += 9 + len;
		}
		else
			out[n++] = *hint++;
	}
	out[n < outlen ? n : outlen - 1] = '\0';
}

/* The server refused the query: its message, DETAIL and HINT under the class of its SQLSTATE. */
int
an_pg_server_error(an_store *st, an_pg *pg, const PGresult *res)
{
	const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	const char *m = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
	const char *detail = PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL);
	const char *hint = PQresultErrorField(res, PG_DIAG_MESSAGE_HINT);
	an_error	code = sqlstate_error(state);
	char		text[AN_ERRMAX];

	an_pg_scrub(pg, m ? m : PQresultErrorMessage(res), text, sizeof(text));
	text[strcspn(text, "\n")] = '\0';
	an_store_fail(st, code, "%s", text[0] ? text : "the query failed without a message");
	if (code == AN_E_CONFIG)
	{
		an_store_detailf(st, "The anarchon extension in database \"%s\" lacks the function or schema.",
						 PQdb(pg->conn));
		return an_store_hintf(st, "Run CREATE EXTENSION anarchon in that database, or ALTER EXTENSION anarchon "
							  "UPDATE when it is older than this command.");
	}
	if (detail)
		an_store_detailf(st, "%s", detail);
	if (hint)
	{
		hint_for_host(st, hint, text, sizeof(text));
		an_store_hintf(st, "%s", text);
	}
	return code;
}
