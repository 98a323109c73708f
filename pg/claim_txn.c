/*
 * claim_txn.c — may a local claim answer in the caller's transaction?
 *
 * The local store decides a claim inside the caller's transaction: a function
 * cannot commit.  Its `won` is final only if nothing can roll that
 * transaction back once the caller has read the answer.  PostgreSQL
 * guarantees that for one case only: a statement sent on its own by the
 * client in autocommit, which commits as soon as it has run.  Everywhere else
 * a `won` could be handed to code that then rolls back (an explicit BEGIN, a
 * driver such as psycopg2 that opens one implicitly, a savepoint or an
 * exception block, a multi-statement query string, a pipeline of the
 * extended protocol, a function, procedure or DO block whose later statements
 * can still fail, a C function calling it through SPI), and another instance
 * would then win the same slot.
 *
 * So outside that one case the claim is refused (25001, saying how to call
 * it) unless the caller opts in with anarchon.in_transaction = on: then the
 * claim is part of the caller's transaction, stands or falls with it, and
 * commits together with the job's own writes.
 *
 * "A statement sent by the client" is recognised by the function's own call
 * site: the executor state of the client's statement is the active portal's
 * (ActivePortal->queryDesc), and the function's FmgrInfo was set up in that
 * statement's per-query memory (es_query_cxt) exactly when the call is part
 * of that statement's plan.  A PL/pgSQL expression, an SPI query or an SQL
 * function body have executor states of their own; DO and CALL run as
 * utility statements with none.  An SPI cursor (a PL/pgSQL FOR loop over a
 * query) is a portal too, but not the one whose text the client sent.
 */
#include "anarchon_pg.h"

#include "access/xact.h"
#include "executor/execdesc.h"
#include "nodes/execnodes.h"
#include "tcop/pquery.h"
#include "tcop/tcopprot.h"
#include "utils/portal.h"

/* fn_extra of a call site found to be part of the client's statement. */
static const char client_call_site = 0;

/*
 * Is this call part of the plan of the statement the client sent?  The
 * answer holds for the call site's FmgrInfo as long as it lives (one
 * execution of one statement), so a yes is remembered in fn_extra, which the
 * claim functions use for nothing else: a statement claiming many rows
 * compares the query text once.
 */
static bool
called_by_client_statement(FunctionCallInfo fcinfo)
{
	Portal		portal = ActivePortal;

	if (fcinfo->flinfo == NULL || portal == NULL || portal->queryDesc == NULL ||
		portal->queryDesc->estate == NULL)
		return false;
	if (fcinfo->flinfo->fn_extra == &client_call_site)
		return true;
	if (fcinfo->flinfo->fn_mcxt != portal->queryDesc->estate->es_query_cxt)
		return false;
	if (portal->sourceText == NULL || debug_query_string == NULL ||
		(portal->sourceText != debug_query_string &&
		 strcmp(portal->sourceText, debug_query_string) != 0))
		return false;
	fcinfo->flinfo->fn_extra = (void *) &client_call_site;
	return true;
}

void
an_pg_require_final_claim(FunctionCallInfo fcinfo)
{
	const char *where;

	if (!called_by_client_statement(fcinfo))
		where = "inside a function, procedure, DO block or EXECUTE";
	else if (IsTransactionBlock())
		where = "inside a transaction block";
	else if (MyXactFlags & XACT_FLAGS_PIPELINING)
		where = "after other statements of a pipeline before its Sync";
	else
		return;
	if (an_pg_claim_in_transaction())
		return;
	ereport(ERROR,
			(errcode(ERRCODE_ACTIVE_SQL_TRANSACTION),
			 errmsg("anarchon_claim cannot run %s", where),
			 errdetail("The local store decides the claim in your transaction, and a rollback after it"
					   " answered 'won' would let another instance win the same slot."),
			 errhint("Call SELECT anarchon_claim(...) as a statement of its own in autocommit"
					 " (psycopg2: connection.autocommit = True), or, to make the claim part of"
					 " your transaction and commit it with the job's writes, run"
					 " SET LOCAL anarchon.in_transaction = on first.")));
}

/*
 * an_pg_require_fence_in_transaction: anarchon_fence sent by the client as a
 * statement in autocommit commits as soon as it has run, so it holds nothing
 * for the writes that follow; refused (25P01), as SQLite refuses it outside
 * BEGIN … COMMIT.  Called from a function, procedure or DO block, or inside
 * a transaction block, the fence and the job's writes share a transaction.
 */
void
an_pg_require_fence_in_transaction(FunctionCallInfo fcinfo)
{
	if (!called_by_client_statement(fcinfo) || IsTransactionBlock() ||
		(MyXactFlags & XACT_FLAGS_PIPELINING))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_NO_ACTIVE_SQL_TRANSACTION),
			 errmsg("anarchon_fence must be called inside the transaction whose writes it fences"),
			 errdetail("In autocommit the call commits on its own as it ends, so it protects no write that follows."),
			 errhint("BEGIN; SELECT anarchon_fence(...); your writes; COMMIT; or call it from the job's function.")));
}
