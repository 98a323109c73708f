/* nkey_tool — for the tests: "pub SEEDFILE" prints the public key; "sign SEEDFILE NONCE" the signature; "creds FILE NONCE" JWT and signature. */
#include <stdio.h>
#include <string.h>

#include "nats_nkey.h"

static size_t
slurp(const char *path, char *buf, size_t cap)
{
	FILE	   *f = fopen(path, "r");
	size_t		n = f ? fread(buf, 1, cap - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		buf[--n] = '\0';
	return n;
}

int
main(int argc, char **argv)
{
	static char text[65536];
	static char jwt[NKEY_JWT_MAX + 1];
	an_err		err;
	char		sig[NKEY_SIG_LEN + 1];
	nkey_user	u;
	size_t		n;

	if (argc < 3)
		return 2;
	n = slurp(argv[2], text, sizeof(text));
	if (strcmp(argv[1], "creds") == 0 ? nkey_read_creds(text, n, jwt, sizeof(jwt), &u, &err) != 0
		: nkey_user_from_seed(text, n, &u, &err) != 0)
	{
		printf("error: %s\n", err.msg);
		return 1;
	}
	if (strcmp(argv[1], "pub") == 0)
		printf("%s\n", u.public_key);
	else if (argc > 3 && nkey_sign(&u, argv[3], strlen(argv[3]), sig, &err) == 0)
		printf("%s%s%s %s\n", strcmp(argv[1], "creds") == 0 ? jwt : "", strcmp(argv[1], "creds") == 0 ? " " : "", u.public_key, sig);
	else
		printf("error: %s\n", err.msg);
	nkey_wipe(&u);
	return 0;
}
