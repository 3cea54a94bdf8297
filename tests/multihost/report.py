#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The host half of a two-guest run's checks (tests/multihost/ring2.test,
make demo HOSTS=2): reads OUTDIR (tests/multihost/guest.sh's files), runs
rdmatrace-dump on the two traces and prints what it found.  Exit 1 if a
check failed.

  report.py [--split] OUTDIR [RDMATRACE_DUMP]

Checks: both guests' rings ran and summed right; each trace holds rxe_xmit
and rxe_rcv records of packets that crossed the wire; merged with clock
alignment (the default), rdmatrace-dump's offset B - A contains the true
offset (rdt-clockpair's bounds, measured over shared memory before and after
the run) within its reported error, the error is below 1 ms, and no
cross-host message is received before it was sent; merged with the header
offsets only (--clock-align=header), some are (the skew is real).

--split adds, per collective, its time split on the merged timeline: how
long cross-host packets were in flight (xmit on one host to rcv on the
other, A->B, B->A, either), and how long each host's ranks were inside the
collective with no packet of theirs on the wire (not checked: a view)."""
import json
import os
import re
import subprocess
import sys

argv = sys.argv[1:]
split = "--split" in argv
argv = [a for a in argv if a != "--split"]
out = argv[0]
dump = argv[1] if len(argv) > 1 else os.path.join(
    os.environ.get("RDT_BUILD", os.path.join(os.path.dirname(__file__), "../../build")),
    "bin", "rdmatrace-dump")
A, B = os.path.join(out, "A.rdt"), os.path.join(out, "B.rdt")
IP = {"A": "192.0.2.1", "B": "192.0.2.2"}
failures = []


def check(ok, what):
    print("  %-4s %s" % ("ok" if ok else "FAIL", what))
    if not ok:
        failures.append(what)


def run(*args):
    p = subprocess.run([dump] + list(args), capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def kv(path):
    with open(path) as f:
        return {k: int(v) for k, v in re.findall(r"(\w+)=(-?\d+)", f.read())}


print("== two hosts: the ring")
for role in "AB":
    ring = open(os.path.join(out, role + ".ring.txt")).read()
    env = open(os.path.join(out, role + ".env")).read()
    secs = re.search(r"RING_SECONDS=(\d+)", env)
    print("  guest %s: %s" % (role, " ".join(env.split())))
    if role == "A":
        summ = re.findall(r"^# rank (\d+) pid .* (OK|MISMATCH)$", ring, re.M)
        wrong = re.search(r"# Out of bounds values\s*:\s*(\d+)", ring)
        check(len(summ) == 4 and all(s[1] == "OK" for s in summ),
              "every rank's work requests = 2(n-1)K per collective (%d summaries)" % len(summ))
        check(wrong is not None and wrong.group(1) == "0",
              "every element of every rank summed right (#wrong %s)" % (wrong.group(1) if wrong else "?"))

print("== the traces: each host's rxe packets, sent and received")
counts = {}
for role, f in (("A", A), ("B", B)):
    other = IP["B" if role == "A" else "A"]
    rc, txt, err = run("-i", f, "--type", "rxe_xmit,rxe_rcv")
    x = [l for l in txt.splitlines() if " rxe_xmit " in l]
    r = [l for l in txt.splitlines() if " rxe_rcv " in l]
    xw = [l for l in x if "daddr=%s " % other in l + " "]
    counts[role] = (len(x), len(xw), len(r))
    print("  %s: %d rxe_xmit (%d to %s), %d rxe_rcv" % (role, len(x), len(xw), other, len(r)))
    check(rc == 0 and xw and r, "%s.rdt has rxe_xmit records to the other host and rxe_rcv records" % role)

print("== clocks")
pre, post, boot = (kv(os.path.join(out, n)) for n in ("clock-pre.txt", "clock-post.txt", "clock-boot.txt"))
step = kv(os.path.join(out, "skew.txt"))["stepped_ns"]
lo = min(pre["real_lo"], post["real_lo"])
hi = max(pre["real_hi"], post["real_hi"])
truth = (lo + hi) / 2
print("  injected: B's CLOCK_REALTIME stepped by %+.6f s (clock_adjtime ADJ_SETOFFSET)" % (step / 1e9))
print("  truth (rdt-clockpair over shared memory): B - A as booted %+.3f us (± %.3f);"
      " after the step %+.3f us (± %.3f), after the run %+.3f us (± %.3f)" % (
          (boot["real_lo"] + boot["real_hi"]) / 2e3, (boot["real_hi"] - boot["real_lo"]) / 2e3,
          (pre["real_lo"] + pre["real_hi"]) / 2e3, (pre["real_hi"] - pre["real_lo"]) / 2e3,
          (post["real_lo"] + post["real_hi"]) / 2e3, (post["real_hi"] - post["real_lo"]) / 2e3))
print("  skew during the run: %+.3f us within [%+.3f, %+.3f] us (the step %+.3f us plus"
      " the guests' own %+.3f us from booting)" % (truth / 1e3, lo / 1e3, hi / 1e3, step / 1e3,
                                                   (boot["real_lo"] + boot["real_hi"]) / 2e3))

rc, stats, err = run("-i", A, "-i", B, "-q", "--stats")
print("  rdmatrace-dump -i A.rdt -i B.rdt --stats (alignment auto) said on stderr:")
for l in err.splitlines():
    if l.startswith("clock"):
        print("    " + l)
m = re.search(r"clock offset (\S+) - (\S+): (-?[\d.]+) us \(± ([\d.]+) us, from (\d+) message pairs\)", err)
check(rc == 0 and m is not None, "an offset estimated from message pairs")
if m:
    x, y, n = float(m.group(3)) * 1e3, float(m.group(4)) * 1e3, int(m.group(5))
    print("  estimate %+.3f us ± %.3f us from %d pairs; truth %+.3f us: off by %.3f us" % (
        x / 1e3, y / 1e3, n, truth / 1e3, (x - truth) / 1e3))
    check(x - y <= hi and lo <= x + y,
          "the truth [%+.3f, %+.3f] us lies within the estimate's interval [%+.3f, %+.3f] us" % (
              lo / 1e3, hi / 1e3, (x - y) / 1e3, (x + y) / 1e3))
    check(y < 1e6, "the estimate's error %.3f us is below 1 ms" % (y / 1e3))
v = re.search(r"cross-host messages: (\d+) matched, (\d+) received before sent", stats)
check(v is not None and int(v.group(1)) > 0 and v.group(2) == "0",
      "aligned: %s cross-host messages matched, %s received before sent (want 0)" % (
          v.group(1) if v else "?", v.group(2) if v else "?"))
rc, hstats, herr = run("-i", A, "-i", B, "-q", "--stats", "--clock-align=header")
h = re.search(r"cross-host messages: (\d+) matched, (\d+) received before sent", hstats)
check(rc == 0 and h is not None and int(h.group(2)) > 0,
      "header offsets only (--clock-align=header): %s matched, %s received before sent (want > 0)" % (
          h.group(1) if h else "?", h.group(2) if h else "?"))


def union(iv, lo, hi):
    """Length of the union of intervals iv, clipped to [lo, hi]."""
    tot, cur_s, cur_e = 0, None, None
    for s_, e_ in sorted((max(a, lo), min(b, hi)) for a, b in iv if b > lo and a < hi):
        if cur_e is None or s_ > cur_e:
            if cur_e is not None:
                tot += cur_e - cur_s
            cur_s, cur_e = s_, e_
        else:
            cur_e = max(cur_e, e_)
    if cur_e is not None:
        tot += cur_e - cur_s
    return tot


def minus(iv, cut, lo, hi):
    """|union(iv) - union(cut)| within [lo, hi]."""
    both = [(max(a, c), min(b, d)) for a, b in iv for c, d in cut if min(b, d) > max(a, c)]
    return union(iv, lo, hi) - union(both, lo, hi)


def time_split():
    rc, txt, err = run("-i", A, "-i", B, "-F", "json", "--type", "rxe_xmit,rxe_rcv,coll_mark")
    if rc:
        print("  (rdmatrace-dump -F json failed: %s)" % err.strip()[:200])
        return
    ev = [json.loads(l) for l in txt.splitlines() if l.startswith("{")]
    role = {}
    for e in ev:
        if e["type"] == "rxe_xmit":
            role.setdefault(e["host"], {IP["A"]: "A", IP["B"]: "B"}.get(e.get("saddr")))
    xmit, rcv = {}, {}
    for e in ev:
        key = (e.get("qpn"), e.get("psn"), e.get("bth_opcode"))
        if e["type"] not in ("rxe_xmit", "rxe_rcv") or key[2] >= 0x20:
            continue	# not a packet, or not RC (UD/UC: no unique key)
        if e["type"] == "rxe_xmit" and e.get("daddr") != e.get("saddr"):
            xmit.setdefault(key, []).append((e["ts_ns"], role.get(e["host"])))
        elif e["type"] == "rxe_rcv":
            rcv.setdefault(key + (role.get(e["host"]),), []).append(e["ts_ns"])
    flight = {"A": [], "B": []}	# by sender
    for key, xs in xmit.items():
        for h in "AB":
            # QPNs repeat across hosts: the receives on the other host only.
            # The first send and the first receive of a key, as the
            # alignment pairs them (a retransmit is later than both).
            tx = [t for t, hx in xs if hx == h]
            tr = rcv.get(key + ("B" if h == "A" else "A",))
            if tx and tr:
                flight[h].append((min(tx), min(tr)))
    oneway = {h: sorted(b - a for a, b in flight[h]) for h in "AB"}
    for h, o in (("A", "B"), ("B", "A")):
        d = oneway[h]
        if d:
            print("  %s -> %s: %d packets, one-way (xmit to rcv, aligned) min %.1f us, median %.1f us" % (
                h, o, len(d), d[0] / 1e3, d[len(d) // 2] / 1e3))
    coll = {}
    for e in ev:
        if e["type"] == "coll_mark":
            c = coll.setdefault(e["seq"], {"bytes": e["bytes"], "ranks": {}})
            c["ranks"].setdefault(e["rank"], {})[e["phase"]] = e["ts_ns"]
    nl = int(re.search(r"NLOCAL=(\d+)", open(os.path.join(out, "A.env")).read()).group(1))
    print("  per collective (us): span = first begin to last end of any rank; wire = some packet"
          " in flight between the hosts; A, B = that host's ranks inside the collective, nothing"
          " of theirs on the wire")
    print("  %4s %9s %10s %10s %10s %10s %10s %10s" % (
        "seq", "bytes", "span", "wire", "A->B", "B->A", "A only", "B only"))
    for seq in sorted(coll):
        c = coll[seq]
        rk = {r: v for r, v in c["ranks"].items() if "begin" in v and "end" in v}
        if len(rk) != 2 * nl:
            continue
        lo = min(v["begin"] for v in rk.values())
        hi = max(v["end"] for v in rk.values())
        act = {h: [(v["begin"], v["end"]) for r, v in rk.items() if (r < nl) == (h == "A")] for h in "AB"}
        wire = flight["A"] + flight["B"]
        print("  %4d %9d %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f" % (
            seq, c["bytes"], (hi - lo) / 1e3, union(wire, lo, hi) / 1e3,
            union(flight["A"], lo, hi) / 1e3, union(flight["B"], lo, hi) / 1e3,
            minus(act["A"], wire, lo, hi) / 1e3, minus(act["B"], wire, lo, hi) / 1e3))


if split:
    print("== time split per collective (aligned timeline)")
    time_split()
print("RESULT: %s" % ("ok" if not failures else "FAIL: " + "; ".join(failures)))
sys.exit(1 if failures else 0)
