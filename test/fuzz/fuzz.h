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

/*
 * Unless FUZZ_POISON_STACK=0 is in the environment, fill the stack below the
 * caller with 0x7f bytes before a call: a local the callee reads before it
 * was set then holds 0x7f7f7f7f7f7f7f7f, which the sanitizers turn into a
 * crash (an overflow, a wild index) every time instead of by luck.  There is
 * no MemorySanitizer here (the system libraries are not built with it), so
 * this is how a read of an uninitialised local is made reproducible.
 */
__attribute__((noinline, unused)) static void
fuzz_poison_stack(void)
{
	static int	on = -1;
	volatile unsigned char junk[16384];

	if (on < 0)
		on = getenv("FUZZ_POISON_STACK") == NULL || strcmp(getenv("FUZZ_POISON_STACK"), "0") != 0;
	if (on)
		for (size_t i = 0; i < sizeof(junk); i++)
			junk[i] = 0x7f;
}

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif							/* ANARCHON_FUZZ_H */
