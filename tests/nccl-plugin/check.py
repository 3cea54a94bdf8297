#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compare what np-driver made the plugin record (--truth lines) with what
rdmatrace-dump shows, in JSON Lines (--json), SQLite (--sqlite) or text
(--text): every field of every event, every state (with a v1..v3 ProxyOp
state's steps) and stop, a v1/v2 Coll's np_coll_old record (exactly the
fields its version has; none in v3..v5), the parent links, and the loss:
records shown + records lost == records made.

--complete: nothing may be lost (the reader kept up).
--slots N: the reader was absent and every ring holds N records: each
thread's first N records are there and the rest are lost, exactly.
"""
import argparse
import collections
import json
import re
import sqlite3
import sys

PLUGIN_TYPES = None  # np_* start types, from the truth


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def num(v):
    """Dump values: hex strings, numbers, strings; compare as the truth."""
    if isinstance(v, str) and v.startswith("0x"):
        return int(v, 16)
    return v


def load_truth(path):
    return [json.loads(line) for line in open(path)]


def from_json(path):
    recs, summary = [], None
    for line in open(path):
        j = json.loads(line)
        if j.get("type") == "summary":
            summary = j
        else:
            recs.append(j)
    if summary is None:
        fail(f"{path}: no summary line")
    return recs, summary


def from_sqlite(path):
    db = sqlite3.connect(path)
    recs = []
    for (ts, pid, tid, typ, ev_id, parent, comm_id, rank, fields,
         comm) in db.execute(
            "SELECT ts_ns, pid, tid, type, ev_id, parent, comm_id, rank, "
            "fields, comm FROM nccl_plugin ORDER BY ts_ns, id"):
        j = json.loads(fields)
        # the columns must say what the fields say
        for k, col in (("id", ev_id), ("parent", parent),
                       ("comm_id", comm_id)):
            if int(j[k], 16) != int(col, 16):
                fail(f"sqlite: column {k} {col} != fields {j[k]}")
        if j["rank"] != rank:
            fail(f"sqlite: rank column {rank} != fields {j['rank']}")
        j.update(type=typ, pid=pid, tid=tid, ts_ns=ts, comm=comm)
        recs.append(j)
    lost = sum(r[0] for r in db.execute(
        "SELECT count FROM lost_events WHERE producer = 'nccl-plugin'"))
    return recs, {"lost": lost}, db


TEXT_RE = re.compile(r"^\s*(\d+\.\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s*(.*)$")


def from_text(path):
    recs, lost = [], 0
    for line in open(path):
        if line.startswith("#"):
            continue
        m = TEXT_RE.match(line.rstrip("\n"))
        if not m:
            fail(f"text: cannot parse {line!r}")
        typ = m.group(6)
        j = {"type": typ, "pid": int(m.group(3))}
        # values have no spaces except the names NCCL gave; split on key=
        for k, v in re.findall(r"(\w+)=(\S*)", m.group(7)):
            try:
                j[k] = int(v, 0)
            except ValueError:
                j[k] = v
        if typ == "lost" and j.get("producer") == "nccl-plugin":
            lost += j["count"]
        recs.append(j)
    return recs, {"lost": lost}


GPU_CLOCK_AHEAD = 1700000000000000000
SCHEMA = __file__.rsplit("/tests/", 1)[0] + "/lib/SCHEMA.md"


def check_joins(truth, db):
    """The views of lib/sink_sqlite.c against the tree the driver made."""
    ev = {int(t["id"], 16): t for t in truth if t["op"] == "start"}
    stop_gpu = {int(t["id"], 16): t["arg"] for t in truth
                if t["op"] == "state" and t["state_id"] == 22}
    # the GPU clock: host time - GPU stamp is never below -AHEAD (the
    # driver's GPU runs AHEAD ahead of CLOCK_MONOTONIC), and the quickest
    # report is well under 50 ms late even on a loaded host
    for (off, pairs) in db.execute(
            "SELECT offset_ns, pairs FROM nccl_plugin_gpu_clock"):
        want = sum(1 for t in ev.values() if t["type"] == "np_kernel_ch")
        if not -GPU_CLOCK_AHEAD <= off < -GPU_CLOCK_AHEAD + 50000000:
            fail(f"sqlite: GPU clock offset {off}, want -{GPU_CLOCK_AHEAD} "
                 f"+ [0, 50 ms)")
        if pairs != 2 * want:
            fail(f"sqlite: GPU clock from {pairs} pairs, want {2 * want}")
    # v1, v2: a Coll's fields v5 lacks (np_coll_old), NULL where none
    more = {int(t["id"], 16): t["fields"] for t in truth if t["op"] == "more"}
    extra = OLD_FIELDS
    rows = db.execute(
        "SELECT ev_id, func, seq, count, gpu_ns, wrs, wr_bytes, "
        "slowest_step_ns, duration_ns, " + ", ".join(extra) +
        " FROM nccl_plugin_colls").fetchall()
    colls = [i for i, t in ev.items() if t["type"] == "np_coll"]
    if len(rows) != len(colls):
        fail(f"sqlite: nccl_plugin_colls has {len(rows)} rows, want "
             f"{len(colls)}")
    for (cid, func, seq, count, gpu_ns, wrs, wr_bytes, slow, dur,
         *old) in rows:
        cid = int(cid, 16)
        t = ev[cid]
        f = t["fields"]
        if (func, seq, count) != (f["func"], f["seq"], f["count"]):
            fail(f"sqlite: collective {cid:#x}: {func} {seq} {count}")
        want_old = [more.get(cid, {}).get(k) for k in extra]
        if old != want_old:
            fail(f"sqlite: collective {cid:#x}: {extra} {old}, want "
                 f"{want_old}")
        ks = [i for i, k in ev.items()
              if k["type"] == "np_kernel_ch" and int(k["parent"], 16) == cid]
        # v4, v5: the GPU timer; v3: KernelCh without it; v1, v2: none
        want_gpu = (max(stop_gpu[k] for k in ks) -
                    min(ev[k]["fields"]["gpu_start"] for k in ks)
                    if ks and all(k in stop_gpu for k in ks) else None)
        if gpu_ns != want_gpu and not (want_gpu is None and gpu_ns == 0):
            fail(f"sqlite: collective {cid:#x} GPU time {gpu_ns}, want {want_gpu}")
        mine = [w for w in ev.values() if w["type"] == "np_net_ib" and
                int(ev[int(ev[int(w["parent"], 16)]["parent"], 16)]["parent"],
                    16) == cid]
        if wrs != len(mine) or (wr_bytes or 0) != sum(w["fields"]["length"]
                                                      for w in mine):
            fail(f"sqlite: collective {cid:#x}: {wrs} WRs {wr_bytes} bytes, "
                 f"want {len(mine)}")
        if slow is None or dur is None or slow <= 0:
            fail(f"sqlite: collective {cid:#x}: no slowest step / duration")
    # lib/SCHEMA.md's example queries on the same database
    doc = open(SCHEMA).read()
    qs = dict(re.findall(r"```sql\n-- query: (\w+)\n(.*?)```", doc, re.S))
    if len(db.execute(qs["np_collectives"]).fetchall()) != len(colls):
        fail("SCHEMA.md np_collectives: one row per collective")
    nwr = sum(1 for t in ev.values() if t["type"] == "np_net_ib")
    rows = db.execute(qs["np_wrs_per_qp"]).fetchall()
    if sum(r[3] for r in rows) != nwr:
        fail(f"SCHEMA.md np_wrs_per_qp: {rows}")
    first = min(colls, key=lambda i: f"0x{i:016x}")
    kids = collections.defaultdict(list)
    for i, t in ev.items():
        kids[int(t["parent"], 16)].append(i)
    n, todo = 0, [first]
    while todo:
        n += 1
        todo += kids[todo.pop()]
    got = len(db.execute(qs["np_tree"]).fetchall())
    if got != n:
        fail(f"SCHEMA.md np_tree: {got} events, the driver made {n}")


OLD_FIELDS = ("op", "traffic_bytes", "is_collnet", "is_nvls")


def same_event(where, t, r, exact=()):
    """r shows what truth line t made: its ids, every field the driver
    passed, its thread; each key of exact is shown iff t has it."""
    what = f"{t['type']} {t['id']}"
    for k in ("parent", "comm_id"):
        if num(r[k]) != int(t[k], 16):
            fail(f"{where}: {what} {k} {r[k]} != {t[k]}")
    if r["rank"] != t["rank"]:
        fail(f"{where}: {what} rank {r['rank']} != {t['rank']}")
    for k in exact:
        if (k in r) != (k in t["fields"]):
            fail(f"{where}: {what}: field {k} "
                 f"{'shown' if k in r else 'missing'}")
    for k, v in t["fields"].items():
        if k not in r:
            fail(f"{where}: {what} has no field {k}")
        if num(r[k]) != num(v):
            fail(f"{where}: {what} {k}={r[k]!r}, want {v!r}")
    if "tid" in r and r["tid"] != t["tid"]:
        fail(f"{where}: {what} tid {r['tid']} != {t['tid']}")


def check(truth, recs, lost, args, where):
    np_recs = [r for r in recs if str(r.get("type", "")).startswith("np_")]
    if not np_recs:
        fail(f"{where}: no plugin records at all")
    by_id = {}
    starts = {}
    states = collections.Counter()
    stops = collections.Counter()
    skips = collections.Counter()
    comms = {}
    olds = {}
    for r in np_recs:
        t = r["type"]
        if t in ("np_comm_init", "np_comm_fini"):
            comms[(t, num(r["comm_id"]))] = r
        elif t == "np_coll_old":
            i = num(r["id"])
            if i in olds:
                fail(f"{where}: np_coll_old {i:#x} twice")
            olds[i] = r
        elif t == "np_state":
            # steps: shown only where non-zero (v1..v3 ProxyOp states)
            states[(num(r["id"]), r["state_id"], r["arg"],
                    r.get("steps", 0))] += 1
        elif t == "np_stop":
            stops[num(r["id"])] += 1
        elif t == "np_skip":
            skips[(num(r["raw_type"]), r["why"])] += 1
        else:
            i = num(r["id"])
            if i in starts:
                fail(f"{where}: event id {i:#x} started twice")
            starts[i] = r
    made = 0
    want_states = collections.Counter()
    want_stops = collections.Counter()
    want_skips = collections.Counter()
    want_olds = set()
    checked = 0
    for t in truth:
        op = t["op"]
        made += 1
        if op == "more":
            # a v1/v2 Coll's extra fields: its ids, exactly the fields
            # its version has
            want_olds.add(int(t["id"], 16))
            r = olds.get(int(t["id"], 16))
            if r is None:
                continue  # lost: counted below
            if r.get("event") != "Coll":
                fail(f"{where}: np_coll_old {t['id']}: event {r.get('event')}")
            same_event(where, t, r, OLD_FIELDS)
            checked += 1
        elif op == "start":
            r = starts.get(int(t["id"], 16))
            if r is None:
                continue  # lost: counted below
            if r["type"] != t["type"]:
                fail(f"{where}: {t['id']} is {r['type']}, want {t['type']}")
            same_event(where, t, r)
            checked += 1
        elif op == "state":
            want_states[(int(t["id"], 16), t["state_id"], t["arg"],
                         t.get("steps", 0))] += 1
        elif op == "stop":
            want_stops[int(t["id"], 16)] += 1
        elif op == "skip":
            want_skips[(t["raw_type"], t["why"])] += 1
        elif op == "comm_init":
            r = comms.get(("np_comm_init", int(t["comm_id"], 16)))
            if r is None:
                continue
            for k, v in t["fields"].items():
                if num(r[k]) != v:
                    fail(f"{where}: comm_init {k}={r[k]!r}, want {v!r}")
            checked += 1
    got = len(np_recs)
    # every record shown is one the driver made, and none twice; an
    # np_coll_old only for a v1/v2 Coll (never in v3..v5) and with it
    for i in olds:
        if i not in want_olds:
            fail(f"{where}: np_coll_old {i:#x} the driver did not make")
        if i not in starts or starts[i]["type"] != "np_coll":
            if args.complete:
                fail(f"{where}: np_coll_old {i:#x} without its Coll")
    for key, n in states.items():
        if n > want_states[key]:
            fail(f"{where}: state {key} shown {n}, made {want_states[key]}")
    for key, n in stops.items():
        if n > want_stops[key]:
            fail(f"{where}: stop {key:#x} shown {n}, made {want_stops[key]}")
    if skips != want_skips and (args.complete or
                                any(skips[k] > want_skips[k] for k in skips)):
        fail(f"{where}: skipped descriptors {dict(skips)}, "
             f"made {dict(want_skips)}")
    if args.complete:
        if states != want_states:
            fail(f"{where}: states differ: missing "
                 f"{list((want_states - states).items())[:3]}")
        if stops != want_stops:
            fail(f"{where}: stops differ: missing "
                 f"{list((want_stops - stops).items())[:3]}")
        if set(olds) != want_olds:
            fail(f"{where}: np_coll_old for {len(olds)} collectives, "
                 f"want {len(want_olds)}")
        if got != made:
            fail(f"{where}: {got} records, the driver made {made}")
        # the tree: every parent the driver passed is an event shown
        for i, r in starts.items():
            p = num(r["parent"])
            if p and p not in starts:
                fail(f"{where}: {r['type']} {i:#x}: parent {p:#x} not shown")
        ib = [r for r in starts.values() if r["type"] == "np_net_ib"]
        for r in ib:
            step = starts[num(r["parent"])]
            op = starts[num(step["parent"])]
            coll = starts[num(op["parent"])]
            if (step["type"], op["type"], coll["type"]) != (
                    "np_proxy_step", "np_proxy_op", "np_coll"):
                fail(f"{where}: WR {r['id']} is not under step/op/coll")
        if lost:
            fail(f"{where}: {lost} lost where none may be")
    # The loss is exact: shown + lost == made (the thread name records
    # the plugin adds are not in the truth: not counted here).
    if got + lost != made:
        fail(f"{where}: {got} shown + {lost} lost != {made} made")
    if args.slots:
        # reader absent: each thread's ring kept its first N records (one
        # of them the thread's name), the rest were refused
        per_tid = collections.Counter(t["tid"] for t in truth)
        shown = collections.Counter(r["tid"] for r in np_recs)
        for tid, n in per_tid.items():
            want = min(n, args.slots - 1)
            if shown[tid] != want:
                fail(f"{where}: tid {tid}: {shown[tid]} records kept, want "
                     f"{want} of {n} in a ring of {args.slots}")
        want_lost = sum(max(0, n - (args.slots - 1)) for n in per_tid.values())
        if lost != want_lost:
            fail(f"{where}: lost {lost}, want exactly {want_lost}")
    print(f"{where}: {got} plugin records ({checked} starts checked field by "
          f"field), {lost} lost, {made} made")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("truth")
    ap.add_argument("--json")
    ap.add_argument("--sqlite")
    ap.add_argument("--text")
    ap.add_argument("--complete", action="store_true")
    ap.add_argument("--slots", type=int, default=0)
    ap.add_argument("--pid", type=int, default=0,
                    help="only this process's records (others: --fork)")
    args = ap.parse_args()
    truth = load_truth(args.truth)
    if args.json:
        recs, summary = from_json(args.json)
        if args.pid:
            recs = [r for r in recs if r.get("pid") == args.pid]
        lost = sum(r["count"] for r in recs
                   if r["type"] == "lost" and r["producer"] == "nccl-plugin")
        sl = sum(s.get("lost_nccl_plugin", 0) for s in summary["sources"])
        if sl != lost:
            fail(f"json: summary says {sl} lost, LOST records {lost}")
        check(truth, recs, lost, args, "json")
        # thread names: every tid that made a record is named
        for r in recs:
            if r["type"].startswith("np_") and not r["comm"]:
                fail(f"json: tid {r['tid']} has no name")
    if args.sqlite:
        recs, summary, db = from_sqlite(args.sqlite)
        check(truth, recs, summary["lost"], args, "sqlite")
        if args.complete:
            # the WR view joins each WR to its collective
            n, nocoll = db.execute(
                "SELECT count(*), sum(coll_id IS NULL) FROM nccl_plugin_wrs"
            ).fetchone()
            want = sum(1 for t in truth if t.get("type") == "np_net_ib")
            if n != want or nocoll:
                fail(f"sqlite: nccl_plugin_wrs has {n} WRs ({nocoll} without "
                     f"a collective), want {want}")
            bad = db.execute(
                "SELECT count(*) FROM nccl_plugin_wrs WHERE latency_ns IS NULL"
                " OR latency_ns < 0").fetchone()[0]
            if bad:
                fail(f"sqlite: {bad} WRs without a post -> completion latency")
            check_joins(truth, db)
    if args.text:
        recs, summary = from_text(args.text)
        check(truth, recs, summary["lost"], args, "text")


if __name__ == "__main__":
    main()
