#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host-side figure for the live reader (issue 21): the CPU time
`rdmatrace-dump -f -o FILE` and `rdmatrace-record -D DIR` spend per event
to drain the same backlog of EVENTS records from a relay directory.

No module is needed: the directory is made of regular trace<cpu> files,
which read() as relay does (partial reads, 0 at the end), holding a
bench/rdt-biggen trace split by CPU.  The CPU time (each thread's time on a
CPU, /proc/PID/task/*/schedstat) is taken the moment the output holds every record but for one
stdio buffer, so the wait after the drain is not counted (poll() on a
regular file does not block, unlike relay's).  Guest capture rates stay
bench/guest-capture.sh's; this is the reader's own cost, without a guest.

  host-follow.py REPS EVENTS      (RDT_BUILD: the build directory)
prints "R follow.host.dump_ns_per_event N", the same with --metrics scraped
every second ("dump_metrics", issue 37) and "R follow.host.record_ns_per_event N"
per repetition.
"""
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

reps, n = int(sys.argv[1]), int(sys.argv[2])
build = os.environ.get("RDT_BUILD", "build")
dump = f"{build}/bin/rdmatrace-dump"
record = f"{build}/bin/rdmatrace-record"
base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
w = tempfile.mkdtemp(prefix="rdt-follow.", dir=os.environ.get("RDT_BENCH_TMP", base))
hz = os.sysconf("SC_CLK_TCK")


class Scraper(threading.Thread):
    """GET /metrics every second until stopped (refused: not up yet)."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.port, self.done = port, threading.Event()
        self.start()

    def run(self):
        while not self.done.wait(1.0):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics",
                                       timeout=5).read()
            except OSError:
                pass

    def stop(self):
        self.done.set()
        self.join()


def cpu_s(pid):
    """The process's CPU time so far, in seconds: each thread's time on a
    CPU from /proc/PID/task/TID/schedstat, in ns (issue 37: /proc/PID/stat
    counts 10 ms ticks, a tenth of a 2 M-event run, too coarse to tell a
    few per cent).  Threads gone by then are not counted: the readers'
    threads (rdmatrace-dump's output writer) live until they exit.  A
    kernel without schedstat (CONFIG_SCHED_INFO): the ticks."""
    tasks = f"/proc/{pid}/task"
    if os.path.exists(f"/proc/{pid}/schedstat"):
        ns = 0
        for t in os.listdir(tasks):
            try:
                ns += int(open(f"{tasks}/{t}/schedstat").read().split()[0])
            except FileNotFoundError:
                pass    # a thread that ended meanwhile
        return ns / 1e9
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / hz


try:
    subprocess.run([f"{build}/bench/rdt-biggen", "-n", str(n), "-c", "2",
                    f"{w}/all.rdt"], check=True, stdout=subprocess.DEVNULL)
    d = open(f"{w}/all.rdt", "rb").read()
    off = struct.unpack_from("<I", d, 12)[0]
    per = {0: bytearray(), 1: bytearray()}
    while off < len(d):
        size = struct.unpack_from("<H", d, off + 6)[0]
        per[struct.unpack_from("<I", d, off + 24)[0]] += d[off:off + size]
        off += size
    del d
    for c, b in per.items():
        open(f"{w}/t{c}", "wb").write(b)
    total = sum(len(b) for b in per.values())
    del per
    for _ in range(reps):
        for tool in ("dump", "dump_metrics", "record"):
            r = f"{w}/relay"
            shutil.rmtree(r, True)
            shutil.rmtree(f"{w}/cap", True)
            if os.path.exists(f"{w}/live.rdt"):
                os.unlink(f"{w}/live.rdt")
            os.mkdir(r)
            open(f"{r}/version", "w").write("abi 1.0\nmodule bench\n")
            for c in (0, 1):
                shutil.copy(f"{w}/t{c}", f"{r}/trace{c}")
            scraper = None
            if tool.startswith("dump"):
                cmd = [dump, "-d", r, "-f", "--no-bpf", "--no-enable",
                       "--no-nccl-plugin", "-o", f"{w}/live.rdt"]
                outs = [f"{w}/live.rdt"]
                if tool == "dump_metrics":
                    # Issue 37: the same with the exporter on, scraped
                    # every second as a Prometheus would be.
                    s = socket.socket()
                    s.bind(("127.0.0.1", 0))
                    port = s.getsockname()[1]
                    s.close()
                    cmd.append(f"--metrics=127.0.0.1:{port}")
                    scraper = Scraper(port)
            else:
                cmd = [record, "-D", f"{w}/cap", "-d", r, "--no-enable"]
                outs = [f"{w}/cap/trace0", f"{w}/cap/trace1"]
            p = subprocess.Popen(cmd, stderr=subprocess.DEVNULL)
            deadline = time.time() + 120
            while sum(os.path.getsize(o) for o in outs if os.path.exists(o)) < total - 65536:
                if p.poll() is not None or time.time() > deadline:
                    sys.exit(f"host-follow: {tool} stopped or stalled")
                time.sleep(0.002)
            c = cpu_s(p.pid)
            if scraper:
                scraper.stop()
            p.send_signal(signal.SIGINT)
            p.wait()
            print(f"R follow.host.{tool}_ns_per_event {c / n * 1e9:.1f}",
                  flush=True)
finally:
    shutil.rmtree(w, True)
