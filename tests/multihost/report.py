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
the run) within its reported error, the error is below 1 ms (and the
file headers' realtime offsets, which carry it, within 100 us), and no
cross-host message is received before it was sent; merged with the header
offsets only (--clock-align=header), some are (the skew is real).

--split adds, per collective, its time split on the merged timeline: how
long cross-host packets were in flight (xmit on one host to rcv on the
other, A->B, B->A, either), and how long each host's ranks were inside the
collective with no packet of theirs on the wire (not checked: a view)."""
import json
import os
import re
import struct
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

# Each file header's CLOCK_REALTIME - CLOCK_MONOTONIC (struct rdt_file_hdr,
# byte 16) carries every alignment onto the realtime axis: its own error
# passes into the offset whole, so it is checked on its own against the
# truth (B's real - mono less A's, from rdt-clockpair's bounds).
hdr = {}
for role, f in (("A", A), ("B", B)):
    with open(f, "rb") as fh:
        hdr[role] = struct.unpack_from("<q", fh.read(24), 16)[0]
hlo = min(c["real_lo"] - c["mono_hi"] for c in (pre, post))
hhi = max(c["real_hi"] - c["mono_lo"] for c in (pre, post))
hd = hdr["B"] - hdr["A"]
herr = max(hlo - hd, hd - hhi, 0)
check(herr <= 100e3, "the headers' realtime offsets: B - A %+.3f us, %.3f us outside the truth"
      " [%+.3f, %+.3f] us (want <= 100 us)" % (hd / 1e3, herr / 1e3, hlo / 1e3, hhi / 1e3))
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
    # The offset function at its ends (a drift line): shown against the
    # truth, not checked (the clocks of two guests of one host do not
    # drift: the truth after the run is that before it).
    d = re.search(r"clock drift \S+ - \S+: (-?[\d.]+) ppm.*?\((-?[\d.]+) us at the first message "
                  r"pair, (-?[\d.]+) us at the last", err)
    if d:
        f0, f1 = float(d.group(2)) * 1e3, float(d.group(3)) * 1e3
        moved = (post["real_lo"] + post["real_hi"] - pre["real_lo"] - pre["real_hi"]) / 2
        if "at_mono" in pre and post["at_mono"] > pre["at_mono"]:
            tdrift = "%+.4f ppm" % (moved / (post["at_mono"] - pre["at_mono"]) * 1e6)
        else:
            tdrift = "%+.3f us from before to after the run" % (moved / 1e3)
        print("  note: drift fitted %s ppm (truth: %s); offset at the first pair %+.3f us off"
              " the truth, at the last %+.3f us%s" % (
                  d.group(1), tdrift, (f0 - truth) / 1e3, (f1 - truth) / 1e3,
                  "" if max(abs(f0 - truth), abs(f1 - truth)) <= y else
                  " (beyond the reported ± %.3f us)" % (y / 1e3)))
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


def merged_events(types):
    """Both traces' events of TYPES, merged (JSON), and each host's role
    ("A" or "B", by the source address of its rxe_xmit records); None if
    rdmatrace-dump failed (said)."""
    rc, txt, err = run("-i", A, "-i", B, "-F", "json", "--type", types)
    if rc:
        print("  (rdmatrace-dump -F json failed: %s)" % err.strip()[:200])
        return None, None
    ev = [json.loads(l) for l in txt.splitlines() if l.startswith("{")]
    role = {}
    for e in ev:
        if e["type"] == "rxe_xmit":
            role.setdefault(e["host"], {IP["A"]: "A", IP["B"]: "B"}.get(e.get("saddr")))
    return ev, role


def time_split():
    ev, role = merged_events("rxe_xmit,rxe_rcv,coll_mark")
    if ev is None:
        return
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


# BTH opcodes of RC RDMA WRITE packets: a message is FIRST MIDDLE* LAST, or ONLY.
W_FIRST, W_MIDDLE, W_LAST, W_LAST_IMM, W_ONLY, W_ONLY_IMM = 6, 7, 8, 9, 10, 11


def critical_path():
    """Per collective, its slowest chunk's path through the ring, split.

    At step s rank r sends chunk k to r+1 as soon as chunk k of step s-1
    arrived from r-1 (tools/rdma-ring-allreduce/README.md): a chain of
    2(n-1) hops per (first rank, chunk).  A hop: on the sender's host from
    the chunk's arrival (its receive CQE; the collective's begin at step 0)
    to the message's first packet out (rxe_xmit), then on the wire (or rxe
    loopback, the host's) to its last packet in (rxe_rcv), then on the
    receiver's host to its receive CQE.  Messages are told apart by order:
    the i-th send CQE of a send QP (wr_id = step << 32 | chunk) is the i-th
    WRITE message in PSN order and the i-th receive CQE on the peer's
    receive QP (RC keeps order)."""
    ring = open(os.path.join(out, "A.ring.txt")).read()
    rx = re.compile(r"^# rank (\d+) pid \d+ send QP (0x[0-9a-f]+) -> rank \d+, "
                    r"recv QP (0x[0-9a-f]+) <- rank \d+", re.M)
    ranks = {int(r): (int(sq, 16), int(rq, 16)) for r, sq, rq in rx.findall(ring)}
    n = len(ranks)
    nl = n // 2
    if n < 2 or sorted(ranks) != list(range(n)):
        print("  (no rank summaries in A.ring.txt: no critical path)")
        return
    host_of = {r: "A" if r < nl else "B" for r in ranks}
    ev, role = merged_events("rxe_xmit,rxe_rcv,rxe_cqe,coll_mark")
    if ev is None:
        return
    coll = {}	# (rank, seq) -> [begin, end, bytes]
    scqe, rcqe, xm, rv = {}, {}, {}, {}
    for e in ev:
        if "ts_ns" not in e or not isinstance(e.get("host"), int):
            continue	# a file's header line, a summary
        h, t = role.get(e["host"]), e["ts_ns"]
        if e["type"] == "coll_mark":
            c = coll.setdefault((e["rank"], e["seq"]), [None, None, e["bytes"]])
            c[0 if e["phase"] == "begin" else 1] = t
        elif e["type"] == "rxe_cqe" and e.get("status") == "SUCCESS":
            if e.get("opcode") == "RDMA_WRITE":
                scqe.setdefault((h, e["qpn"]), []).append((t, int(e["wr_id"], 16)))
            elif e.get("opcode") == "RECV_RDMA_WITH_IMM":
                rcqe.setdefault((h, e["qpn"]), []).append(t)
        elif e["type"] == "rxe_xmit" and W_FIRST <= e["bth_opcode"] <= W_ONLY_IMM:
            d = xm.setdefault((h, e["src_qpn"]), {})
            if e["psn"] not in d:
                d[e["psn"]] = (t, e["bth_opcode"])
        elif e["type"] == "rxe_rcv" and W_FIRST <= e["bth_opcode"] <= W_ONLY_IMM:
            rv.setdefault((h, e["qpn"]), {}).setdefault(e["psn"], t)
    # Per rank: its messages in order, each (xmit first, rcv last, recv CQE, step, chunk, t_send_cqe).
    msgs = {}
    for r, (sq, _) in ranks.items():
        nxt = (r + 1) % n
        rq = ranks[nxt][1]
        hs, hr = host_of[r], host_of[nxt]
        pk = sorted(xm.get((hs, sq), {}).items(), key=lambda kv: kv[1][0])
        groups, cur = [], None
        for psn, (t, op) in pk:
            if op in (W_FIRST, W_ONLY, W_ONLY_IMM):
                cur = [psn, psn, t]
            elif cur is not None:
                cur[1] = psn
            if cur is not None and op in (W_LAST, W_LAST_IMM, W_ONLY, W_ONLY_IMM):
                groups.append(cur)
                cur = None
        sends = sorted(scqe.get((hs, sq), []))
        recvs = sorted(rcqe.get((hr, rq), []))
        rpk = rv.get((hr, rq), {})
        m = min(len(groups), len(sends), len(recvs))
        if not (len(groups) == len(sends) == len(recvs)):
            print("  rank %d -> %d: %d messages out, %d send CQEs, %d receive CQEs: using the first %d" % (
                r, nxt, len(groups), len(sends), len(recvs), m))
        msgs[r] = [(groups[i][2], rpk.get(groups[i][1]), recvs[i], sends[i][1] >> 32,
                    sends[i][1] & 0xffffffff, sends[i][0]) for i in range(m)]
    print("  per collective, its slowest chunk's path (us): on A, on the wire, on B (they add up"
          " to the span); of those, 'head' (in the host of the path's first rank) waits for it to"
          " begin, 'tail' (in the host of the last rank to end) from the path's end")
    print("  %4s %9s %10s  %-16s %10s %10s %10s %10s %10s" % (
        "seq", "bytes", "span", "path", "on A", "wire", "on B", "head", "tail"))
    seqs = sorted({s_ for (_, s_) in coll})
    tot = {"A": 0, "B": 0, "wire": 0}
    for seq in seqs:
        c = {r: coll.get((r, seq)) for r in ranks}
        if any(v is None or None in v[:2] for v in c.values()):
            continue
        lo = min(v[0] for v in c.values())
        hi = max(v[1] for v in c.values())
        # Index each rank's messages of this collective by (step, chunk).
        by = {}
        for r in ranks:
            b, e_, _ = c[r]
            for mm in msgs[r]:
                if b <= mm[5] <= e_:
                    by[(r, mm[3], mm[4])] = mm
        K = 1 + max((k for (_, _, k) in by), default=-1)
        best = None
        for r0 in ranks:
            for k in range(K):
                hops, ok = [], True
                for st in range(2 * (n - 1)):
                    r = (r0 + st) % n
                    mm = by.get((r, st, k))
                    if mm is None or mm[1] is None:
                        ok = False
                        break
                    hops.append((r, mm))
                if ok and (best is None or hops[-1][1][2] > best[1][-1][1][2]):
                    best = (r0, hops)
        if best is None:
            print("  %4d: no complete chunk path (records missing)" % seq)
            continue
        r0, hops = best
        split_ = {"A": 0, "B": 0, "wire": 0}
        split_[host_of[r0]] += c[r0][0] - lo	# head
        ready = c[r0][0]
        for r, (tx, trcv, tcqe, st, k, _) in hops:
            nxt = (r + 1) % n
            split_[host_of[r]] += tx - ready
            split_["wire" if host_of[r] != host_of[nxt] else host_of[r]] += trcv - tx
            split_[host_of[nxt]] += tcqe - trcv
            ready = tcqe
        last = max(ranks, key=lambda r: c[r][1])
        split_[host_of[last]] += hi - ready	# tail
        for key_ in tot:
            tot[key_] += split_[key_]
        print("  %4d %9d %10.1f  %-16s %10.1f %10.1f %10.1f %8.1f %s %8.1f %s" % (
            seq, c[0][2], (hi - lo) / 1e3, "rank %d chunk %d" % (r0, hops[0][1][4]),
            split_["A"] / 1e3, split_["wire"] / 1e3, split_["B"] / 1e3,
            (c[r0][0] - lo) / 1e3, host_of[r0], (hi - ready) / 1e3, host_of[last]))
    s_ = sum(tot.values())
    if s_:
        print("  all collectives: on A %.1f%%, on the wire %.1f%%, on B %.1f%%" % (
            100 * tot["A"] / s_, 100 * tot["wire"] / s_, 100 * tot["B"] / s_))


if split:
    print("== time split per collective (aligned timeline)")
    time_split()
    print("== critical path per collective (aligned timeline)")
    critical_path()
print("RESULT: %s" % ("ok" if not failures else "FAIL: " + "; ".join(failures)))
sys.exit(1 if failures else 0)
