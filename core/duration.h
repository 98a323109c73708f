/*
 * duration.h — a length of time in words, for people reading a message.
 *
 * Settings and waits are milliseconds, as the stores and scripts take them;
 * "31536000000 ms" is not something a reader can weigh at a glance.  A
 * message names a duration in its two largest units, then the exact
 * milliseconds for whoever has to type it back: "1 year (31536000000 ms)",
 * "1 h 30 min (5400000 ms)", "2 s (2000 ms)"; below a second just "250 ms".
 * Output meant for machines (--json, columns) keeps the raw number.
 */
#ifndef ANARCHON_DURATION_H
#define ANARCHON_DURATION_H

#include <stddef.h>
#include <stdint.h>

/* Room for either form, the longest duration included. */
#define AN_DURATION_MAX 64

/* ms in words, its two largest units, truncated: "1 h 30 min", "4 s", "250 ms", "0 s". */
void		an_duration_words(int64_t ms, char *out, size_t outlen);

/* The words, then the exact value: "1 h 30 min (5400000 ms)"; "250 ms" when that is all of it. */
void		an_duration_text(int64_t ms, char *out, size_t outlen);

#endif							/* ANARCHON_DURATION_H */
