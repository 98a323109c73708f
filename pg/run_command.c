/*
 * run_command.c — anarchon.run_command_check(command): is the command of
 * anarchon.run exactly one SQL statement?
 *
 * anarchon.run runs its command with PL/pgSQL's EXECUTE, which runs every
 * statement of a string, and records an empty string as a run that
 * succeeded.  doc/pg_cron.md promises one statement, so the string is parsed
 * (grammar only: no name is looked up, nothing runs) and anything else is
 * refused before a slot is claimed.
 */
#include "anarchon_pg.h"

#include "nodes/pg_list.h"
#include "parser/parser.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(anarchon_run_command_check);

Datum
anarchon_run_command_check(PG_FUNCTION_ARGS)
{
	char	   *command = text_to_cstring(PG_GETARG_TEXT_PP(0));
	List	   *statements = raw_parser(command, RAW_PARSE_DEFAULT);

	if (list_length(statements) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("anarchon.run: the command is empty"),
				 errdetail("The command is the one SQL statement that runs when this call wins the slot."),
				 errhint("Pass the statement to run, e.g. 'SELECT app.nightly()'.")));
	if (list_length(statements) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("anarchon.run: the command holds %d statements, not one", list_length(statements)),
				 errdetail("The command is one SQL statement, run in one subtransaction when this call wins."),
				 errhint("Put the statements in a function or procedure and pass 'SELECT f()' or 'CALL p()'.")));
	PG_RETURN_VOID();
}
