#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The relay form of an ABI 1 trace (bench/host-decode.sh's relay-form
figure): what the module writes (<rdmatrace/wire.h>, relay ABI 2) for the
same records, as a live relay directory of one CPU.

  relay-form-gen.py IN.rdt DIR [SUBBUF_BYTES]

IN.rdt is one CPU's trace (bench/rdt-biggen -c 1).  DIR/form gets trace0:
sub-buffers of SUBBUF_BYTES (default 256 KiB), each opened by its header
and the module's clock pair, a COMM record before the first record of a
task after it (the module names the task once per sub-buffer), and every
record in the relay form: version 2, raw TSC stamps (TSC = BASE + 3 * ns,
a 3 GHz clock), junk where the form leaves pid, tid and cpu; the rest of
each sub-buffer is relay's padding, which read() skips and a file does
not, so sub-buffers are not padded here.  DIR/pairs is a clock pairs file
with a pair every millisecond across the trace, as the live reader takes
one after each read: every stamp is interpolated, as it is live.
DIR/abi1 is the same stream in ABI 1's form (what the module wrote before
the relay form: each header whole, CLOCK_MONOTONIC stamps, no pairs), so
that the two differ in the form alone.
"""
import os
import struct
import sys

src, out = sys.argv[1], sys.argv[2]
subbuf = int(sys.argv[3]) if len(sys.argv) > 3 else 256 * 1024
BASE, RATE, JUNK = 5_000_000_000, 3, 0xdeadbeef
RAW = 1 << 63
SUBBUF, COMM, CLOCK = 1, 2, 4
d = open(src, "rb").read()


def hdr(form, typ, size, ts, pid, tid, dev=0xffffffff):
    if form:
        return struct.pack("<HBBHHQIIII", 0x7452, 2, 1, typ, size,
                           RAW | (BASE + RATE * ts), pid if typ == COMM else JUNK,
                           tid if typ == COMM else JUNK, JUNK, dev)
    return struct.pack("<HBBHHQIIII", 0x7452, 1, 1, typ, size, ts, pid, tid, 0, dev)


def stream(form):
    body = bytearray()
    off = struct.unpack_from("<I", d, 12)[0]
    seq, used, task, first, last = 0, subbuf, None, None, 0
    comm = b"rdt-biggen".ljust(16, b"\0")
    while off < len(d):
        typ, size = struct.unpack_from("<HH", d, off + 4)
        ts, pid, tid = struct.unpack_from("<QII", d, off + 8)
        rec = d[off:off + size]
        off += size
        if typ == COMM:
            comm = rec[32:48]
            continue
        first = ts if first is None else first
        last = ts
        if used + size + 48 + 56 + 48 > subbuf:
            body += hdr(form, SUBBUF, 48, ts, 0, 0) + struct.pack("<QQ", seq, 0)
            used = 48
            if form:
                body += hdr(form, CLOCK, 56, ts, 0, 0) + \
                        struct.pack("<QQII", BASE + RATE * ts, ts, RATE * 1000000, 0)
                used += 56
            seq, task = seq + 1, None
        if (pid, tid) != task:
            body += hdr(form, COMM, 48, ts, pid, tid) + comm
            used += 48
            task = (pid, tid)
        body += hdr(form, typ, size, ts, pid, tid, struct.unpack_from("<I", rec, 28)[0]) + rec[32:]
        used += size
    return body, first, last


for name, form in (("form", True), ("abi1", False)):
    body, first, last = stream(form)
    o = f"{out}/{name}"
    os.makedirs(o, exist_ok=True)
    open(f"{o}/trace0", "wb").write(body)
    open(f"{o}/version", "w").write(f"abi {'2.16' if form else '1.15'}\nmodule bench\n")
    open(f"{o}/n_subbufs", "w").write("8\n")
    open(f"{o}/dropped", "w").write("cpu0 0\ntotal 0\n")
    open(f"{o}/enable", "w").write("0\n")
with open(f"{out}/pairs", "w") as f:
    f.write("rdmatrace clock pairs 1 tsc_khz 3000000\n")
    for t in range(first - 1000, last + 1_000_000, 1_000_000):
        f.write(f"{BASE + RATE * t} {t}\n")
