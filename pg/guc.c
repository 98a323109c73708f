/*
 * guc.c — the settings of DESIGN §3 as GUCs anarchon.<name>.
 *
 * The numeric settings come from core's an_numeric_settings table, so the
 * names, defaults, ranges and error messages are the SQLite host's too.  They
 * are string GUCs: a year-long lease in milliseconds does not fit PostgreSQL's
 * 32-bit integer GUCs.  Each value is checked by core's an_settings_set (the
 * check hook) and then kept parsed in `current` (the assign hook), so a call
 * reads its settings without parsing anything.
 *
 * GUC hooks are not told which variable they belong to, so each setting gets
 * its own pair of tiny hooks, generated below by index into the table.
 */
#include "anarchon_pg.h"

#include "utils/guc.h"

/* Hook pairs available: the numeric settings plus overlap must fit. */
#define AN_GUC_MAX 8

static an_settings current;
static const char *names[AN_GUC_MAX];
static char *values[AN_GUC_MAX];
static char defaults[AN_GUC_MAX][24];
static char *store_name;

static bool
check_setting(int i, char **newval)
{
	an_settings scratch;
	char		err[AN_ERRMAX];

	an_settings_default(&scratch);
	if (an_settings_set(&scratch, names[i], *newval, err, sizeof(err)) != AN_OK)
	{
		GUC_check_errdetail("%s", err);
		return false;
	}
	return true;
}

static void
assign_setting(int i, const char *newval)
{
	/* Checked already: an_settings_set cannot fail here. */
	(void) an_settings_set(&current, names[i], newval, NULL, 0);
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

static GucStringCheckHook checks[AN_GUC_MAX] = {
	check_0, check_1, check_2, check_3, check_4, check_5, check_6, check_7
};
static GucStringAssignHook assigns[AN_GUC_MAX] = {
	assign_0, assign_1, assign_2, assign_3, assign_4, assign_5, assign_6, assign_7
};

/* anarchon.store: "local", or a name a foreign server could have. */
static bool
check_store(char **newval, void **extra, GucSource source)
{
	size_t		len = strlen(*newval);

	if (len == 0 || len >= NAMEDATALEN)
	{
		GUC_check_errdetail("anarchon.store is 'local' or the name of a foreign server of the anarchon wrapper (1 to %d bytes).",
							NAMEDATALEN - 1);
		return false;
	}
	return true;
}

void
an_pg_define_gucs(void)
{
	int			n = 0;
	char		name[NAMEDATALEN];

	an_settings_default(&current);

	for (const an_setting_info *s = an_numeric_settings; s->name; s++)
	{
		if (n >= AN_GUC_MAX - 1)
			elog(ERROR, "anarchon: more settings than GUC hooks: raise AN_GUC_MAX in pg/guc.c");
		names[n] = s->name;
		snprintf(defaults[n], sizeof(defaults[n]), INT64_FORMAT, (int64) s->def);
		snprintf(name, sizeof(name), "anarchon.%s", s->name);
		DefineCustomStringVariable(name,
								   s->description, NULL,
								   &values[n], defaults[n],
								   PGC_USERSET, 0, checks[n], assigns[n], NULL);
		n++;
	}

	names[n] = "overlap";
	DefineCustomStringVariable("anarchon.overlap",
							   "'skip': no new run of a job while another run of it holds a live lease (the claim answers 'overlap'); 'allow': runs may overlap.",
							   NULL, &values[n], "skip",
							   PGC_USERSET, 0, checks[n], assigns[n], NULL);

	DefineCustomStringVariable("anarchon.store",
							   "Where claims are decided: 'local' (anarchon.runs in this database) or the name of a foreign server of the anarchon foreign-data wrapper.",
							   NULL, &store_name, "local",
							   PGC_USERSET, 0, check_store, NULL, NULL);

	MarkGUCPrefixReserved("anarchon");
}

void
an_pg_current_settings(an_settings *out)
{
	*out = current;
}

const char *
an_pg_store_name(void)
{
	return store_name ? store_name : "local";
}
