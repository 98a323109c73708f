/*
 * fdw.c — the foreign-data wrapper anarchon: store addresses and credentials
 * in PostgreSQL's catalogs.
 *
 * A server of the wrapper holds one option, url (a store URL of DESIGN §6,
 * without credentials); a user mapping holds user and password.  The
 * validator refuses anything else with a message that lists what is
 * allowed, and never repeats a password.  an_pg_server_url composes the URL
 * a remote store opens from the two, for the role that calls.
 */
#include "anarchon_pg.h"

#include "access/reloptions.h"
#include "catalog/pg_foreign_data_wrapper.h"
#include "catalog/pg_foreign_server.h"
#include "catalog/pg_user_mapping.h"
#include "commands/defrem.h"
#include "foreign/foreign.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"

#include "remote.h"
#include "url.h"

PG_FUNCTION_INFO_V1(anarchon_fdw_validator);

#define ALLOWED "The anarchon wrapper takes url on a server, user and password on a user mapping, and nothing on the wrapper itself"

/* Check a server's url: parseable, a known store, no credentials in it. */
static void
validate_url(const char *url)
{
	an_url		u;
	char		err[AN_ERRMAX];

	if (an_url_parse(url, &u, err, sizeof(err)) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
				 errmsg("anarchon: invalid url: %s", err)));
	if (u.user != NULL || u.password != NULL)
	{
		an_url_free(&u);
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
				 errmsg("anarchon: the server url must not contain a user or password"),
				 errhint("Every role can read a server's options: put credentials in a user mapping, OPTIONS (user '...', password '...').")));
	}
	an_url_free(&u);
	if (an_remote_find(url, err, sizeof(err)) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
				 errmsg("anarchon: invalid url: %s", err)));
}

/*
 * anarchon_fdw_validator: checks the options of the wrapper, its servers
 * and their user mappings; returns nothing, raises an error on a bad option.
 */
Datum
anarchon_fdw_validator(PG_FUNCTION_ARGS)
{
	List	   *options = untransformRelOptions(PG_GETARG_DATUM(0));
	Oid			catalog = PG_GETARG_OID(1);
	bool		has_url = false;
	ListCell   *cell;

	foreach(cell, options)
	{
		DefElem    *def = (DefElem *) lfirst(cell);
		bool		fits;

		if (catalog == ForeignServerRelationId)
			fits = strcmp(def->defname, "url") == 0;
		else if (catalog == UserMappingRelationId)
			fits = strcmp(def->defname, "user") == 0 || strcmp(def->defname, "password") == 0;
		else
			fits = false;
		if (!fits)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
					 errmsg("anarchon: invalid option \"%s\"", def->defname),
					 errhint("%s.", ALLOWED)));
		if (strcmp(def->defname, "url") == 0)
		{
			validate_url(defGetString(def));
			has_url = true;
		}
		else if (strlen(defGetString(def)) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
					 errmsg("anarchon: option \"%s\" must not be empty", def->defname)));
	}
	if (catalog == ForeignServerRelationId && !has_url)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
				 errmsg("anarchon: a server of the anarchon wrapper needs a url option"),
				 errhint("For example OPTIONS (url 'redis://127.0.0.1:6379/0?strategy=lease').")));
	PG_RETURN_VOID();
}

/* Append s percent-encoded for the userinfo of a URL. */
static void
append_encoded(StringInfo buf, const char *s)
{
	for (const unsigned char *p = (const unsigned char *) s; *p; p++)
	{
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			(*p >= '0' && *p <= '9') || *p == '-' || *p == '.' || *p == '_' || *p == '~')
			appendStringInfoChar(buf, (char) *p);
		else
			appendStringInfo(buf, "%%%02X", *p);
	}
}

static const char *
option(List *options, const char *name)
{
	ListCell   *cell;

	foreach(cell, options)
	{
		DefElem    *def = (DefElem *) lfirst(cell);

		if (strcmp(def->defname, name) == 0)
			return defGetString(def);
	}
	return NULL;
}

char *
an_pg_server_url(ForeignServer *server, UserMapping *mapping)
{
	const char *url = option(server->options, "url");
	const char *sep;
	const char *user = mapping ? option(mapping->options, "user") : NULL;
	const char *password = mapping ? option(mapping->options, "password") : NULL;
	StringInfoData buf;

	if (url == NULL || (sep = strstr(url, "://")) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
				 errmsg("anarchon: server \"%s\" has no store url", server->servername)));
	initStringInfo(&buf);
	appendBinaryStringInfo(&buf, url, (int) (sep - url) + 3);
	/*
	 * user:password@, user@ or :password@ — except that NATS takes a token
	 * where the user goes (nats://token@host): a lone password there is the
	 * token.
	 */
	if (user == NULL && password != NULL && pg_strncasecmp(url, "nats://", 7) == 0)
	{
		user = password;
		password = NULL;
	}
	if (user)
		append_encoded(&buf, user);
	if (password)
	{
		appendStringInfoChar(&buf, ':');
		append_encoded(&buf, password);
	}
	if (user || password)
		appendStringInfoChar(&buf, '@');
	appendStringInfoString(&buf, sep + 3);
	return buf.data;
}
