/*
 * verbs.c — the verbs a script calls one step at a time: claim, heartbeat,
 * finish, check and token.
 *
 * Each prints one line a shell can `read` (a word, or tab-separated values)
 * and answers "was it ours" in its exit status, so `if anarchon claim ...`
 * reads as it should.
 */
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "cli.h"

int
an_cli_new_token(char out[AN_TOKEN_HEX + 1])
{
	unsigned char raw[16];
	size_t		got = 0;

	while (got < sizeof(raw))
	{
		ssize_t		n = getrandom(raw + got, sizeof(raw) - got, 0);

		if (n < 0)
		{
			an_cli_error("cannot read random bytes for a token: %m");
			return AN_EXIT_SOFTWARE;
		}
		got += (size_t) n;
	}
	an_token_hex(raw, out);
	return AN_EXIT_OK;
}

int
an_cli_token(an_cli *cli)
{
	char		token[AN_TOKEN_HEX + 1];
	int			rc;

	(void) cli;
	if ((rc = an_cli_new_token(token)) == AN_EXIT_OK)
		printf("%s\n", token);
	return rc;
}

/* The slot, the store opened and the settings it must honour: AN_EXIT_OK or a status. */
static int
prepare(an_cli *cli, int64_t *slot)
{
	int			rc;

	if ((rc = an_cli_slot(cli, slot)) != AN_EXIT_OK || (rc = an_cli_open(cli)) != AN_EXIT_OK)
		return rc;
	an_store_clear(cli->store);
	if (cli->store->m->validate && cli->store->m->validate(cli->store, &cli->settings) != AN_OK)
		return an_cli_store_failed(cli, NULL);
	return AN_EXIT_OK;
}

int
an_cli_claim(an_cli *cli)
{
	char		token[AN_TOKEN_HEX + 1];
	an_request	rq;
	an_claim_result res;
	int64_t		slot;
	int			rc;

	if (cli->token == NULL && (rc = an_cli_new_token(token)) != AN_EXIT_OK)
		return rc;
	if ((rc = prepare(cli, &slot)) != AN_EXIT_OK)
		return rc;
	an_cli_request(cli, &rq, slot, cli->token ? cli->token : token);
	memset(&res, 0, sizeof(res));
	if (an_store_claim(cli->store, &rq, &res) != AN_OK)
		return an_cli_store_failed(cli, NULL);
	printf("%s\t%lld\t%s\t%d\n", an_outcome_name(res.outcome), (long long) slot, rq.token, (int) res.attempt);
	return res.outcome == AN_WON ? AN_EXIT_OK : cli->not_mine_exit;
}

/*
 * heartbeat and finish: the same question to the store (is this token's run
 * still its own?), answered in one word and the exit status.
 */
static int
owner_call(an_cli *cli, int finish, const char *yes)
{
	an_request	rq;
	int64_t		slot;
	int			owned = 0,
				rc;

	if ((rc = prepare(cli, &slot)) != AN_EXIT_OK)
		return rc;
	an_cli_request(cli, &rq, slot, cli->token);
	rc = finish ? an_store_finish(cli->store, &rq, cli->status, &owned)
		: an_store_heartbeat(cli->store, &rq, &owned);
	if (rc != AN_OK)
		return an_cli_store_failed(cli, NULL);
	printf("%s\n", owned ? yes : "fenced");
	return owned ? AN_EXIT_OK : AN_EXIT_NOT_MINE;
}

int
an_cli_heartbeat(an_cli *cli)
{
	return owner_call(cli, 0, "owned");
}

int
an_cli_finish(an_cli *cli)
{
	return owner_call(cli, 1, "finished");
}

int
an_cli_check(an_cli *cli)
{
	an_request	rq;
	an_check_result res;
	int64_t		slot;
	int			rc;

	if ((rc = prepare(cli, &slot)) != AN_EXIT_OK)
		return rc;
	an_cli_request(cli, &rq, slot, NULL);
	memset(&res, 0, sizeof(res));
	if (an_store_check(cli->store, &rq, &res) != AN_OK)
		return an_cli_store_failed(cli, NULL);
	printf("%s\n", an_check_state_name(res.state));
	return AN_EXIT_OK;
}
