/*
 * hex.h — the value of one hexadecimal digit, for the decoders that meet
 * them: a URL's percent escapes (url.c) and JSON's \u escapes (nats_json.c).
 */
#ifndef AN_HEX_H
#define AN_HEX_H

/* 0 to 15, or -1 when c is not a hexadecimal digit. */
static inline int
an_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif
