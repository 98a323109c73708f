#!/usr/bin/env python3
"""ctrlc.py: run a command on a pseudo-terminal and type ^C into it.

    ctrlc.py READY_FILE TIMEOUT_S -- COMMAND [ARG...]

The command is the session leader of a new pty, in its foreground, as in an
interactive shell.  Once READY_FILE exists, ^C is written to the terminal
(the line discipline turns it into SIGINT for the foreground process group).
Prints the moment ^C was sent (ms since 1970) and the command's exit status
(128 + signal when killed), or "timeout" and kills it after TIMEOUT_S
seconds.
"""
import os
import pty
import select
import signal
import sys
import time


def main():
    ready, timeout = sys.argv[1], float(sys.argv[2])
    argv = sys.argv[sys.argv.index("--") + 1:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(argv[0], argv)
    end = time.monotonic() + timeout
    sent = False
    while time.monotonic() < end:
        if not sent and os.path.exists(ready):
            os.write(fd, b"\x03")
            sent = int(time.time() * 1000)
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                os.read(fd, 4096)
            except OSError:
                pass
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            print(sent, os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))
            return
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    print(sent, "timeout")


main()
