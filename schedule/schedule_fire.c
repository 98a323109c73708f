/*
 * schedule_fire.c — anarchon_fire_at: when an instance acts on a slot, so
 * that many jobs sharing one schedule ("0 * * * *") do not all start at once.
 *
 * The offset is a hash of (job, slot), so every instance computes the same
 * time with no message to the others, a job's offset changes from slot to
 * slot (no job is always last), and the slot itself, the key of the run,
 * never moves.  The function is written out so that any language can compute
 * it too:
 *
 *   h = FNV-1a, 64 bits, of the bytes "<job>\n<slot in decimal ms>"
 *   h = SplitMix64's finalizer of h:
 *         h ^= h >> 30; h *= 0xbf58476d1ce4e5b9;
 *         h ^= h >> 27; h *= 0x94d049bb133111eb;
 *         h ^= h >> 31
 *   fire_at = slot + h mod max_jitter_ms       (slot itself when max_jitter_ms is 0)
 *
 * FNV alone mixes its last bytes poorly, and the slots of one job differ only
 * in their last digits; the finalizer spreads them over the whole range.
 */
#include <stdio.h>

#include "schedule.h"

static uint64_t
fire_hash(const char *job, size_t len, int64_t slot)
{
	char		digits[24];
	int			n = snprintf(digits, sizeof(digits), "%lld", (long long) slot);
	uint64_t	h = UINT64_C(0xcbf29ce484222325);

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char) job[i]) * UINT64_C(0x100000001b3);
	h = (h ^ (unsigned char) '\n') * UINT64_C(0x100000001b3);
	for (int i = 0; i < n; i++)
		h = (h ^ (unsigned char) digits[i]) * UINT64_C(0x100000001b3);
	h ^= h >> 30;
	h *= UINT64_C(0xbf58476d1ce4e5b9);
	h ^= h >> 27;
	h *= UINT64_C(0x94d049bb133111eb);
	h ^= h >> 31;
	return h;
}

an_error
an_fire_at(const char *job, size_t job_len, int64_t slot, int64_t max_jitter_ms,
		   int64_t max_late_ms, int64_t *fire_at, an_err *err)
{
	an_error	rc;

	if ((rc = an_validate_job(job, job_len, err)) != AN_OK ||
		(rc = an_validate_slot(slot, err)) != AN_OK)
		return rc;
	if (max_jitter_ms < 0)
	{
		an_errf(err, "max_jitter_ms is negative (%lld): allowed 0 (no jitter) up to max_late_ms (%lld)",
				(long long) max_jitter_ms, (long long) max_late_ms);
		return AN_E_INPUT;
	}
	if (max_jitter_ms > max_late_ms)
	{
		an_errf(err, "max_jitter_ms %lld is longer than max_late_ms (%lld): a claim made that long after its slot is answered 'late'; allowed 0 up to max_late_ms (raise max_late_ms first for a longer spread)",
				(long long) max_jitter_ms, (long long) max_late_ms);
		return AN_E_INPUT;
	}
	*fire_at = slot;
	if (max_jitter_ms > 0)
		*fire_at += (int64_t) (fire_hash(job, job_len, slot) % (uint64_t) max_jitter_ms);
	return AN_OK;
}
