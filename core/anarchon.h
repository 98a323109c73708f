/*
 * anarchon.h — the words of anarchon, shared by every host and every store.
 *
 * Read this header first, then store.h.  It defines what a job, a slot and a
 * token are (and the rules that validate them), the outcomes of a claim, the
 * states of a run, and the settings with their defaults.  Nothing here knows
 * about PostgreSQL, SQLite or any network store: both database hosts and the
 * remote layer include it, so every place answers with the same words and
 * refuses bad input with the same messages.
 */
#ifndef ANARCHON_H
#define ANARCHON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* What configure found: which network stores are built, library versions. */
#include "config.h"

/* AN_VERSION, the release, comes from the file VERSION through config.h. */

/* Limits of the words (the README's "Functions": job, slot, token). */
#define AN_JOB_MAX    128
#define AN_TOKEN_MAX  64
#define AN_TOKEN_HEX  32                          /* anarchon_token() length */
#define AN_SLOT_MIN   INT64_C(100000000000)       /* 1973-03-03 09:46:40 UTC: 10^11 ms */
#define AN_SLOT_MAX   INT64_C(253402300799999)    /* 9999-12-31 23:59:59.999 UTC */
#define AN_ERRMAX     512                         /* room for one error message */

/*
 * The answer to a claim.  The numbers are listed once, here: the enum and
 * the Lua scripts that run inside Redis (stores/redis/redis_scripts.c) are both
 * made from this list, so they cannot disagree.
 */
#define AN_OUTCOME_LIST(X) X(WON, 0) X(RUNNING, 1) X(DONE, 2) X(LATE, 3) X(OVERLAP, 4) X(LOST, 5) \
	X(PAUSED, 6)
#define AN_ENUM_MEMBER_(name, value) AN_##name = value,
typedef enum an_outcome
{
	AN_OUTCOME_LIST(AN_ENUM_MEMBER_)
} an_outcome;

/*
 * The state column of a stored run.  AN_RUN_NONE means no row.
 */
typedef enum an_run_state
{
	AN_RUN_NONE = 0,
	AN_RUN_RUNNING,
	AN_RUN_SUCCEEDED,
	AN_RUN_FAILED,
	AN_RUN_INTERRUPTED,
	AN_RUN_REPLACED              /* a later slot won under overlap 'replace' */
} an_run_state;

/* What anarchon_check answers: the run state, with "running" split by lease. */
#define AN_CHECK_LIST(X) X(CHECK_NONE, 0) X(CHECK_RUNNING, 1) X(CHECK_EXPIRED, 2) \
	X(CHECK_SUCCEEDED, 3) X(CHECK_FAILED, 4) X(CHECK_INTERRUPTED, 5) X(CHECK_REPLACED, 6)
typedef enum an_check_state
{
	AN_CHECK_LIST(AN_ENUM_MEMBER_)
} an_check_state;

/* Error classes.  Hosts map them to SQLSTATEs or SQLite result codes. */
typedef enum an_error
{
	AN_OK = 0,
	AN_E_INPUT,          /* an argument breaks its rule */
	AN_E_CONFIG,         /* a setting, URL or store configuration is unusable */
	AN_E_BUSY,           /* not now: a lock not granted within busy_timeout_ms, or a server that
	                        answered it cannot serve yet (Redis LOADING, a failover): try again */
	AN_E_TIMEOUT,        /* a network store did not answer within timeout_ms */
	AN_E_CONNECT,        /* a network store could not be reached or dropped us */
	AN_E_AUTH,           /* a network store refused our credentials */
	AN_E_CANCELED,       /* the host asked us to stop (query cancel) */
	AN_E_UNSUPPORTED,    /* the store lacks a feature the strategy needs */
	AN_E_STORE,          /* the store answered with an error of its own */
	AN_E_STATE,          /* the call is not allowed in the host's current state */
	AN_E_NOMEM,
	AN_E_INTERNAL
} an_error;

/*
 * One error, carried whole from the layer that found it to the host that
 * shows it: the class, a short lower-case message, and the detail (the facts
 * behind it) and hint (what to do) when the layer knows them.  PostgreSQL
 * shows each in its own field, SQLite and the command join them
 * (an_err_text).  Every function that can refuse its input takes an an_err *,
 * which may be NULL when the caller only wants the code.
 */
typedef struct an_err
{
	an_error	code;			/* AN_OK until something fails */
	char		msg[AN_ERRMAX];	/* "" when code is AN_OK */
	char		detail[AN_ERRMAX];	/* a sentence, or "" */
	char		hint[AN_ERRMAX];	/* a sentence, or "" */
} an_err;

/* The settings (the README's "Settings"), with their defaults. */
typedef struct an_settings
{
	int64_t		lease_ms;           /* 30000 */
	int64_t		max_late_ms;        /* 60000 */
	int32_t		attempts;           /* 1 */
	int			overlap_skip;       /* 1 = 'skip' (default), 0 = 'allow' or 'replace' */
	int			overlap_replace;    /* 1 = 'replace': a won slot ends the job's other live runs */
	int64_t		busy_timeout_ms;    /* 5000 */
	int			catch_up;           /* an_catch_up: AN_CATCH_UP_NONE */
	int64_t		catch_up_ms;        /* 60000: how far back anarchon_due looks */
	int64_t		catch_up_max;       /* 10: the most missed slots 'all' returns */
} an_settings;

/* What anarchon_due does about slots every instance missed (doc/operating.md). */
typedef enum an_catch_up
{
	AN_CATCH_UP_NONE = 0,        /* only the current slot: the behaviour before catch-up */
	AN_CATCH_UP_LATEST,          /* the newest missed slot of the window, then the current one */
	AN_CATCH_UP_ALL              /* up to catch_up_max newest missed slots, then the current one */
} an_catch_up;

#define AN_LEASE_MS_DEFAULT        30000
#define AN_MAX_LATE_MS_DEFAULT     60000
#define AN_ATTEMPTS_DEFAULT        1
#define AN_BUSY_TIMEOUT_MS_DEFAULT 5000
#define AN_CATCH_UP_MS_DEFAULT     60000    /* max_late_ms's default: the longest window it allows */
#define AN_CATCH_UP_MAX_DEFAULT    10

/* Ranges of the settings, so every host validates alike. */
#define AN_LEASE_MS_MIN        1
#define AN_LEASE_MS_MAX        INT64_C(31536000000)     /* a year */
#define AN_MAX_LATE_MS_MAX     INT64_C(31536000000)
#define AN_ATTEMPTS_MAX        1000
#define AN_BUSY_TIMEOUT_MS_MAX INT64_C(2147483647)
#define AN_CATCH_UP_MAX_MAX    1000

/* One numeric setting as a table row: hosts walk it to register GUCs etc. */
typedef struct an_setting_info
{
	const char *name;
	const char *description;
	int64_t		def;
	int64_t		min;
	int64_t		max;
} an_setting_info;

/* The numeric settings, NULL-terminated; overlap and store are not numbers. */
extern const an_setting_info an_numeric_settings[];

void		an_settings_default(an_settings *s);

/*
 * an_settings_set parses value (text) for the setting called name and stores
 * it in s.  Returns AN_OK, or AN_E_INPUT with a message in err that names the
 * setting and its allowed values; s is left unchanged on error.  "store" is
 * not handled here (hosts own it): it answers AN_E_INPUT too.
 */
an_error	an_settings_set(an_settings *s, const char *name, const char *value,
							an_err *err);

/* an_settings_get writes the current value of name as text. */
an_error	an_settings_get(const an_settings *s, const char *name,
							char *out, size_t outlen, an_err *err);

/*
 * Retention of the history: a run older than this (measured from its slot) can
 * no longer be claimed, so pruning it loses nothing a claim could ask for.
 */
int64_t		an_settings_retention_ms(const an_settings *s);

/*
 * The retention asked of anarchon_prune(keep_ms): AN_OK when keep_ms is at
 * least an_settings_retention_ms; else AN_E_INPUT with a message (negative,
 * or too short) that says what is allowed.
 */
an_error	an_settings_check_keep(const an_settings *s, int64_t keep_ms,
								   an_err *err);

/*
 * The rule that ties catch-up to lateness: with catch_up other than 'none',
 * catch_up_ms may not exceed max_late_ms, since a missed slot is caught up by
 * an ordinary claim, which every store answers 'late' (and stops remembering
 * runs) past max_late_ms.  AN_OK, or AN_E_INPUT with what is wrong and what
 * to do.  Hosts call it where both values are known together (the command
 * after its options, anarchon_config) and anarchon_due calls it always,
 * since settings may be set in either order.
 */
an_error	an_settings_check_catch_up(const an_settings *s, an_err *err);

/* The overlap setting as text: 'skip', 'allow' or 'replace'. */
const char *an_settings_overlap_name(const an_settings *s);

/*
 * The slot before which runs may be pruned: now - keep_ms (keep_ms >= 0), or
 * INT64_MIN when that is not a number of milliseconds.  A host whose times
 * cannot reach back to the cutoff deletes nothing: "keep everything".
 */
int64_t		an_retention_cutoff(int64_t now, int64_t keep_ms);

/*
 * Validation.  Each returns AN_OK or AN_E_INPUT with a message that says what
 * was wrong and what is allowed.  A value too long to echo is described by its
 * length instead, so a megabyte of garbage never lands in an error message.
 */
an_error	an_validate_job(const char *job, size_t len, an_err *err);
an_error	an_validate_token(const char *token, size_t len, an_err *err);
/* The slot rule in words, and what to do about a slot read from a clock. */
#define AN_SLOT_RULE "a slot is a scheduled time in milliseconds since 1970-01-01 UTC," \
	" a whole second from 100000000000 (1973-03-03) to 253402300799000 (9999-12-31 23:59:59)"
#define AN_SLOT_FROM_CLOCK "take it from the schedule, anarchon_slot('* * * * *')," \
	" or cut the clock reading to the second, e.g. (ms / 1000) * 1000 or date_trunc('second', ...)"

/*
 * A slot is a scheduled time: a whole second (slot % 1000 == 0) from
 * AN_SLOT_MIN to AN_SLOT_MAX.  A reading of a clock is refused with a hint to
 * take the slot from the schedule; a slot below AN_SLOT_MIN with a hint that
 * it looks like seconds.
 */
an_error	an_validate_slot(int64_t slot, an_err *err);
/* A slot given as a floating-point number (SQLite REAL): integral, then the rule. */
an_error	an_validate_slot_double(double v, int64_t *slot, an_err *err);
/* An instant (not a slot): any millisecond from 0 to AN_SLOT_MAX. */
/*
 * An instant given as an argument (anarchon_slot's `at`, a range's ends):
 * an_validate_instant, and a value from 1 to 10^11 - 1 is refused as seconds
 * (a Unix time in seconds, 1717243200, would otherwise be read as a moment
 * of January 1970).  0, the epoch, stays allowed as "from the start".
 */
an_error	an_validate_instant_arg(int64_t ms, an_err *err);
an_error	an_validate_instant(int64_t ms, an_err *err);
an_error	an_validate_instant_double(double v, int64_t *ms, an_err *err);

/* Names, as the SQL functions answer them. */
const char *an_outcome_name(an_outcome o);
const char *an_run_state_name(an_run_state s);
const char *an_check_state_name(an_check_state c);
an_run_state an_run_state_parse(const char *name);  /* AN_RUN_NONE if unknown */

/* anarchon_token(): 16 random bytes as 32 lowercase hex digits + NUL. */
void		an_token_hex(const unsigned char random16[16], char out[AN_TOKEN_HEX + 1]);

/*
 * Record a refused input (AN_E_INPUT) with its message, forgetting any older
 * detail and hint; a no-op when e is NULL.  A caller that returns another
 * class records it with an_err_fail.
 */
void		an_errf(an_err *e, const char *fmt,...)
			__attribute__((format(printf, 2, 3)));
/* Record an error of class code; returns code. */
an_error	an_err_fail(an_err *e, an_error code, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));
/* Add the detail or the hint to the error just recorded; return its code. */
an_error	an_err_detailf(an_err *e, const char *fmt,...)
			__attribute__((format(printf, 2, 3)));
an_error	an_err_hintf(an_err *e, const char *fmt,...)
			__attribute__((format(printf, 2, 3)));
/* The same three with a va_list, for a layer that records on its own object (store.c). */
an_error	an_err_vfail(an_err *e, an_error code, const char *fmt, va_list ap);
an_error	an_err_vdetail(an_err *e, const char *fmt, va_list ap);
an_error	an_err_vhint(an_err *e, const char *fmt, va_list ap);
/* Forget the error. */
void		an_err_clear(an_err *e);

/*
 * The error as one text for a host without separate fields (SQLite, the
 * command's stderr): "message. Detail. Hint.", each part when there is one.
 * outlen of AN_ERRTEXTMAX holds them all.  Returns out.
 */
#define AN_ERRTEXTMAX (3 * AN_ERRMAX + 8)
const char *an_err_text(const an_err *e, char *out, size_t outlen);
/* The same in a buffer of the enclosing block, for a format's "%s". */
#define AN_ERR_TEXT(e) an_err_text((e), (char[AN_ERRTEXTMAX]) {0}, AN_ERRTEXTMAX)

#endif							/* ANARCHON_H */
