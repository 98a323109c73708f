/*
 * fuzz.h — what every fuzz target shares: an invariant that fails loudly.
 *
 * A failed invariant prints what was expected and aborts; libFuzzer takes
 * the abort for a crash, writes the input as a reproducer (crash-<sha1>) and
 * stops, so a broken rule is reported exactly like a memory error.
 */
#ifndef ANARCHON_FUZZ_H
#define ANARCHON_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_CHECK(cond, ...) \
	do { \
		if (!(cond)) \
		{ \
			fprintf(stderr, "invariant failed (%s:%d): %s\n  ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
			abort(); \
		} \
	} while (0)

/* A NUL-terminated heap copy of the input (cut at its first NUL, as C strings are). */
static inline char *
fuzz_cstring(const uint8_t *data, size_t size)
{
	char	   *s = malloc(size + 1);

	if (s == NULL)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* Is s NUL-terminated within its n bytes? */
static inline int
fuzz_terminated(const char *s, size_t n)
{
	return n > 0 && memchr(s, '\0', n) != NULL;
}

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif							/* ANARCHON_FUZZ_H */
