/*
 * watchdog.h — the process that stops the command's process group when
 * `anarchon run` cannot: its lease deadline passed while anarchon was busy
 * (a heartbeat blocked on a frozen store) or anarchon itself died.
 *
 * It is forked before the command and holds only the read end of a pipe
 * whose write end anarchon holds.  Messages on the pipe move its deadline,
 * ask it to stop the group now, or to exit; end of file means anarchon is
 * gone, and it stops the group at once.  A stop is SIGTERM to the whole
 * group, then SIGKILL when the stop's window has run out, each at most once.
 * All times are CLOCK_MONOTONIC milliseconds (an_cli_mono_ms).
 */
#ifndef ANARCHON_CLI_WATCHDOG_H
#define ANARCHON_CLI_WATCHDOG_H

#include <stdint.h>
#include <sys/types.h>

typedef struct an_watchdog
{
	pid_t		pid;             /* 0: not running (never started, or reaped) */
	int			fd;              /* the write end; -1 when closed */
} an_watchdog;

/*
 * Fork it.  term_at: when to send SIGTERM unless a later deadline comes;
 * kill_window: from that SIGTERM to the SIGKILL; kill_after: the same for a
 * stop asked for (an_watchdog_stop, or anarchon's death), still bounded by
 * term_at + kill_window.  0 or -1 with errno.
 */
int			an_watchdog_start(an_watchdog *w, int64_t term_at, int64_t kill_window, int64_t kill_after);
/* In the command's child, before exec: name its process group. */
void		an_watchdog_group(int fd, pid_t pgid);
/* A renewal was confirmed: the next SIGTERM deadline. */
void		an_watchdog_deadline(an_watchdog *w, int64_t term_at);
/* Stop the group now (ignored if a stop is under way). */
void		an_watchdog_stop(an_watchdog *w);
/* The group is gone: tell it to exit, and close the pipe. */
void		an_watchdog_end(an_watchdog *w);

#endif							/* ANARCHON_CLI_WATCHDOG_H */
