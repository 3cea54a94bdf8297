#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Time one command as make bench's decode figures need it (issue 36):
one untimed run first, under /usr/bin/time for its peak RSS (a child of
this Python process would count Python's own pages until its exec), then
runs again and again until they together last MIN_S seconds, on the
monotonic clock (microseconds and better, where /usr/bin/time has 10 ms);
print the seconds one run took and the first run's peak RSS (KiB).  The
command's stdin is /dev/null; OUT, if given, takes its stdout (truncated
before each run), else it goes to /dev/null.  Each --rm PATH is removed
before each run, outside the time: a command that writes its own output
file would otherwise pay, inside its time, for freeing the last run's
(O_TRUNC of 160 MB on tmpfs), where OUT is truncated before the clock
starts.

  timeit.py [--rm PATH]... MIN_S OUT|- CMD [ARG...]
                                   prints "SECONDS_PER_RUN RSS_KB RUNS"
A run that fails ends it: its stderr is shown, the exit status is 1.
"""
import os
import subprocess
import sys
import tempfile
import time


def run(cmd, out, rm):
    for path in rm:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
    dest = open(out, "wb") if out != "-" else subprocess.DEVNULL
    t0 = time.perf_counter_ns()
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=dest,
                       stderr=subprocess.PIPE)
    t1 = time.perf_counter_ns()
    if dest is not subprocess.DEVNULL:
        dest.close()
    if p.returncode:
        sys.stderr.write(p.stderr.decode(errors="replace"))
        sys.exit("timeit: %s: exit %d" % (" ".join(cmd), p.returncode))
    return (t1 - t0) / 1e9


def main():
    argv, rm = sys.argv[1:], []
    while len(argv) > 1 and argv[0] == "--rm":
        rm.append(argv[1])
        argv = argv[2:]
    if len(argv) < 3:
        sys.exit(__doc__)
    min_s, out, cmd = float(argv[0]), argv[1], argv[2:]
    with tempfile.NamedTemporaryFile("r") as f:
        run(["/usr/bin/time", "-f", "%M", "-o", f.name] + cmd, out, rm)
        rss = int(f.read().split()[-1])
    runs, total = 0, 0.0
    while total < min_s or runs == 0:
        total += run(cmd, out, rm)
        runs += 1
    print("%.6f %d %d" % (total / runs, rss, runs))


if __name__ == "__main__":
    main()
