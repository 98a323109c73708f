/*
 * nats_auth.c — a NATS store's credentials and the CONNECT fields that carry
 * them (see nats_auth.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nats_auth.h"
#include "nats_nkey.h"

/* A seed or creds file is small: a creds file is a JWT and a seed with banners. */
#define FILE_MAX (NKEY_JWT_MAX + 4096)

static char *
dup_or_null(const char *s, int *oom)
{
	char	   *d;

	if (s == NULL)
		return NULL;
	if ((d = strdup(s)) == NULL)
		*oom = 1;
	return d;
}

void
nats_auth_wipe_free(char *s)
{
	if (s == NULL)
		return;
	memset(s, 0, strlen(s));
	free(s);
}

void
nats_auth_free(nats_auth *a)
{
	nats_auth_wipe_free(a->user);
	nats_auth_wipe_free(a->password);
	nats_auth_wipe_free(a->token);
	nats_auth_wipe_free(a->jwt);
#ifdef AN_WITH_TLS
	if (a->key)
		nkey_wipe(a->key);
#endif
	free(a->key);
	memset(a, 0, sizeof(*a));
}

#ifdef AN_WITH_TLS
/*
 * Read the key file of URL parameter `param` at path: the seed of an nkey
 * file, or the JWT and seed of a creds file.
 */
static int
load_key(an_store *st, nats_auth *a, const char *who, const char *param, const char *path)
{
	char	   *text;
	char		jwt[NKEY_JWT_MAX + 1];
	an_err		why;
	FILE	   *f = fopen(path, "r");
	size_t		n;
	int			bad;

	if (f == NULL && strchr(path, '/') == NULL)
	{
		/*
		 * Not a path, and no such file here: most likely the seed or JWT
		 * itself, pasted where its file's path belongs.  Never quoted.
		 */
		an_store_fail(st, AN_E_CONFIG, "%s: the %s parameter names no readable file: %s", who, param, strerror(errno));
		return an_store_hintf(st, "Give the absolute path of the %s file, never its contents: a seed or a JWT in the URL would be shown wherever the URL is.", param);
	}
	if (f == NULL)
	{
		an_store_fail(st, AN_E_CONFIG, "%s: the %s file \"%s\" cannot be read: %s", who, param, path, strerror(errno));
		return an_store_hintf(st, "The file must be readable by the process that claims (in PostgreSQL, the server's operating system user).");
	}
	/* calloc: the copy of the secret is wiped before free whatever was read. */
	if ((text = calloc(1, FILE_MAX)) == NULL || (a->key = calloc(1, sizeof(*a->key))) == NULL)
	{
		fclose(f);
		free(text);
		return an_store_fail(st, AN_E_NOMEM, "out of memory");
	}
	n = fread(text, 1, FILE_MAX - 1, f);
	bad = ferror(f) || !feof(f);
	fclose(f);
	text[n] = '\0';
	if (bad)
		an_errf(&why, "it is larger than %d bytes or could not be read to its end", FILE_MAX - 1);
	else if (strcmp(param, "creds") == 0)
		bad = nkey_read_creds(text, n, jwt, sizeof(jwt), a->key, &why) != 0;
	else
	{
		/* A seed file: the seed, maybe with a line end. */
		while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' '))
			n--;
		bad = nkey_user_from_seed(text, n, a->key, &why) != 0;
	}
	memset(text, 0, FILE_MAX);
	free(text);
	if (!bad && strcmp(param, "creds") == 0 && (a->jwt = strdup(jwt)) == NULL)
		an_store_fail(st, AN_E_NOMEM, "out of memory");
	memset(jwt, 0, sizeof(jwt));
	if (bad)
		return an_store_fail(st, AN_E_CONFIG, "%s: the %s file \"%s\" cannot be used: %s", who, param, path, why.msg);
	return st->err.code;
}
#endif

int
nats_auth_load(an_store *st, nats_auth *a, const char *who, const char *user,
			   const char *password, const char *nkey_path, const char *creds_path,
			   int read_files)
{
	int			oom = 0;
	int			kinds = (user != NULL) + (nkey_path != NULL) + (creds_path != NULL);

	memset(a, 0, sizeof(*a));
	if (kinds > 1)
	{
		an_store_fail(st, AN_E_CONFIG, "%s: the URL gives more than one kind of credentials", who);
		return an_store_hintf(st, "Give one of user:password@, token@, nkey= or creds=.");
	}
	if (user != NULL && password != NULL)
	{
		a->user = dup_or_null(user, &oom);
		a->password = dup_or_null(password, &oom);
		a->kind = "the user and password";
	}
	else if (user != NULL)
	{
		a->token = dup_or_null(user, &oom);
		a->kind = "the token";
	}
	if (oom)
		return an_store_fail(st, AN_E_NOMEM, "out of memory");
	if ((nkey_path == NULL && creds_path == NULL) || !read_files)
		return AN_OK;
#ifdef AN_WITH_TLS
	a->kind = nkey_path ? "the nkey of the nkey file" : "the user JWT and nkey of the creds file";
	return load_key(st, a, who, nkey_path ? "nkey" : "creds", nkey_path ? nkey_path : creds_path);
#else
	return an_store_fail(st, AN_E_CONFIG, "%s: nkey and creds sign with OpenSSL, and this build of anarchon has none", who);
#endif
}

/* s as the body of a JSON string (no quotes), escaped into out (room: 6 x strlen(s) + 1). */
static void
json_escape(const char *s, char *out)
{
	size_t		w = 0;

	for (; *s; s++)
	{
		unsigned char c = (unsigned char) *s;

		if (c == '"' || c == '\\')
		{
			out[w++] = '\\';
			out[w++] = (char) c;
		}
		else if (c < 0x20)
			w += (size_t) sprintf(out + w, "\\u%04x", c);
		else
			out[w++] = (char) c;
	}
	out[w] = '\0';
}

/* Append ,"name":"value" (value escaped) at out + *w. */
static void
field(char *out, size_t *w, const char *name, const char *value)
{
	*w += (size_t) sprintf(out + *w, ",\"%s\":\"", name);
	json_escape(value, out + *w);
	*w += strlen(out + *w);
	out[(*w)++] = '"';
	out[*w] = '\0';
}

int
nats_auth_fields(an_store *st, const nats_auth *a, const char *who, const char *nonce, char **out)
{
	size_t		room = 64;
	size_t		w = 0;
	char	   *s;

	room += 6 * ((a->user ? strlen(a->user) : 0) + (a->password ? strlen(a->password) : 0) +
				 (a->token ? strlen(a->token) : 0) + (a->jwt ? strlen(a->jwt) : 0)) +
		NKEY_PUBLIC_LEN + NKEY_SIG_LEN + 64;
	if ((*out = s = malloc(room)) == NULL)
		return an_store_fail(st, AN_E_NOMEM, "out of memory connecting to %s", who);
	s[0] = '\0';
	if (a->user)
	{
		field(s, &w, "user", a->user);
		field(s, &w, "pass", a->password);
	}
	if (a->token)
		field(s, &w, "auth_token", a->token);
#ifdef AN_WITH_TLS
	if (a->key)
	{
		char		sig[NKEY_SIG_LEN + 1];
		an_err		why;

		if (a->jwt)
			field(s, &w, "jwt", a->jwt);
		else
			field(s, &w, "nkey", a->key->public_key);
		if (nonce != NULL && nkey_sign(a->key, nonce, strlen(nonce), sig, &why) != 0)
		{
			nats_auth_wipe_free(s);
			*out = NULL;
			return an_store_fail(st, AN_E_INTERNAL, "%s: could not sign the server's nonce: %s", who, why.msg);
		}
		if (nonce != NULL)
			field(s, &w, "sig", sig);
	}
#else
	(void) nonce;
#endif
	return AN_OK;
}
