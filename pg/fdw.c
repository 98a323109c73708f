/*
 * fdw.c — the foreign-data wrapper anarchon: store addresses and credentials
 * in PostgreSQL's catalogs.
 *
 * A server of the wrapper holds one option, url (a store URL without
 * credentials); a user mapping holds a role's credentials: user and
 * password, and the TLS and NATS credentials that are files (cert, key,
 * nkey, creds) or secrets (sentinel_user, sentinel_password).  Options that
 * name a file the backend will read (ca, cert, key, nkey, creds, in a
 * mapping or in a server's url) may be set only by a superuser, as
 * postgres_fdw rules for sslcert and sslkey: otherwise any role that may
 * make a server or a mapping could have the backend read a file of its
 * choosing with the server's privileges.  The validator runs
 * at CREATE and ALTER of the wrapper, a server or a mapping, and refuses
 * there what would otherwise fail only at the first claim: an unknown
 * option, a missing url, a url with credentials, one that does not parse, a
 * store this build does not have (naming the package to install), and what
 * the store itself would refuse in its url (strategy, parameters and their
 * ranges: the store's check_url method, which does not connect).  It never
 * repeats a password.  an_pg_server_url composes the URL a remote store
 * opens from the server and the calling role's mapping.
 */
#include "anarchon_pg.h"

#include "access/reloptions.h"
#include "catalog/pg_foreign_data_wrapper.h"
#include "catalog/pg_foreign_server.h"
#include "catalog/pg_user_mapping.h"
#include "commands/defrem.h"
#include "foreign/foreign.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "remote.h"
#include "url.h"

PG_FUNCTION_INFO_V1(anarchon_fdw_validator);

#define URL_EXAMPLES "A store url looks like redis://host:6379/0?strategy=lease, amqp://host:5672/vhost or nats://host:4222."

/*
 * The url option refused: why (a store's or the parser's error, with its
 * detail when it has one), and what to do: its hint, else hint_if_none.
 */
static void
bad_url(const an_err *why, const char *hint_if_none)
{
	char		detail[AN_ERRMAX];
	const char *hint = why->hint[0] != '\0' ? why->hint : hint_if_none;

	an_pg_sentence(why->msg, detail, sizeof(detail));
	ereport(ERROR,
			(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
			 errmsg("invalid value for option \"url\""),
			 why->detail[0] != '\0' ?
			 errdetail("%s %s", detail, why->detail) : errdetail("%s", detail),
			 hint != NULL && hint[0] != '\0' ? errhint("%s", hint) : 0));
}

/* The options of the wrapper, by the catalog of the object that takes them. */
static const struct
{
	const char *name;
	Oid			catalog;
}			wrapper_options[] = {
	{"url", ForeignServerRelationId},
	{"user", UserMappingRelationId},
	{"password", UserMappingRelationId},
	{"cert", UserMappingRelationId},
	{"key", UserMappingRelationId},
	{"nkey", UserMappingRelationId},
	{"creds", UserMappingRelationId},
	{"sentinel_user", UserMappingRelationId},
	{"sentinel_password", UserMappingRelationId},
};

/*
 * The mapping options that go into the store URL as query parameters (user
 * and password go in its userinfo).
 */
static const char *const query_options[] = {
	"cert", "key", "nkey", "creds", "sentinel_user", "sentinel_password",
};

/* URL parameters and mapping options that name a file the backend reads. */
static const char *const file_options[] = {"ca", "cert", "key", "nkey", "creds"};

/* URL parameters that are secrets: refused in a server's url. */
static const char *const secret_params[] = {"sentinel_password", "password", "token"};

static bool
in_list(const char *name, const char *const *list, int n)
{
	for (int i = 0; i < n; i++)
		if (strcmp(list[i], name) == 0)
			return true;
	return false;
}

/* Only a superuser may name a file the backend is to read (see the header). */
static void
check_file_option(const char *name, const char *where)
{
	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("only a superuser may set option \"%s\" %s", name, where),
				 errdetail("The option names a file that the server's backends would read with the server's privileges."),
				 errhint("Ask a superuser to create or alter the %s.",
						 strcmp(where, "in a user mapping") == 0 ? "user mapping" : "server")));
}

/*
 * Check a server's url as the store would when it opens it, without
 * connecting: parseable, no credentials, a store of this build, and accepted
 * by the store's own check.
 */
static void
validate_url(const char *url)
{
	an_url		u;
	an_err		err;
	const an_store_methods *m;
	an_store	st;
	bool		credentials;

	if (strcmp(url, "local") == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("the url of a server must name a network store, not 'local'"),
				 errhint("The local store needs no server: SET anarchon.store = 'local'.")));
	if (an_url_parse(url, &u, &err) != 0)
		bad_url(&err, URL_EXAMPLES);
	credentials = u.user != NULL || u.password != NULL;
	for (int i = 0; i < u.nparams; i++)
	{
		if (in_list(u.params[i].name, secret_params, lengthof(secret_params)))
			credentials = true;
		else if (in_list(u.params[i].name, file_options, lengthof(file_options)))
			check_file_option(u.params[i].name, "in the url of a server");
	}
	an_url_free(&u);
	if (credentials)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("the url of a server must not contain a user or password"),
				 errdetail("Every role can read the options of a server."),
				 errhint("Put the credentials in a user mapping: CREATE USER MAPPING FOR PUBLIC SERVER ... OPTIONS (user '...', password '...'), or sentinel_password '...'.")));
	if ((m = an_remote_find(url, &err)) == NULL)
		bad_url(&err, NULL);
	an_store_init(&st, m, NULL);
	if (an_store_check_url(&st, url) != AN_OK)
		bad_url(&st.err, NULL);
}

/* Is name an option of catalog's objects? */
static bool
valid_option(Oid catalog, const char *name)
{
	for (int i = 0; i < (int) lengthof(wrapper_options); i++)
		if (wrapper_options[i].catalog == catalog && strcmp(wrapper_options[i].name, name) == 0)
			return true;
	return false;
}

/* The hint for an invalid option: the options catalog's objects take. */
static int
valid_options_hint(Oid catalog)
{
	StringInfoData names;

	initStringInfo(&names);
	for (int i = 0; i < (int) lengthof(wrapper_options); i++)
		if (wrapper_options[i].catalog == catalog)
			appendStringInfo(&names, "%s%s", names.len > 0 ? ", " : "", wrapper_options[i].name);
	if (names.len == 0)
		return errhint("There are no valid options in this context.");
	return errhint("Valid options in this context are: %s.", names.data);
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

		if (!valid_option(catalog, def->defname))
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
					 errmsg("invalid option \"%s\"", def->defname),
					 valid_options_hint(catalog)));
		if (strcmp(def->defname, "url") == 0)
		{
			validate_url(defGetString(def));
			has_url = true;
		}
		else if (strlen(defGetString(def)) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
					 errmsg("option \"%s\" must not be empty", def->defname)));
		else if (in_list(def->defname, file_options, lengthof(file_options)))
			check_file_option(def->defname, "in a user mapping");
	}
	if (catalog == ForeignServerRelationId && !has_url)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
				 errmsg("a server of the anarchon wrapper needs a url option"),
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

/*
 * The mapping's query options, appended to the server's url as parameters.
 * One set both there and in the url is refused rather than silently
 * preferred: which one wins would otherwise be a guess.
 */
static void
append_query_options(StringInfo buf, ForeignServer *server, UserMapping *mapping)
{
	if (mapping == NULL)
		return;
	for (int i = 0; i < (int) lengthof(query_options); i++)
	{
		const char *v = option(mapping->options, query_options[i]);
		char	   *q;
		size_t		n = strlen(query_options[i]);
		bool		twice = false;

		if (v == NULL)
			continue;
		/* The url's own query: is the parameter there too? */
		for (q = strchr(buf->data, '?'); q != NULL; q = strchr(q + 1, '&'))
			if (strncmp(q + 1, query_options[i], n) == 0 && q[1 + n] == '=')
				twice = true;
		if (twice)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
					 errmsg("option \"%s\" is set both in the url of server \"%s\" and in the user mapping",
							query_options[i], server->servername),
					 errhint("Keep it in one place: ALTER SERVER or ALTER USER MAPPING ... OPTIONS (DROP %s).",
							 query_options[i])));
		appendStringInfoChar(buf, strchr(buf->data, '?') ? '&' : '?');
		appendStringInfo(buf, "%s=", query_options[i]);
		append_encoded(buf, v);
	}
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
				 errmsg("foreign server \"%s\" has no url option", server->servername)));
	initStringInfo(&buf);
	appendBinaryStringInfo(&buf, url, (int) (sep - url) + 3);
	/*
	 * user:password@, user@ or :password@ — except that NATS takes a token
	 * where the user goes (nats://token@host, tls://token@host): a lone
	 * password there is the token.
	 */
	if (user == NULL && password != NULL &&
		(pg_strncasecmp(url, "nats://", 7) == 0 || pg_strncasecmp(url, "tls://", 6) == 0))
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
	append_query_options(&buf, server, mapping);
	return buf.data;
}
