/*
 * fuzz_schedule.c — the schedule parser and search (schedule/schedule.h), with
 * time zones (CRON_TZ=, TZ=) from an an_tz_cache.  Only the public API of
 * schedule.h and tz.h.  Each input gets a cache of its own, so that a
 * reproducer fails alone; what a long-lived cache does (a host keeps one
 * per session) is checked within the input: every instant is asked twice.
 *
 * The input is one schedule text, handed over as exactly its bytes (no NUL
 * after them: the parser takes a length).  Beyond "no crash, no leak, no
 * read past the text", each input checks:
 *
 *   errors       a refusal has a non-empty message of printable ASCII (the
 *                parser promises that quoting the text is safe to show).
 *   determinism  parsing the same text again gives the same schedule.
 *   search       at a fixed set of instants (the ends of the slot range, a
 *                day, daylight-saving changes in Europe and America, and one
 *                drawn from the input): slot(at) <= at, next_slot(at) > at,
 *                both inside 0 .. AN_SLOT_MAX; a slot is its own slot
 *                (slot(next) == next); nothing is scheduled between them
 *                (next_slot(slot(at)) > at, slot(next - 1) == slot(at)).
 *   intervals    a UTC interval's slots are multiples of the interval.
 *   cache        the instants asked again in the reverse order, with the
 *                zone's window of changes grown by the first round, get the
 *                same answers.
 *   range        an_schedule_range lists strictly increasing slots inside
 *                [from, to), each the next_slot of the one before.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "schedule.h"

#define RANGE_MAX 16

/* Instants (ms, UTC) every schedule is asked about; the last is drawn from the input. */
static const int64_t fixed_instants[] = {
	0, 1, INT64_C(86399999), AN_SLOT_MIN,
	INT64_C(1711846799999), INT64_C(1711846800000),	/* 2024-03-31 01:00 UTC: Berlin springs forward */
	INT64_C(1729989000000), INT64_C(1729990800000),	/* 2024-10-27 00:30, 01:00 UTC: Berlin falls back */
	INT64_C(1730617200000), INT64_C(1730620800000),	/* 2024-11-03 07:00, 08:00 UTC: New York falls back */
	INT64_C(1767225599999),	/* 2025-12-31 23:59:59.999 */
	AN_SLOT_MAX - INT64_C(86400000), AN_SLOT_MAX - 1, AN_SLOT_MAX
};
#define NFIXED ((int) (sizeof(fixed_instants) / sizeof(fixed_instants[0])))

static uint64_t
fnv1a(const uint8_t *data, size_t size)
{
	uint64_t	h = UINT64_C(14695981039346656037);

	for (size_t i = 0; i < size; i++)
		h = (h ^ data[i]) * UINT64_C(1099511628211);
	return h;
}

static void
check_error(an_error rc, const char *err)
{
	FUZZ_CHECK(rc != AN_OK, "not an error");
	FUZZ_CHECK(fuzz_terminated(err, AN_ERRMAX) && err[0] != '\0', "a refusal without a message");
	for (const char *c = err; *c; c++)
		FUZZ_CHECK((*c >= 0x20 && *c <= 0x7e) || *c == '\t', "message has byte 0x%02x: %s",
				   (unsigned char) *c, err);
}

static int
same_schedule(const an_schedule *a, const an_schedule *b)
{
	return a->kind == b->kind && a->interval_ms == b->interval_ms && a->seconds == b->seconds &&
		a->minutes == b->minutes && a->hours == b->hours && a->mdays == b->mdays &&
		a->months == b->months && a->wdays == b->wdays && a->mday_last == b->mday_last &&
		a->either_day == b->either_day && a->fixed_time == b->fixed_time && a->tz == b->tz;
}

static int
slot_at(const an_schedule *s, int64_t at, int64_t *slot)
{
	an_err		err;
	int			found = -1;
	an_error	rc;

	fuzz_poison_stack();
	rc = an_schedule_slot(s, at, slot, &found, &err);

	FUZZ_CHECK(rc == AN_OK, "slot(%lld) failed: %s", (long long) at, err.msg);
	FUZZ_CHECK(found == 0 || found == 1, "slot(%lld): found = %d", (long long) at, found);
	if (found)
		FUZZ_CHECK(*slot <= at && *slot >= 0, "slot(%lld) = %lld", (long long) at, (long long) *slot);
	return found;
}

static int
next_after(const an_schedule *s, int64_t after, int64_t *next)
{
	an_err		err;
	int			found = -1;
	an_error	rc;

	fuzz_poison_stack();
	rc = an_schedule_next_slot(s, after, next, &found, &err);

	FUZZ_CHECK(rc == AN_OK, "next_slot(%lld) failed: %s", (long long) after, err.msg);
	FUZZ_CHECK(found == 0 || found == 1, "next_slot(%lld): found = %d", (long long) after, found);
	if (found)
		FUZZ_CHECK(*next > after && *next <= AN_SLOT_MAX, "next_slot(%lld) = %lld",
				   (long long) after, (long long) *next);
	return found;
}

/* What check_instant found at one instant, for the second round. */
typedef struct answer
{
	int			has_slot,
				has_next;
	int64_t		slot,
				next;
} answer;

static answer
check_instant(const an_schedule *s, int64_t at)
{
	int64_t		slot = 0,
				next = 0,
				v = 0;
	int			has_slot = slot_at(s, at, &slot);
	int			has_next = at < AN_SLOT_MAX ? next_after(s, at, &next) : 0;

	if (has_slot)
	{
		FUZZ_CHECK(slot_at(s, slot, &v) && v == slot, "slot(%lld) = %lld, whose own slot is %lld",
				   (long long) at, (long long) slot, (long long) v);
		if (slot < AN_SLOT_MAX && next_after(s, slot, &v))
			FUZZ_CHECK(v > at, "slot(%lld) = %lld, but %lld is scheduled between",
					   (long long) at, (long long) slot, (long long) v);
		if (s->kind == AN_SCHEDULE_INTERVAL && s->tz == NULL)
			FUZZ_CHECK(slot % s->interval_ms == 0, "UTC interval slot %lld", (long long) slot);
	}
	if (has_next)
	{
		FUZZ_CHECK(slot_at(s, next, &v) && v == next, "next_slot(%lld) = %lld, whose own slot is %lld",
				   (long long) at, (long long) next, (long long) v);
		if (slot_at(s, next - 1, &v))
			FUZZ_CHECK(has_slot && v == slot, "between %lld and next_slot %lld lies slot %lld (slot(at) %lld)",
					   (long long) at, (long long) next, (long long) v, has_slot ? (long long) slot : -1LL);
		else
			FUZZ_CHECK(!has_slot, "slot(%lld) found, slot(%lld) not", (long long) at, (long long) (next - 1));
	}
	return (answer) {has_slot, has_next, has_slot ? slot : 0, has_next ? next : 0};
}

typedef struct range_state
{
	const an_schedule *s;
	int64_t		from,
				to,
				last;
	int			n;
} range_state;

static int
range_emit(void *arg, int64_t slot)
{
	range_state *r = arg;
	int64_t		expect;

	FUZZ_CHECK(slot >= r->from && slot < r->to, "range [%lld, %lld) lists %lld",
			   (long long) r->from, (long long) r->to, (long long) slot);
	if (r->n > 0)
		FUZZ_CHECK(slot > r->last && next_after(r->s, r->last, &expect) && expect == slot,
				   "range lists %lld after %lld", (long long) slot, (long long) r->last);
	r->last = slot;
	return ++r->n == RANGE_MAX;
}

static void
check_range(const an_schedule *s, int64_t from)
{
	range_state r = {s, from, from + INT64_C(3) * 86400000, 0, 0};
	an_err		err;
	an_error	rc;

	if (r.to > AN_SLOT_MAX)
		r.to = AN_SLOT_MAX;
	rc = an_schedule_range(s, r.from, r.to, range_emit, &r, &err);
	FUZZ_CHECK(rc == AN_OK, "range [%lld, %lld) failed: %s", (long long) r.from, (long long) r.to, err.msg);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Exactly the input's bytes, so that a read past the text is caught. */
	char	   *text = malloc(size ? size : 1);
	an_err		err;
	an_schedule s,
				again;
	an_error	rc;
	an_tz_cache *zones = an_tz_cache_new();
	int64_t		at[NFIXED + 1];
	answer		first[NFIXED + 1];

	if (text == NULL || zones == NULL)
		abort();
	memcpy(text, data, size);
	memset(&err, 0x7f, sizeof(err));
	rc = an_schedule_parse(text, size, zones, &s, &err);
	if (rc != AN_OK)
	{
		check_error(rc, err.msg);
		an_tz_cache_free(zones);
		free(text);
		return 0;
	}
	FUZZ_CHECK(an_schedule_parse(text, size, zones, &again, &err) == AN_OK &&
			   same_schedule(&s, &again), "a second parse differs");
	FUZZ_CHECK(s.kind == AN_SCHEDULE_CRON ||
			   (s.kind == AN_SCHEDULE_INTERVAL && s.interval_ms >= 1000 &&
				s.interval_ms <= AN_SCHEDULE_INTERVAL_MAX), "kind %d, interval %lld",
			   (int) s.kind, (long long) s.interval_ms);
	memcpy(at, fixed_instants, sizeof(fixed_instants));
	at[NFIXED] = (int64_t) (fnv1a(data, size) % (uint64_t) (AN_SLOT_MAX + 1));
	for (int i = 0; i <= NFIXED; i++)
		first[i] = check_instant(&s, at[i]);
	check_range(&s, at[NFIXED]);
	check_range(&s, INT64_C(1729980000000));	/* around Berlin's fall back in 2024 */
	for (int i = NFIXED; i >= 0; i--)
	{
		answer		again_at = check_instant(&s, at[i]);

		FUZZ_CHECK(memcmp(&again_at, &first[i], sizeof(answer)) == 0,
				   "at %lld, asked again: slot %d %lld, next %d %lld; first: slot %d %lld, next %d %lld",
				   (long long) at[i], again_at.has_slot, (long long) again_at.slot, again_at.has_next,
				   (long long) again_at.next, first[i].has_slot, (long long) first[i].slot,
				   first[i].has_next, (long long) first[i].next);
	}
	an_tz_cache_free(zones);
	free(text);
	return 0;
}
