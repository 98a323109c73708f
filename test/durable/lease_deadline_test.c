/*
 * lease_deadline_test.c — the keep-alive's stop time (an_lease_stop_at,
 * core/lease.c): the last confirmed send plus the lease, minus the margin.
 */
#include <stdio.h>

#include "lease.h"

static int	failed;

static void
expect(const char *what, long long got, long long want)
{
	if (got != want)
	{
		printf("%s: got %lld, want %lld\n", what, got, want);
		failed = 1;
	}
}

int
main(void)
{
	expect("30 s lease: margin a tenth", an_lease_stop_margin(30000), 3000);
	expect("30 s lease sent at 1000", an_lease_stop_at(1000, 30000), 1000 + 27000);
	expect("1 s lease: margin 100 ms", an_lease_stop_margin(1000), 100);
	expect("150 ms lease: margin half", an_lease_stop_margin(150), 75);
	expect("1 h lease: margin capped at 5 s", an_lease_stop_margin(3600000), 5000);
	expect("a stop never before the send", an_lease_stop_at(500, 1) >= 500, 1);
	expect("saturates", an_lease_stop_at(INT64_MAX - 10, 60000), INT64_MAX);
	if (!failed)
		printf("7 cases");
	return failed;
}
