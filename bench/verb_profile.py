# SPDX-License-Identifier: GPL-2.0
# gdb script of bench/verb-profile.sh: single-steps rdmatrace's data-path
# wrappers in a guest under QEMU's gdb stub and counts, per kernel
# function, the instructions each call executes outside the wrapped
# original (rxe's own post_send/post_recv/poll_cq are run, not counted).
# QEMU steps with interrupts and timers off, so a call is counted alone.
#
#   gdb -nx -batch -ex 'set architecture i386:x86-64' \
#       -ex 'target remote 127.0.0.1:PORT' -x verb_profile.py
# env: RDT_PROF_DIR (kallsyms in, go and result.json out),
#      RDT_PROF_SKIP (calls of each wrapper skipped first),
#      RDT_PROF_SAMPLES (calls counted per wrapper and outcome),
#      RDT_PROF_NONE=1 (tracing off: the data path's wrappers are not in
#      device->ops, so none may run; result.json's "_entered" says)
import bisect
import json
import os
import struct

import gdb

DIR = os.environ["RDT_PROF_DIR"]
SKIP = int(os.environ.get("RDT_PROF_SKIP", "40"))
SAMPLES = int(os.environ.get("RDT_PROF_SAMPLES", "5"))
NONE = os.environ.get("RDT_PROF_NONE") == "1"
WRAPPERS = {"rdt_post_send": "rxe_post_send",
            "rdt_post_recv": "rxe_post_recv",
            "rdt_poll_cq": "rxe_poll_cq"}

addrs, names, byname = [], [], {}
with open(os.path.join(DIR, "kallsyms")) as f:
    for line in f:
        p = line.split()
        if len(p) < 3 or p[1] not in "tTwW":
            continue
        a = int(p[0], 16)
        if a == 0:
            raise SystemExit("verb-profile: kallsyms shows zero addresses")
        addrs.append(a)
        names.append(p[2])
        byname.setdefault(p[2], a)


# Several names can share an address (__x86_indirect_thunk_rax is also
# __static_call_text_end): a section marker is the worst of them.
def rank(i):
    n = names[i]
    return (addrs[i], n.endswith(("_end", "_start", "_array")), n)


order = sorted(range(len(addrs)), key=rank)
keep = [i for k, i in enumerate(order) if k == 0 or addrs[i] != addrs[order[k - 1]]]
addrs = [addrs[i] for i in keep]
names = [names[i] for i in keep]


def sym(pc):
    i = bisect.bisect_right(addrs, pc) - 1
    return names[i] if i >= 0 else "?"


missing = [n for w in WRAPPERS.items() for n in w if n not in byname]
if missing:
    raise SystemExit("verb-profile: not in kallsyms: " + " ".join(missing))
entry = {byname[w]: w for w in WRAPPERS}
origs = {byname[o] for o in WRAPPERS.values()}
inf = gdb.selected_inferior()


def reg(r):
    return int(gdb.parse_and_eval("$" + r)) & 0xffffffffffffffff


def u64(a):
    return struct.unpack("<Q", bytes(inf.read_memory(a, 8)))[0]


def trace_call():
    """Step one wrapper call from its first instruction to its return."""
    ret, sp0 = u64(reg("rsp")), reg("rsp")
    counts = {}
    pcs = []
    while True:
        pc = reg("pc")
        if pc == ret and reg("rsp") > sp0:
            return counts, reg("rax"), pcs
        if pc in origs:
            gdb.execute("tbreak *%#x" % u64(reg("rsp")), to_string=True)
            gdb.execute("continue", to_string=True)
            continue
        s = sym(pc)
        counts[s] = counts.get(s, 0) + 1
        pcs.append("%s+%#x" % (s, pc - addrs[bisect.bisect_right(addrs, pc) - 1]))
        gdb.execute("stepi", to_string=True)


gdb.execute("set pagination off")
gdb.execute("set confirm off")
for a in entry:
    gdb.execute("break *%#x" % a, to_string=True)
open(os.path.join(DIR, "go"), "w").close()

seen = {w: 0 for w in WRAPPERS}
got = {}		# (wrapper, outcome) -> [counts, ...]
first_pcs = {}
# An empty poll is rare when completions are quick: counted when it comes.
need = [("rdt_post_send", "ok"), ("rdt_post_recv", "ok"),
        ("rdt_poll_cq", "hit")]


def have(k):
    return len(got.get(k, []))


def need_more():
    return any(have(k) < SAMPLES for k in need)


extra = 0
while need_more() or (have(("rdt_poll_cq", "empty")) < SAMPLES and extra < 200):
    try:
        gdb.execute("continue", to_string=True)
        pc = reg("pc")
    except gdb.error:
        break		# the guest ended first: report what was counted
    w = entry.get(pc)
    if w is None:
        continue
    seen[w] += 1
    if seen[w] <= SKIP:
        continue
    if not need_more():
        extra += 1
    if w != "rdt_poll_cq" and have((w, "ok")) >= SAMPLES:
        continue
    counts, rax, pcs = trace_call()
    rv = rax if rax < 1 << 63 else rax - (1 << 64)
    if w == "rdt_poll_cq":
        outcome = "hit" if rv > 0 else "empty" if rv == 0 else "error"
    else:
        outcome = "ok" if rv == 0 else "error"
    if have((w, outcome)) < SAMPLES:
        got.setdefault((w, outcome), []).append(counts)
        # One call's instructions in order, "function+offset": where
        # they go inside a function (objdump -d of the .ko).
        first_pcs.setdefault("%s.%s" % (w, outcome), pcs)

short = [k for k in need if have(k) < SAMPLES]
if short and not NONE:
    raise SystemExit("verb-profile: too few calls of %s (raise the "
                     "guest's ITERS)" % short)
try:
    gdb.execute("delete")
except gdb.error:
    pass
# How often each wrapper was entered at all (0 for all when tracing is off).
res = {"_entered": dict(seen)}
for (w, outcome), runs in sorted(got.items()):
    tot = [sum(c.values()) for c in runs]
    fn = {}
    for c in runs:
        for s, n in c.items():
            fn[s] = fn.get(s, 0) + n
    res["%s.%s" % (w, outcome)] = {
        "calls": len(runs), "min": min(tot), "max": max(tot),
        "functions": {s: n / len(runs) for s, n in
                      sorted(fn.items(), key=lambda x: -x[1])}}
with open(os.path.join(DIR, "result.json"), "w") as f:
    json.dump(res, f, indent=1)
with open(os.path.join(DIR, "pcs.json"), "w") as f:
    json.dump(first_pcs, f, indent=0)
try:
    gdb.execute("detach")
except gdb.error:
    pass
