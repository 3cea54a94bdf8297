#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The terminal report of `make demo`, from OUTDIR/trace.db (SQLite sink of
rdmatrace-dump, lib/SCHEMA.md) plus the ring's own summary (ring.txt: each
rank's pid and QPNs) and run.env (the kernel workload's QPNs):

  QP lifecycles, per-WR latency percentiles per QP, per-collective busbw,
  the port counters that moved (rxe's received packets against BPF's),
  drops, and the acceptance check: every collective of every rank has
  exactly the ring algorithm's 2(n-1)K sends (doorbells + send CQEs inside
  its coll_begin..coll_end window) and 2(n-1)K receive CQEs (attributed by
  order on the receive QP, since receives of seq+1 may land in seq's
  window), carrying exactly the bytes the schedule moves.

Kernel/rxe records are linked to ranks by QPN, never by pid.
Exit status: 0 when the check passes, 1 when it fails, 2 on bad input.

  scripts/demo-report.py OUTDIR
"""
import math
import os
import re
import shlex
import sqlite3
import sys

IB_QPS = ["RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"]


def die(msg):
    print(f"demo-report: {msg}", file=sys.stderr)
    sys.exit(2)


def pct(v, p):
    """Nearest-rank percentile of a sorted list."""
    if not v:
        return None
    return v[min(len(v) - 1, max(0, math.ceil(p / 100 * len(v)) - 1))]


def us(ns):
    return "-" if ns is None else f"{ns / 1000:.1f}"


def read_env(path):
    env = {}
    with open(path) as f:
        for line in f:
            for tok in shlex.split(line):
                k, _, v = tok.partition("=")
                env[k] = v
    return env


def read_ring(path):
    """Rank summaries and the chunk size from the ring's output."""
    ranks, chunk = {}, None
    rx = re.compile(r"^# rank (\d+) pid (\d+) send QP (0x[0-9a-f]+) -> rank (\d+), "
                    r"recv QP (0x[0-9a-f]+) <- rank (\d+)")
    with open(path) as f:
        for line in f:
            m = rx.match(line)
            if m:
                r = int(m.group(1))
                ranks[r] = dict(pid=int(m.group(2)), sq=int(m.group(3), 16),
                                right=int(m.group(4)), rq=int(m.group(5), 16),
                                left=int(m.group(6)))
            m = re.search(r"chunk (\d+) B", line)
            if m and chunk is None:
                chunk = int(m.group(1))
    return ranks, chunk


def ring_plan(n, count, chunk):
    """K as tools/rdma-ring-allreduce/README.md states it."""
    maxseg = (count + n - 1) // n
    k = max(1, (maxseg * 4 + chunk - 1) // chunk)
    return min(65535, maxseg, k)


def seg_len(count, n, i):
    return count // n + (1 if i < count % n else 0)


def expected_bytes(count, n, r):
    """Bytes rank r sends and receives in one collective: the reduce-scatter
    sends every segment but (r+1), the all-gather every one but (r+2); the
    receiver r gets what r-1 sends."""
    send = 2 * count - seg_len(count, n, (r + 1) % n) - seg_len(count, n, (r + 2) % n)
    recv = 2 * count - seg_len(count, n, r % n) - seg_len(count, n, (r + 1) % n)
    return 4 * send, 4 * recv


def main():
    if len(sys.argv) != 2:
        die("usage: demo-report.py OUTDIR")
    out = sys.argv[1]
    db = sqlite3.connect(f"file:{os.path.join(out, 'trace.db')}?mode=ro", uri=True)
    env = read_env(os.path.join(out, "run.env"))
    ranks, chunk = read_ring(os.path.join(out, "ring.txt"))
    n = int(env.get("NRANKS", "0"))
    if not ranks or len(ranks) != n or not chunk:
        die("ring.txt lacks the rank summaries (-v) or the chunk size")
    t0 = db.execute("SELECT min(ts_ns) FROM (SELECT ts_ns FROM verbs UNION ALL "
                    "SELECT ts_ns FROM completions UNION ALL "
                    "SELECT ts_ns FROM coll_marks)").fetchone()[0] or 0

    label = {}
    for r, x in sorted(ranks.items()):
        label[x["sq"]] = f"rank {r} send -> rank {x['right']}"
        label[x["rq"]] = f"rank {r} recv <- rank {x['left']}"
    wl_s, wl_r = int(env.get("WL_QPN_SEND", -1)), int(env.get("WL_QPN_RECV", -1))
    label[wl_s] = "rdt_workload.ko send"
    label[wl_r] = "rdt_workload.ko recv"

    def rel(ts):
        return f"{(ts - t0) / 1e9:8.4f}s"

    # ---- QP lifecycles -----------------------------------------------------
    print("== QP lifecycle (kmod: create, modify_qp, destroy; times from trace start)")
    qpns = [q for (q,) in db.execute(
        "SELECT DISTINCT qpn FROM verbs WHERE verb = 'qp_create' ORDER BY qpn")]
    for q in qpns:
        ev = []
        for ts, pid, comm in db.execute(
                "SELECT ts_ns, pid, comm FROM verbs WHERE verb='qp_create' AND qpn=?", (q,)):
            ev.append((ts, f"create({comm} pid {pid})"))
        for ts, old, new, dq in db.execute(
                "SELECT ts_ns, old_state, new_state, dest_qpn FROM qp_states "
                "WHERE qpn=? ORDER BY ts_ns", (q,)):
            ev.append((ts, f"{old}->{new}" + (f"(dest {dq})" if new == "RTR" and dq else "")))
        for (ts,) in db.execute(
                "SELECT ts_ns FROM verbs WHERE verb='qp_destroy' AND qpn=?", (q,)):
            ev.append((ts, "destroy"))
        ev.sort()
        print(f"QP {q:<4} {label.get(q, '?'):<24} " +
              "  ".join(f"{rel(t).strip()} {what}" for t, what in ev))

    # ---- per-WR latency ----------------------------------------------------
    print("\n== per-WR latency per QP, post -> completion (us)")
    print(f"{'QP':<5} {'who':<24} {'WRs':>6} {'p50':>9} {'p90':>9} {'p99':>9} {'max':>9}  matched by")
    for q in sorted(label):
        if q < 0:
            continue
        lat, how = [], ""
        if q in (wl_s, wl_r):
            lat = sorted(v for (v,) in db.execute(
                "SELECT latency_ns FROM completions WHERE qpn=? AND via='rxe' "
                "AND latency_ns IS NOT NULL", (q,)))
            how = "wr_id (kernel posts)"
        elif "send" in label[q] and db.execute(
                "SELECT count(*) FROM completions WHERE via='rxe' AND qpn=? "
                "AND latency_ns IS NOT NULL", (q,)).fetchone()[0]:
            # --verbs saw the ring's own posts: each rxe CQE and each poll
            # joined to its post by wr_id (post -> CQE here; CQE -> poll
            # in the split below)
            lat = sorted(v for (v,) in db.execute(
                "SELECT latency_ns FROM completions WHERE qpn=? AND via='rxe' "
                "AND latency_ns IS NOT NULL", (q,)))
            how = "wr_id (the ring's posts, --verbs)"
            split = sorted(p - c for p, c in db.execute(
                "SELECT p.ts_ns, c.ts_ns FROM completions p JOIN completions c "
                "ON c.qpn = p.qpn AND c.post_ts_ns = p.post_ts_ns AND c.via = 'rxe' "
                "WHERE p.qpn=? AND p.via='verbs'", (q,)))
            if split:
                how += f"; CQE -> poll p50 {us(pct(split, 50))} us over {len(split)}"
        elif "send" in label[q]:
            # rdma-core's rxe posts in userspace and rings a doorbell (an
            # empty post_send) once per ibv_post_send; the ring posts one WR
            # per call and RC completes in order: the i-th doorbell is the
            # i-th send CQE.
            db_ts = [t for (t,) in db.execute(
                "SELECT ts_ns FROM verbs WHERE verb='post_send_db' AND qpn=? "
                "ORDER BY ts_ns, id", (q,))]
            cq_ts = [t for (t,) in db.execute(
                "SELECT ts_ns FROM completions WHERE via='rxe' AND qpn=? "
                "ORDER BY ts_ns, id", (q,))]
            if len(db_ts) == len(cq_ts):
                lat = sorted(c - d for d, c in zip(db_ts, cq_ts))
                how = "order (doorbell i -> CQE i)"
            else:
                how = f"counts differ: {len(db_ts)} doorbells, {len(cq_ts)} CQEs"
        elif db.execute("SELECT count(*) FROM completions WHERE via='rxe' AND qpn=? "
                        "AND latency_ns IS NOT NULL", (q,)).fetchone()[0]:
            # --verbs saw the ring post its receives (ahead of the data)
            lat = sorted(v for (v,) in db.execute(
                "SELECT latency_ns FROM completions WHERE qpn=? AND via='rxe' "
                "AND latency_ns IS NOT NULL", (q,)))
            how = "wr_id (the ring's receives, --verbs: posted ahead, they wait for data)"
        else:
            how = "- (receives are posted in userspace: --verbs sees them)"
        if lat:
            print(f"{q:<5} {label[q]:<24} {len(lat):>6} {us(pct(lat, 50)):>9} "
                  f"{us(pct(lat, 90)):>9} {us(pct(lat, 99)):>9} {us(lat[-1]):>9}  {how}")
        else:
            nc = db.execute("SELECT count(*) FROM completions WHERE via='rxe' AND qpn=?",
                            (q,)).fetchone()[0]
            print(f"{q:<5} {label[q]:<24} {nc:>6} {'':>9} {'':>9} {'':>9} {'':>9}  {how}")

    # ---- collectives -------------------------------------------------------
    marks = {}
    for ph, by, seq, rank, nr, ts in db.execute(
            "SELECT phase, bytes, seq, rank, nranks, ts_ns FROM coll_marks"):
        marks.setdefault(seq, {}).setdefault(rank, {})[ph] = ts
        marks[seq][rank]["bytes"] = by
        marks[seq][rank]["nranks"] = nr
    seqs = sorted(marks)
    warm = int(re.search(r"-w\s*(\d+)", env.get("RING_ARGS", "-w 0") + " -w 0").group(1))
    print(f"\n== per-collective busbw (USDT coll_begin..coll_end; time = slowest rank; "
          f"busbw = algbw * 2(n-1)/n)")
    print(f"{'seq':>4} {'bytes':>9} {'K':>3} " +
          " ".join(f"{'rank' + str(r) + '_us':>10}" for r in range(n)) +
          f" {'algbw_MB/s':>10} {'busbw_MB/s':>10}")
    size_idx = {}
    for seq in seqs:
        by = next(iter(marks[seq].values()))["bytes"]
        size_idx[seq] = sum(1 for s in seqs if s < seq and
                            next(iter(marks[s].values()))["bytes"] == by)
        durs = [marks[seq].get(r, {}).get("end", 0) - marks[seq].get(r, {}).get("begin", 0)
                for r in range(n)]
        t = max(durs)
        alg = by / t * 1e3 if t > 0 else 0  # MB/s
        K = ring_plan(n, by // 4, chunk)
        print(f"{seq:>4} {by:>9} {K:>3} " + " ".join(f"{d / 1e3:>10.1f}" for d in durs) +
              f" {alg:>10.2f} {alg * 2 * (n - 1) / n:>10.2f}" +
              ("  warmup" if size_idx[seq] < warm else ""))

    # ---- acceptance --------------------------------------------------------
    print("\n== check: every collective's WRs and CQEs against the ring algorithm")
    bad = 0
    early_total = 0
    for r in range(n):
        x = ranks[r]
        left = x["left"]
        db_ts = [t for (t,) in db.execute(
            "SELECT ts_ns FROM verbs WHERE verb='post_send_db' AND qpn=? ORDER BY ts_ns", (x["sq"],))]
        # --verbs: the ring's own ibv_post_send and ibv_poll_cq of its sends
        vp_ts = [t for (t,) in db.execute(
            "SELECT ts_ns FROM verbs WHERE verb='verbs_post_send' AND qpn=? ORDER BY ts_ns",
            (x["sq"],))]
        vw_ts = [t for (t,) in db.execute(
            "SELECT ts_ns FROM completions WHERE via='verbs' AND qpn=? AND is_recv=0 "
            "AND status=0 ORDER BY ts_ns", (x["sq"],))]
        sc = [(t, st, bl, op) for t, st, bl, op in db.execute(
            "SELECT ts_ns, status, byte_len, opcode FROM completions WHERE via='rxe' AND qpn=? "
            "ORDER BY ts_ns, id", (x["sq"],))]
        rc = [(t, st, bl, op) for t, st, bl, op in db.execute(
            "SELECT ts_ns, status, byte_len, opcode FROM completions WHERE via='rxe' AND qpn=? "
            "ORDER BY ts_ns, id", (x["rq"],))]
        pos = 0
        ok_coll = 0
        tot = dict(db=0, sc=0, rc=0, want=0, vp=0, vw=0)
        for seq in seqs:
            m = marks[seq].get(r)
            if not m or "begin" not in m or "end" not in m:
                print(f"rank {r} seq {seq}: missing coll_begin/coll_end mark")
                bad += 1
                continue
            by, b, e = m["bytes"], m["begin"], m["end"]
            count = by // 4
            K = ring_plan(n, count, chunk)
            want = 2 * (n - 1) * K
            wsend, wrecv = expected_bytes(count, n, r)
            nd = sum(1 for t in db_ts if b <= t <= e)
            nvp = sum(1 for t in vp_ts if b <= t <= e)
            nvw = sum(1 for t in vw_ts if b <= t <= e)
            sw = [c for c in sc if b <= c[0] <= e]
            ns_ok = sum(1 for c in sw if c[1] == 0 and c[3] == "RDMA_WRITE")
            sbytes = sum(c[2] for c in sw)
            rw = rc[pos:pos + want]
            pos += want
            nr_ok = sum(1 for c in rw if c[1] == 0 and c[3] == "RECV_RDMA_WITH_IMM")
            rbytes = sum(c[2] for c in rw)
            lb = marks[seq].get(left, {}).get("begin")
            early = sum(1 for c in rw if c[0] < b)
            early_total += early
            errs = []
            if nd != want:
                errs.append(f"{nd} doorbells")
            if nvp != want:
                errs.append(f"{nvp} ibv_post_send WRs (--verbs)")
            if nvw != want:
                errs.append(f"{nvw} polled send completions (--verbs)")
            if len(sw) != want or ns_ok != want:
                errs.append(f"{len(sw)} send CQEs ({ns_ok} ok)")
            if sbytes != wsend:
                errs.append(f"send bytes {sbytes} != {wsend}")
            if len(rw) != want or nr_ok != want:
                errs.append(f"{len(rw)} recv CQEs ({nr_ok} ok)")
            elif rbytes != wrecv:
                errs.append(f"recv bytes {rbytes} != {wrecv}")
            elif rw[-1][0] > e:
                errs.append("last receive after coll_end")
            elif lb is None or rw[0][0] < lb:
                errs.append("first receive before the left rank's coll_begin")
            tot["db"] += nd
            tot["vp"] += nvp
            tot["vw"] += nvw
            tot["sc"] += len(sw)
            tot["rc"] += len(rw)
            tot["want"] += want
            if errs:
                bad += 1
                print(f"rank {r} seq {seq} ({by} B, want {want}): MISMATCH " + ", ".join(errs))
            else:
                ok_coll += 1
        extra = len(rc) - pos
        if extra:
            bad += 1
            print(f"rank {r}: {extra} receive CQEs beyond the last collective")
        stray = len(sc) - tot["sc"]
        if stray:
            bad += 1
            print(f"rank {r}: {stray} send CQEs outside every collective window")
        print(f"rank {r} (send QP {x['sq']}, recv QP {x['rq']}): {ok_coll}/{len(seqs)} collectives "
              f"exact; doorbells {tot['db']}, posts (--verbs) {tot['vp']}, send CQEs {tot['sc']}, "
              f"polled {tot['vw']}, recv CQEs {tot['rc']}, "
              f"expected sum 2(n-1)K = {tot['want']} each")
    print(f"receive CQEs of a collective that landed before this rank's coll_begin "
          f"(early arrivals, attributed by order): {early_total}")

    # ---- NCCL profiler plugin ------------------------------------------------
    # The ring hosts NCCL's profiler ABI: its own account of each collective
    # (Coll -> ProxyOp -> a ProxyStep per ring step -> a net-IB event per
    # WR), joined here to what BPF saw of the same QPs (rxe_cqe).
    print("\n== NCCL profiler plugin (hosted by the ring): WRs per QP "
          "against rxe completions")
    np_rows = db.execute("SELECT count(*) FROM nccl_plugin_wrs").fetchone()[0]
    if not np_rows:
        print("no plugin records: MISMATCH")
        bad += 1
    # Each plugin WR to the rxe CQE of the same QP and wr_id: a send's
    # between its post and the moment the ring polled it; a receive's
    # (ncclIbIrecv's account, told when its collective begins, maybe after
    # an early arrival) before it was polled.
    sides = (("sq", "send", "RDMA_WRITE", "c.ts_ns BETWEEN w.post_ns AND w.done_ns"),
             ("rq", "recv", "RECV_RDMA_WITH_IMM", "c.ts_ns <= w.done_ns"))
    for key, side, opcode, when in sides:
        for r in range(n):
            q = ranks[r][key]
            nw = db.execute("SELECT count(*) FROM nccl_plugin_wrs WHERE qpn=?",
                            (q,)).fetchone()[0]
            nc = db.execute("SELECT count(*) FROM completions WHERE via='rxe' AND qpn=? "
                            "AND opcode=?", (q, opcode)).fetchone()[0]
            nj = db.execute(
                "SELECT count(*) FROM nccl_plugin_wrs w WHERE w.qpn=? AND EXISTS "
                "(SELECT 1 FROM completions c WHERE c.via='rxe' AND c.qpn=w.qpn "
                f"AND c.wr_id=w.wr_id AND {when})", (q,)).fetchone()[0]
            ok = nw == nc == nj and nw > 0
            bad += not ok
            print(f"rank {r} {side} QP {q}: plugin WRs {nw}, rxe CQEs {nc}, joined by "
                  f"(qpn, wr_id, time) {nj}{'' if ok else '  MISMATCH'}")
    row = db.execute(
        "SELECT host, pid, ev_id, func, seq, count, duration_ns, wrs, wr_bytes, "
        "slowest_step_ns FROM nccl_plugin_colls ORDER BY wr_bytes DESC, start_ns "
        "LIMIT 1").fetchone()
    if row:
        h, pid, cid, func, seq, count, dur, wrs, wb, slow = row
        print(f"the largest collective as NCCL's profiler sees it (pid {pid}): {func} "
              f"#{seq}, {count} floats, {us(dur)} us, {wrs} WRs, {wb} B, "
              f"slowest step {us(slow)} us")
        for (sid, step, sdur, swrs, sb, cqes) in db.execute(
                "SELECT s.ev_id, json_extract(s.fields, '$.step'), s.duration_ns, "
                "count(w.ev_id), sum(w.length), sum((SELECT count(*) FROM completions c "
                "WHERE c.via='rxe' AND c.qpn=w.qpn AND c.wr_id=w.wr_id AND c.ts_ns "
                "BETWEEN w.post_ns AND w.done_ns)) FROM nccl_plugin_spans s "
                "JOIN nccl_plugin_spans op ON op.host=s.host AND op.pid=s.pid "
                "AND op.ev_id=s.parent JOIN nccl_plugin_wrs w ON w.host=s.host "
                "AND w.pid=s.pid AND w.step_id=s.ev_id WHERE s.type='np_proxy_step' "
                "AND json_extract(op.fields, '$.is_send') = 1 "
                "AND op.parent=? AND s.host=? AND s.pid=? GROUP BY s.ev_id "
                "ORDER BY s.start_ns", (cid, h, pid)):
            print(f"  send step {step}: {us(sdur)} us, {swrs} WRs, {sb} B, rxe CQEs {cqes}")

    # ---- port counters -------------------------------------------------------
    # What the NIC itself counted, sampled by rdmatrace-dump -f on the same
    # timeline; rxe's packet counters are set against the packets BPF saw.
    print("\n== port counters (sysfs, sampled by rdmatrace-dump -f): what moved during the run")
    moved = db.execute(
        "SELECT devname, port, name, sum(delta), count(*), dev FROM port_counters "
        "GROUP BY devname, port, dir, name HAVING sum(delta) != 0 "
        "ORDER BY devname, port, name").fetchall()
    if not moved:
        print("no port counter records: MISMATCH")
        bad += 1
    for (dn, port, name, tot_d, nrec, dev) in moved:
        extra = ""
        if name == "rcvd_pkts" and dev is not None:
            seen = db.execute("SELECT count(*) FROM rxe_packets WHERE dev=?",
                              (dev,)).fetchone()[0]
            extra = (f"  (BPF rxe_rcv saw {seen} packets on {dn}: "
                     f"{'equal' if seen == tot_d else f'differs by {seen - tot_d}'})")
        if name in ("rcvd_pkts", "sent_pkts") and dev is not None:
            # What the CQEs counted (ABI 1.15): each QP's packets up to its
            # last completion, so at most a few fewer than the NIC's.
            col = "rx_pkts" if name == "rcvd_pkts" else "tx_pkts"
            n = db.execute(f"SELECT sum({col}) FROM completions WHERE via='rxe' AND dev=?",
                           (dev,)).fetchone()[0]
            if n is not None:
                extra += f"  (rxe's CQEs counted {n})"
        print(f"{dn}/{port} {name:<28} +{tot_d} in {nrec} samples{extra}")

    # ---- drops ---------------------------------------------------------------
    lost = db.execute("SELECT coalesce(sum(lost), 0) FROM drops WHERE cpu IS NULL").fetchone()[0]
    ev = db.execute("SELECT coalesce(sum(records), 0) FROM sources").fetchone()[0]
    print(f"\n== drops: {lost} records lost of {ev} recorded "
          f"(kmod relay + BPF ring buffer, counted exactly)")
    rtx = dict(db.execute("SELECT kind, count(*) FROM rxe_retries GROUP BY kind").fetchall())
    tcp = db.execute("SELECT count(*) FROM tcp_events").fetchone()[0]
    print(f"   rxe requester retries: {sum(rtx.values())} "
          f"({', '.join(f'{k} {v}' for k, v in sorted(rtx.items())) or 'none'}), "
          f"TCP retransmits: {tcp}")
    if bad:
        print(f"\nCHECK FAILED: {bad} mismatches")
        return 1
    print(f"\nCHECK OK: {len(seqs)} collectives x {n} ranks, every one with exactly "
          f"2(n-1)K sends and receives")
    return 0


if __name__ == "__main__":
    sys.exit(main())
