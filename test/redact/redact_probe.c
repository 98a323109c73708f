/*
 * redact_probe.c — an_redact_url on each line of stdin, one answer a line,
 * and the same text cut to every buffer size (a cut answer must be a
 * terminated prefix of the whole, never more of the input).  Used by
 * test/redact/run.sh on its table of URLs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redact.h"

int
main(void)
{
	char		line[8192];
	int			bad = 0;

	while (fgets(line, sizeof(line), stdin))
	{
		size_t		n;
		char	   *whole;

		line[strcspn(line, "\n")] = '\0';
		n = an_redact_url(line, NULL, 0);
		whole = an_redact_url_dup(line);
		if (whole == NULL || strlen(whole) != n)
		{
			printf("error: the sized and the whole answers differ for line %s\n", line);
			return 1;
		}
		for (size_t cap = 1; cap <= n + 1; cap++)
		{
			char	   *cut = malloc(cap);

			if (an_redact_url(line, cut, cap) != n || strlen(cut) != cap - 1 || strncmp(cut, whole, cap - 1) != 0)
				bad = 1;
			free(cut);
		}
		printf("%s\n", whole);
		free(whole);
	}
	if (bad)
		printf("error: an answer cut to a smaller buffer is not a prefix of the whole\n");
	return bad;
}
