/*
 * urlparse.c — print what net/url.c makes of each URL on stdin, one a
 * line: the parts, or the error.  The remote suite compares it with a table.
 */
#include <stdio.h>
#include <string.h>

#include "anarchon.h"
#include "url.h"

int
main(void)
{
	char		line[8192];

	while (fgets(line, sizeof(line), stdin))
	{
		an_url		u;
		an_err		err;
		char		red[512];

		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#' || line[0] == '\0')
			continue;
		if (an_url_parse(line, &u, &err) < 0)
		{
			printf("error: %s\n", err.msg);
			continue;
		}
		an_url_name(&u, red, sizeof(red));
		printf("scheme=%s user=%s password=%s host=%s port=%d path=%s |",
			   u.scheme, u.user ? u.user : "-", u.password ? "(set)" : "-", u.host, u.port,
			   u.path ? u.path : "-");
		for (int i = 0; i < u.nparams; i++)
			printf(" %s=%s", u.params[i].name, u.params[i].value);
		printf(" | %s\n", red);
		an_url_free(&u);
	}
	return 0;
}
