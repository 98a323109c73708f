/*
 * nats_nkey.h — NATS nkeys and user credentials: the seed of an nkey file
 * or a .creds file, the public key it stands for, and the signature of the
 * server's nonce that proves it (Ed25519, through OpenSSL).
 *
 * Formats as NATS's own tools write them: a seed is base32 (RFC 4648, no
 * padding) of two prefix bytes, the 32-byte Ed25519 seed and a CRC-16
 * (XMODEM, little-endian); a public key the same with one prefix byte; a
 * .creds file holds a user JWT and a seed, each between -----BEGIN and
 * ------END lines.
 */
#ifndef ANARCHON_NATS_NKEY_H
#define ANARCHON_NATS_NKEY_H

#include <stddef.h>

#include "anarchon.h"

#define NKEY_SEED_LEN 58          /* characters of an encoded seed */
#define NKEY_PUBLIC_LEN 56        /* characters of an encoded public key */
#define NKEY_SIG_LEN 86           /* base64url (no padding) of a 64-byte signature */
#define NKEY_JWT_MAX 8192

/* A user's seed decoded: the raw Ed25519 seed. */
typedef struct nkey_user
{
	unsigned char seed[32];
	char		public_key[NKEY_PUBLIC_LEN + 1];
} nkey_user;

/*
 * Decode a user seed ("SU..."): 0, or -1 with the reason in err (a seed of
 * another kind, a bad checksum, a wrong length).  Never copies the seed
 * into err.
 */
int			nkey_user_from_seed(const char *seed, size_t len, nkey_user *out, an_err *err);

/* Sign data with the user's key: sig is base64url without padding, NUL-ended. */
int			nkey_sign(const nkey_user *u, const char *data, size_t len, char sig[NKEY_SIG_LEN + 1],
					  an_err *err);

/*
 * Read the user JWT and the seed from the text of a .creds file: 0, or -1
 * with the reason.  jwt gets the JWT (at most NKEY_JWT_MAX characters);
 * the seed is decoded into *user.
 */
int			nkey_read_creds(const char *text, size_t len, char *jwt, size_t jwtcap, nkey_user *user,
							an_err *err);

/* Wipe a decoded key. */
void		nkey_wipe(nkey_user *u);

#endif							/* ANARCHON_NATS_NKEY_H */
