#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Runs a command with a pty as its terminal and prints what the pty showed.

usage: pty-run.py [--cols N] [--rows N] [--after TEXT --do CMD] -- COMMAND...

COMMAND's stdin, stdout and stderr are the slave side of a new pty of N
columns (default 80) and rows (default 24), its controlling terminal.
Everything it writes there is copied, byte for byte (carriage returns and
escape sequences too), to this program's stdout. With --after and --do,
each time TEXT has been shown once more, CMD runs through sh(1) with the
count (1, 2, ...) as its argument, before anything more is read: a test
changes what COMMAND reads next, in step with what it has shown. Exits with
COMMAND's status (128 + N for a signal), 124 when it runs longer than 60 s.
"""
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import fcntl
import time


def main(argv):
    cols, rows, after, do = 80, 24, None, None
    i = 0
    while i < len(argv) and argv[i] != "--":
        if argv[i] == "--cols":
            cols = int(argv[i + 1])
        elif argv[i] == "--rows":
            rows = int(argv[i + 1])
        elif argv[i] == "--after":
            after = argv[i + 1].encode()
        elif argv[i] == "--do":
            do = argv[i + 1]
        else:
            sys.stderr.write("pty-run.py: unknown option %s\n" % argv[i])
            return 2
        i += 2
    cmd = argv[i + 1:]
    if not cmd:
        sys.stderr.write(__doc__)
        return 2
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    proc = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=slave,
                            start_new_session=True,
                            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))
    os.close(slave)
    shown = b""
    seen = 0
    deadline = time.monotonic() + 60
    out = sys.stdout.buffer
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return 124
        r, _, _ = select.select([master], [], [], min(left, 1.0))
        if not r:
            continue
        try:
            data = os.read(master, 65536)
        except OSError:          # EIO: every holder of the slave has closed it
            data = b""
        if not data:
            break
        out.write(data)
        out.flush()
        shown += data
        if after is not None and do is not None:
            while shown.count(after) > seen:
                seen += 1
                subprocess.run(["sh", "-c", do, "sh", str(seen)], check=False)
    os.close(master)
    rc = proc.wait()
    return 128 - rc if rc < 0 else rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
