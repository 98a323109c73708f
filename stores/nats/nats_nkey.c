/*
 * nats_nkey.c — nkey seeds, public keys, nonce signatures and .creds files
 * (see nats_nkey.h).  The Ed25519 arithmetic is OpenSSL's; this file only
 * knows NATS's encodings.
 */
#include <stdio.h>
#include <string.h>

#include "crc16.h"
#include "nats_nkey.h"
#include "tls_lib.h"

#define PREFIX_SEED (18 << 3)
#define PREFIX_USER (20 << 3)

static const char B32[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/* base32 without padding; out has room for ceil(n * 8 / 5) + 1. */
static void
b32_encode(const unsigned char *in, size_t n, char *out)
{
	unsigned	acc = 0;
	int			bits = 0;

	for (size_t i = 0; i < n; i++)
	{
		acc = (acc << 8) | in[i];
		bits += 8;
		while (bits >= 5)
		{
			*out++ = B32[(acc >> (bits - 5)) & 31];
			bits -= 5;
		}
	}
	if (bits > 0)
		*out++ = B32[(acc << (5 - bits)) & 31];
	*out = '\0';
}

/* Decode base32 text of exactly len characters into cap bytes: the byte count, or -1. */
static int
b32_decode(const char *in, size_t len, unsigned char *out, size_t cap)
{
	unsigned	acc = 0;
	int			bits = 0;
	size_t		n = 0;

	for (size_t i = 0; i < len; i++)
	{
		const char *p = in[i] ? strchr(B32, in[i]) : NULL;

		if (p == NULL)
			return -1;
		acc = (acc << 5) | (unsigned) (p - B32);
		bits += 5;
		if (bits >= 8)
		{
			if (n == cap)
				return -1;
			out[n++] = (unsigned char) (acc >> (bits - 8));
			bits -= 8;
		}
	}
	return (int) n;
}

static int
fail(an_err *err, const char *why)
{
	an_errf(err, "%s", why);
	return -1;
}

/* The public key of a seed, encoded with its prefix and checksum. */
static int
public_key(nkey_user *u, an_err *err)
{
	unsigned char raw[35];
	size_t		publen = 32;
	EVP_PKEY   *k = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, u->seed, 32);
	unsigned	crc;

	if (k == NULL || EVP_PKEY_get_raw_public_key(k, raw + 1, &publen) != 1 || publen != 32)
	{
		EVP_PKEY_free(k);
		return fail(err, "the seed is not a usable Ed25519 key");
	}
	EVP_PKEY_free(k);
	raw[0] = PREFIX_USER;
	crc = an_crc16_xmodem(raw, 33);
	raw[33] = (unsigned char) (crc & 0xff);
	raw[34] = (unsigned char) (crc >> 8);
	b32_encode(raw, sizeof(raw), u->public_key);
	return 0;
}

int
nkey_user_from_seed(const char *seed, size_t len, nkey_user *out, an_err *err)
{
	unsigned char raw[36];
	unsigned	crc;
	int			rc;

	memset(out, 0, sizeof(*out));
	if (len != NKEY_SEED_LEN || b32_decode(seed, len, raw, sizeof(raw)) != (int) sizeof(raw))
		return fail(err, "not an nkey seed (58 characters of base32, starting with S)");
	crc = an_crc16_xmodem(raw, 34);
	if (raw[34] != (crc & 0xff) || raw[35] != (crc >> 8))
		rc = fail(err, "the seed's checksum is wrong (a character was changed or lost)");
	else if ((raw[0] & 0xf8) != PREFIX_SEED)
		rc = fail(err, "not an nkey seed (it must start with S)");
	else if ((((raw[0] & 7) << 5) | ((raw[1] & 0xf8) >> 3)) != PREFIX_USER)
		rc = fail(err, "the seed is not a user's (it must start with SU; an operator's or account's cannot log in)");
	else if (an_tls_lib_load(err) != AN_OK)
		rc = -1;
	else
	{
		memcpy(out->seed, raw + 2, 32);
		rc = public_key(out, err);
	}
	/* Not OpenSSL's cleanse: this also runs when OpenSSL could not be loaded. */
	explicit_bzero(raw, sizeof(raw));
	if (rc != 0)
		nkey_wipe(out);
	return rc;
}

int
nkey_sign(const nkey_user *u, const char *data, size_t len, char sig[NKEY_SIG_LEN + 1],
		  an_err *err)
{
	unsigned char raw[64];
	unsigned char b64[89];
	size_t		siglen = sizeof(raw);
	EVP_PKEY   *k;
	EVP_MD_CTX *md;
	int			ok;

	if (an_tls_lib_load(err) != AN_OK)
		return -1;
	k = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, u->seed, 32);
	md = EVP_MD_CTX_new();
	ok = k && md && EVP_DigestSignInit(md, NULL, NULL, NULL, k) == 1 &&
		EVP_DigestSign(md, raw, &siglen, (const unsigned char *) data, len) == 1 && siglen == 64;
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(k);
	if (!ok)
		return fail(err, "the nonce could not be signed");
	/* base64url without padding, as NATS's RawURLEncoding. */
	EVP_EncodeBlock(b64, raw, 64);
	for (int i = 0; i < NKEY_SIG_LEN; i++)
		sig[i] = b64[i] == '+' ? '-' : b64[i] == '/' ? '_' : (char) b64[i];
	sig[NKEY_SIG_LEN] = '\0';
	return 0;
}

/* The first line after a "-----BEGIN <what>" line whose name contains tag, or NULL. */
static const char *
block(const char *text, const char *end, const char *tag, size_t *linelen)
{
	for (const char *p = text; p < end;)
	{
		const char *nl = memchr(p, '\n', (size_t) (end - p));
		const char *eol = nl ? nl : end;

		if ((size_t) (eol - p) > 10 && memcmp(p, "-----BEGIN", 10) == 0 &&
			memmem(p, (size_t) (eol - p), tag, strlen(tag)))
		{
			/* The content: the next line that is not blank. */
			for (p = nl ? nl + 1 : end; p < end;)
			{
				const char *n2 = memchr(p, '\n', (size_t) (end - p));
				const char *e2 = n2 ? n2 : end;

				while (e2 > p && (e2[-1] == '\r' || e2[-1] == ' ' || e2[-1] == '\t'))
					e2--;
				while (p < e2 && (*p == ' ' || *p == '\t'))
					p++;
				if (e2 > p)
				{
					*linelen = (size_t) (e2 - p);
					return p;
				}
				p = n2 ? n2 + 1 : end;
			}
			return NULL;
		}
		p = nl ? nl + 1 : end;
	}
	return NULL;
}

int
nkey_read_creds(const char *text, size_t len, char *jwt, size_t jwtcap, nkey_user *user,
				an_err *err)
{
	size_t		jlen = 0;
	size_t		slen = 0;
	const char *j = block(text, text + len, "JWT", &jlen);
	const char *s = block(text, text + len, "SEED", &slen);

	if (j == NULL || s == NULL)
		return fail(err, "not a credentials file: it needs a -----BEGIN NATS USER JWT----- block and a -----BEGIN USER NKEY SEED----- block");
	if (jlen >= jwtcap || jlen > NKEY_JWT_MAX)
		return fail(err, "the user JWT of the credentials file is too long");
	for (size_t i = 0; i < jlen; i++)
		if (!((j[i] >= 'A' && j[i] <= 'Z') || (j[i] >= 'a' && j[i] <= 'z') || (j[i] >= '0' && j[i] <= '9') ||
			  j[i] == '-' || j[i] == '_' || j[i] == '.'))
			return fail(err, "the user JWT of the credentials file is not a JWT (base64url parts joined by dots)");
	memcpy(jwt, j, jlen);
	jwt[jlen] = '\0';
	return nkey_user_from_seed(s, slen, user, err);
}

void
nkey_wipe(nkey_user *u)
{
	explicit_bzero(u, sizeof(*u));
}
