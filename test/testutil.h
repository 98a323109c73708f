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

/* The pause before the t-th resend (t from 1) of a call that failed: short
 * at first, then 500 ms, about 15 s over 40 tries. */
static inline void
retry_pause(int t)
{
	sleep_ms(t < 10 ? 50 * t : 500);
}

/*
 * The fault suite's claimers (mq-driver log, claimer log) share one plan,
 * read from the arguments SLOT0 N STEP TRIES TAG WALL0 WALL_STEP: slots
 * SLOT0, SLOT0+STEP, ... (n of them), slot i claimed at wall-clock time
 * WALL0 + i * WALL_STEP by every process together, as schedulers claim a
 * slot when its time comes.  Slot values and pacing are apart so that slots
 * stay whole seconds (as the hosts require) while claims come faster.
 */
typedef struct fault_plan
{
	int64_t		slot0;
	long		n;
	int64_t		step;
	int			tries;
	const char *tag;
	int64_t		wall0;
	int64_t		wall_step;
} fault_plan;

static inline fault_plan
fault_plan_read(char **argv)
{
	fault_plan	p = {atoll(argv[0]), atol(argv[1]), atoll(argv[2]), atoi(argv[3]), argv[4],
		atoll(argv[5]), atoll(argv[6])};

	return p;
}

/* Wait for the wall-clock time of the plan's i-th slot. */
static inline void
fault_plan_wait(const fault_plan *p, long i)
{
	int64_t		left;

	while ((left = p->wall0 + i * p->wall_step - wall_us() / 1000) > 0)
		sleep_ms(left > 1000 ? 1000 : (int) left);
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
