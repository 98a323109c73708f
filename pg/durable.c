/*
 * durable.c — a decision of the local store is on disk before it is answered.
 *
 * A claim answered `won` that a crash then forgets lets another instance win
 * the same slot: the run happens twice.  The same holds for every write that
 * decides who owns a run (run-now, a replace, a takeover, heartbeat, finish,
 * fence, pause and resume).  Two server settings can forget such a write:
 *
 * - synchronous_commit = off (in postgresql.conf, ALTER ROLE/DATABASE ... SET,
 *   SET, SET LOCAL or a function's SET clause): the commit returns before its
 *   WAL is written, and a crash of the server -- not only of the machine --
 *   loses it.  Every local write therefore calls an_pg_commit_durably, which
 *   asks PostgreSQL to flush this transaction's commit record whatever
 *   synchronous_commit says (ForceSyncCommit, as CREATE DATABASE does).  The
 *   request belongs to the transaction, not to a GUC level, so a later
 *   SET LOCAL synchronous_commit = off in the caller's transaction (the
 *   anarchon.in_transaction opt-in) or a function's SET clause cannot take it
 *   back: the caller's COMMIT is the one that flushes.  local, remote_write,
 *   on and remote_apply all flush locally already.  With a synchronous
 *   standby configured the transaction also commits as `on` (a SET LOCAL),
 *   so that a failover keeps the decision too.
 *
 * - fsync = off: nothing is ever forced to disk; a crash of the machine
 *   forgets any recent commit.  No setting of a session can repair that, so
 *   a claim or a run-now is refused (an_pg_require_fsync), as a Redis
 *   store without an append-only file is, unless a superuser accepts the risk
 *   by name: anarchon.durability = 'accept-loss', the word of the stores'
 *   durability=accept-loss URL parameter.
 */
#include "anarchon_pg.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "replication/syncrep.h"
#include "utils/guc.h"

enum
{
	AN_PG_CRASH_SAFE,
	AN_PG_ACCEPT_LOSS
};

static const struct config_enum_entry durability_options[] = {
	{"crash-safe", AN_PG_CRASH_SAFE, false},
	{"accept-loss", AN_PG_ACCEPT_LOSS, false},
	{NULL, 0, false}
};

static int	durability = AN_PG_CRASH_SAFE;

void
an_pg_define_durability(void)
{
	/*
	 * PGC_SUSET: it weakens the guarantee, so an application role may not set
	 * it; a superuser may, in postgresql.conf, ALTER SYSTEM or ALTER ROLE.
	 */
	DefineCustomEnumVariable("anarchon.durability",
							 "'crash-safe': the local store refuses to claim on a server running with fsync = off; 'accept-loss': claims there anyway, taking the risk that a crash of the machine forgets a won claim.",
							 NULL, &durability, AN_PG_CRASH_SAFE, durability_options,
							 PGC_SUSET, 0, NULL, NULL, NULL);
}

void
an_pg_require_fsync(const char *what)
{
	if (enableFsync || durability == AN_PG_ACCEPT_LOSS)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("%s refuses to decide on a server running with fsync = off", what),
			 errdetail("With fsync off PostgreSQL never forces its writes to disk, so a crash of the machine can forget a claim it answered won, and a forgotten slot can be won a second time."),
			 errhint("Turn fsync on (the default) in postgresql.conf, or have a superuser set anarchon.durability = 'accept-loss' to take the risk.")));
}

void
an_pg_commit_durably(void)
{
	ForceSyncCommit();

	/*
	 * With a synchronous standby configured, a commit with synchronous_commit
	 * off or local returns before the standby has the write: a failover would
	 * forget it.  This transaction commits as `on` instead (set as SET LOCAL
	 * does, so it ends with the transaction); sessions that chose
	 * remote_write or more keep their choice.
	 */
	if (synchronous_commit < SYNCHRONOUS_COMMIT_REMOTE_WRITE &&
		SyncRepStandbyNames != NULL && SyncRepStandbyNames[0] != '\0')
		(void) set_config_option("synchronous_commit", "on", PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_LOCAL, true, 0, false);
}
