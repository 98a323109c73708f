/*
 * testutil.h — the small helpers the test programs share (claimer, rdrive,
 * rbench, mq-driver, mq-base): clocks, a sleep, random bytes and tokens,
 * and a fatal error for a broken test setup.
 *
 * Static inline, so that each program compiles only what it uses and the
 * programs stay single files with no library of their own.
 */
#ifndef ANARCHON_TESTUTIL_H
#define ANARCHON_TESTUTIL_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Microseconds on a clock: CLOCK_REALTIME for slots (they are wall-clock
 * times), CLOCK_MONOTONIC for durations (immune to clock steps). */
static inline int64_t
clock_us(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static inline int64_t
mono_us(void)
{
	return clock_us(CLOCK_MONOTONIC);
}

static inline int64_t
mono_ms(void)
{
	return clock_us(CLOCK_MONOTONIC) / 1000;
}

static inline int64_t
wall_us(void)
{
	return clock_us(CLOCK_REALTIME);
}

/* The clock a test program gives a store as its host (an_host.now_ms): the
 * wall clock in milliseconds, as a database host's would be. */
static inline int64_t
host_now_ms(void *ctx)
{
	(void) ctx;
	return clock_us(CLOCK_REALTIME) / 1000;
}

static inline void
sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long) (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* A setup that cannot go on (no server, a bad argument): say what and why,
 * prefixed with the program's name, and exit with status 2 — a status no
 * test reads as a result. */
static inline _Noreturn void
die(const char *what, const char *why)
{
	fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, what, why);
	exit(2);
}

/* n random bytes from /dev/urandom (for tokens); no randomness is fatal. */
static inline void
urandom_bytes(unsigned char *out, size_t n)
{
	FILE	   *f = fopen("/dev/urandom", "rb");

	if (f == NULL || fread(out, 1, n, f) != n)
	{
		perror("/dev/urandom");
		exit(2);
	}
	fclose(f);
}

#ifdef AN_TOKEN_HEX
/* A fresh token as anarchon_token() makes one (for programs that include
 * anarchon.h before this header). */
static inline void
random_token(char out[AN_TOKEN_HEX + 1])
{
	unsigned char r[16];

	urandom_bytes(r, sizeof(r));
	an_token_hex(r, out);
}
#endif

#endif
