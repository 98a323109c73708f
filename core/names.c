/*
 * names.c — the words the SQL functions answer with, and the token format.
 */
#include <string.h>

#include "anarchon.h"

const char *
an_outcome_name(an_outcome o)
{
	switch (o)
	{
		case AN_WON:
			return "won";
		case AN_RUNNING:
			return "running";
		case AN_DONE:
			return "done";
		case AN_LATE:
			return "late";
		case AN_OVERLAP:
			return "overlap";
		case AN_LOST:
			return "lost";
		case AN_PAUSED:
			return "paused";
	}
	return "lost";
}

const char *
an_run_state_name(an_run_state s)
{
	switch (s)
	{
		case AN_RUN_NONE:
			return "none";
		case AN_RUN_RUNNING:
			return "running";
		case AN_RUN_SUCCEEDED:
			return "succeeded";
		case AN_RUN_FAILED:
			return "failed";
		case AN_RUN_INTERRUPTED:
			return "interrupted";
		case AN_RUN_REPLACED:
			return "replaced";
	}
	return "none";
}

an_run_state
an_run_state_parse(const char *name)
{
	static const an_run_state all[] = {
		AN_RUN_RUNNING, AN_RUN_SUCCEEDED, AN_RUN_FAILED, AN_RUN_INTERRUPTED, AN_RUN_REPLACED
	};

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (strcmp(name, an_run_state_name(all[i])) == 0)
			return all[i];
	return AN_RUN_NONE;
}

const char *
an_check_state_name(an_check_state c)
{
	switch (c)
	{
		case AN_CHECK_NONE:
			return "none";
		case AN_CHECK_RUNNING:
			return "running";
		case AN_CHECK_EXPIRED:
			return "expired";
		case AN_CHECK_SUCCEEDED:
			return "succeeded";
		case AN_CHECK_FAILED:
			return "failed";
		case AN_CHECK_INTERRUPTED:
			return "interrupted";
		case AN_CHECK_REPLACED:
			return "replaced";
	}
	return "none";
}

void
an_token_hex(const unsigned char random16[16], char out[AN_TOKEN_HEX + 1])
{
	static const char hex[] = "0123456789abcdef";

	for (int i = 0; i < 16; i++)
	{
		out[2 * i] = hex[random16[i] >> 4];
		out[2 * i + 1] = hex[random16[i] & 0x0f];
	}
	out[AN_TOKEN_HEX] = '\0';
}
