/*
 * guc.c — the settings (lease_ms, max_late_ms, ...) as GUCs anarchon.<name>.
 *
 * The numeric settings come from core's an_numeric_settings table, so the
 * names, defaults, ranges and error messages are the SQLite host's too.  They
 * are string GUCs: a year-long lease in milliseconds does not fit PostgreSQL's
 * 32-bit integer GUCs.  Each value is checked by core's an_settings_set (the
 * check hook) and then kept parsed in `current` (the assign hook), so a call
 * reads its settings without parsing anything.  anarchon.in_transaction (the
 * opt-in to a claim inside the caller's transaction) and anarchon.store are
 * string GUCs too, for the reason below.
 *
 * Values set before the library was loaded.  Until the first anarchon call of
 * a session loads the library, PostgreSQL keeps `SET anarchon.lease_ms = '10s'`
 * (and ALTER ROLE/DATABASE ... SET, and the configuration file) as an
 * unchecked placeholder.  When the library then defines the GUC, PostgreSQL
 * would check the placeholder's value, refuse it with a mere WARNING and run
 * with the default: a claim with a 30 s lease where 10 s was meant, or with
 * another store.  So while the GUCs are being defined the check hooks accept
 * anything; the assign hook records a value it cannot parse as invalid
 * (with the reason), and every function that reads the settings fails with an
 * error naming the setting, its value and what is allowed, for as long as
 * that value is the one in force (SET, RESET, SET LOCAL and transaction ends
 * all go through the assign hook).  Once defined, a bad value is refused when
 * it is set, as for any GUC.
 *
 * GUC hooks are not told which variable they belong to, so each setting gets
 * its own pair of tiny hooks, generated below by index into the table.
 */
#include "anarchon_pg.h"

#include "utils/builtins.h"
#include "utils/guc.h"

/* Hook pairs available: the numeric settings, overlap, catch_up, store and in_transaction. */
#define AN_GUC_MAX 10

/*
 * How a GUC's text becomes a value: with apply, into the value in force;
 * without, only checked.  An error message in err when it cannot.
 */
typedef bool (*parse_fn) (int i, const char *value, bool apply, an_err *err);

static an_settings current;
static bool in_transaction;
static char store_name[NAMEDATALEN] = "local";

static int	nguc;
static const char *names[AN_GUC_MAX];	/* without the "anarchon." prefix */
static parse_fn parsers[AN_GUC_MAX];
static char *values[AN_GUC_MAX];
static char defaults[AN_GUC_MAX][24];
/* Why the value in force cannot be used; "" when it can. */
static char invalid[AN_GUC_MAX][AN_ERRMAX];
/* True while _PG_init defines the GUCs (and PostgreSQL applies placeholders). */
static bool defining;

/* A numeric setting or overlap: core's rules and words. */
static bool
parse_setting(int i, const char *value, bool apply, an_err *err)
{
	an_settings scratch = current;

	return an_settings_set(apply ? &current : &scratch, names[i], value, err) == AN_OK;
}

/* anarchon.store: "local", or a name a foreign server could have. */
static bool
parse_store(int i, const char *value, bool apply, an_err *err)
{
	size_t		len = strlen(value);

	if (len == 0 || len >= NAMEDATALEN)
	{
		/*
		 * Refused at use, not here: PostgreSQL's own error for a refused
		 * value repeats it whole, and a value this long is most likely a
		 * store's URL with its password (require_valid never repeats it).
		 */
		if (!apply && len > 0)
			return true;
		an_errf(err, "invalid value for store: it is 'local' or the name of a foreign server"
				 " of the anarchon wrapper, 1 to %d bytes", NAMEDATALEN - 1);
		return false;
	}
	if (apply)
		strlcpy(store_name, value, sizeof(store_name));
	return true;
}

static bool
parse_in_transaction(int i, const char *value, bool apply, an_err *err)
{
	bool		on;

	if (!parse_bool(value, &on))
	{
		an_errf(err, "invalid value for in_transaction: allowed are on and off"
				 " (or true and false, yes and no, 1 and 0)");
		return false;
	}
	if (apply)
		in_transaction = on;
	return true;
}

static bool
check_setting(int i, char **newval)
{
	an_err		err;

	/* See the header comment: a placeholder's value is judged at use. */
	if (defining)
		return true;
	if (!parsers[i] (i, *newval, false, &err))
	{
		GUC_check_errdetail("%s", err.msg);
		return false;
	}
	return true;
}

static void
assign_setting(int i, const char *newval)
{
	an_err		err;

	if (parsers[i] (i, newval, true, &err))
		invalid[i][0] = '\0';
	else
		strlcpy(invalid[i], err.msg, sizeof(invalid[i]));
}

#define SETTING_HOOKS(i) \
	static bool check_##i(char **newval, void **extra, GucSource source) \
	{ return check_setting(i, newval); } \
	static void assign_##i(const char *newval, void *extra) \
	{ assign_setting(i, newval); }

SETTING_HOOKS(0)
SETTING_HOOKS(1)
SETTING_HOOKS(2)
SETTING_HOOKS(3)
SETTING_HOOKS(4)
SETTING_HOOKS(5)
SETTING_HOOKS(6)
SETTING_HOOKS(7)
SETTING_HOOKS(8)
SETTING_HOOKS(9)

static GucStringCheckHook checks[AN_GUC_MAX] = {
	check_0, check_1, check_2, check_3, check_4, check_5, check_6, check_7, check_8, check_9
};
static GucStringAssignHook assigns[AN_GUC_MAX] = {
	assign_0, assign_1, assign_2, assign_3, assign_4, assign_5, assign_6, assign_7, assign_8,
	assign_9
};

/* Define anarchon.<name> with the next pair of hooks. */
static void
define(const char *name, const char *description, const char *boot, parse_fn parse)
{
	char		guc[NAMEDATALEN];

	if (nguc >= AN_GUC_MAX)
		elog(ERROR, "more settings than GUC hooks: raise AN_GUC_MAX in pg/guc.c");
	names[nguc] = name;
	parsers[nguc] = parse;
	strlcpy(defaults[nguc], boot, sizeof(defaults[nguc]));
	snprintf(guc, sizeof(guc), "anarchon.%s", name);
	DefineCustomStringVariable(guc, description, NULL,
							   &values[nguc], defaults[nguc],
							   PGC_USERSET, 0, checks[nguc], assigns[nguc], NULL);
	nguc++;
}

void
an_pg_define_gucs(void)
{
	char		boot[24];

	an_settings_default(&current);
	defining = true;
	PG_TRY();
	{
		for (const an_setting_info *s = an_numeric_settings; s->name; s++)
		{
			snprintf(boot, sizeof(boot), INT64_FORMAT, (int64) s->def);
			define(s->name, s->description, boot, parse_setting);
		}
		define("overlap",
			   "'skip': no new run of a job while another run of it holds a live lease (the claim answers 'overlap'); 'allow': runs may overlap; 'replace': a won slot marks the job's other live runs replaced (fenced).",
			   "skip", parse_setting);
		define("catch_up",
			   "What anarchon_due (and so anarchon.run) does about slots every instance missed: 'none', 'latest' (the newest missed slot of the last catch_up_ms) or 'all' (up to catch_up_max of them).",
			   "none", parse_setting);
		define("store",
			   "Where claims are decided: 'local' (anarchon.runs in this database) or the name of a foreign server of the anarchon foreign-data wrapper.",
			   "local", parse_store);
		define("in_transaction",
			   "on: a local claim inside a transaction block becomes part of that transaction (a rollback undoes it); off: such a claim is refused.",
			   "off", parse_in_transaction);
	}
	PG_FINALLY();
	{
		defining = false;
	}
	PG_END_TRY();

	MarkGUCPrefixReserved("anarchon");
}

/*
 * Fail when a setting in force could not be parsed (only a value set before
 * the library was loaded can be: see the header comment).
 */
static void
require_valid(void)
{
	for (int i = 0; i < nguc; i++)
	{
		const char *rule;
		char		detail[AN_ERRMAX];

		if (invalid[i][0] == '\0')
			continue;
		/* Core's words are "<what>: <what is allowed>"; the second part is the detail. */
		rule = strstr(invalid[i], ": ");
		if (strcmp(names[i], "store") == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("anarchon.store is not the name of a foreign server"),
					 errdetail("%s", an_pg_sentence(rule ? rule + 2 : invalid[i], detail, sizeof(detail))),
					 errhint("Set it to 'local' or to a server's name. A store's URL belongs in CREATE SERVER ... FOREIGN DATA WRAPPER anarchon OPTIONS (url '...'), its password in a user mapping; the value is not repeated here, as it may hold one.")));
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for parameter \"anarchon.%s\": \"%s\"",
						names[i], values[i] ? values[i] : ""),
				 errdetail("%s", an_pg_sentence(rule ? rule + 2 : invalid[i], detail, sizeof(detail))),
				 errhint("The value was set before the anarchon library was loaded in this session"
						 " (by SET, ALTER ROLE ... SET, ALTER DATABASE ... SET or the configuration file),"
						 " when PostgreSQL could not check it. Set a valid value, or load the library with"
						 " session_preload_libraries so that a bad value is refused when it is set.")));
	}
}

void
an_pg_current_settings(an_settings *out)
{
	require_valid();
	*out = current;
}

const char *
an_pg_store_name(void)
{
	require_valid();
	return store_name;
}

bool
an_pg_claim_in_transaction(void)
{
	require_valid();
	return in_transaction;
}
