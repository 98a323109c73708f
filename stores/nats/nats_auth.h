/*
 * nats_auth.h — the credentials a NATS store logs in with, read once when
 * the store opens, and the fields of CONNECT that carry them.
 *
 *   nats://user:password@host     "user" and "pass"
 *   nats://token@host             "auth_token"
 *   ?nkey=/path/user.seed         "nkey" (the public key) and "sig" (the
 *                                 server's nonce signed with the seed)
 *   ?creds=/path/user.creds       "jwt" (the user JWT) and "sig"
 *
 * At most one kind per URL.  The files are read at open (the seed is
 * decoded and the file's text wiped), so a claim reads no file.  Nothing of
 * a secret ever goes into a message: errors name the kind of credentials
 * and the file, never its contents.
 */
#ifndef ANARCHON_NATS_AUTH_H
#define ANARCHON_NATS_AUTH_H

#include "anarchon.h"
#include "store.h"

typedef struct nats_auth
{
	char	   *user;            /* with password */
	char	   *password;
	char	   *token;
	char	   *jwt;             /* from a creds file */
	struct nkey_user *key;       /* from an nkey or creds file; NULL when none */
	const char *kind;            /* what is sent, for messages; NULL: nothing */
} nats_auth;

/*
 * Take the URL's credentials (any of them NULL): user and password, a token
 * (a user without a password), the path of an nkey seed file or of a creds
 * file.  AN_E_CONFIG naming the file and the reason when one cannot be used,
 * or when two kinds are given.  read_files 0: check the URL only (a
 * server's options are checked where the files may not be readable).
 */
int			nats_auth_load(an_store *st, nats_auth *a, const char *who, const char *user,
						   const char *password, const char *nkey_path, const char *creds_path,
						   int read_files);

/*
 * The CONNECT fields for a server whose INFO gave nonce (NULL: none), each
 * preceded by a comma, in a malloc'd string (*out; "" when no credentials)
 * that nats_auth_wipe_free wipes.
 */
int			nats_auth_fields(an_store *st, const nats_auth *a, const char *who, const char *nonce,
							 char **out);

/* Wipe and free a string that may hold a secret. */
void		nats_auth_wipe_free(char *s);

/* Wipe and free every credential. */
void		nats_auth_free(nats_auth *a);

#endif							/* ANARCHON_NATS_AUTH_H */
