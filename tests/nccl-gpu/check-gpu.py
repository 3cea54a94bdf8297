#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check a real NCCL job's trace against what the job itself measured.

check-gpu.py TRUTH JSON DB STATS [--bpf]

TRUTH: nccl-gpu-job's stdout (one line per timed collective, per rank);
JSON: rdmatrace-dump -F json of the trace; DB: the same as SQLite;
STATS: the last line of rdmatrace-dump -F json -q -s.  --bpf: the trace
also holds the NCCL uprobes' records (rdmatrace-dump --nccl).

What must hold, rank by rank (a rank is a process: NCCL_HOSTID makes each
its own "host" for NCCL, so they talk over NCCL's network transport):
- one np_comm_init with this rank, nranks, the profiler version NCCL took
  for its own version, and one comm_id shared by all ranks;
- one Coll per collective the job called, in its order (func, count), seq
  numbered per function from 0, stamped inside the job's own CLOCK_MONOTONIC
  window around the call;
- per Coll, kernel channels with a GPU start and stop; the GPU span
  (SQLite nccl_plugin_colls.gpu_ns) inside the job's cudaEvent time of that
  call (events recorded on the stream before and after it);
- with several ranks: send and receive ProxyOps with steps under every
  AllReduce, and the P2P Send to the next rank and Recv from the previous;
- --stats: every collective with GPU time, each rank's GPU clock pairs
  (two per kernel channel) and launches (one per Coll);
- nothing lost;
- --graph (AllReduces captured into a CUDA graph, "graph":1 lines, then
  the graph launched, GraphReplay lines): NCCL 2.28 reports a capture as
  GroupApi, CollApi (graph_captured 1; every other CollApi 0) and
  KernelLaunch only, inside the call's window; each launch of the graph
  then brings one Coll per captured call, from a proxy thread, whose parent
  is that call's CollApi, seq going on from the uncaptured ones, with its
  kernel channels and proxy ops; the GPU spans of one launch's Colls add up
  to no more than its cudaEvent time;
- --bpf: one nccl_call per NCCL call of the job, returning 0, with the
  job's count, rank and nranks;
- every event of a rank says that rank.  NCCL leaves the rank of GroupApi,
  CollApi, P2pApi, KernelLaunch, Group, ProxyCtrl and KernelCh descriptors
  at 0 in every rank; the plugin takes it from the communicator (issue 31).
"""
import collections
import json
import sqlite3
import sys


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def expect_abi(version):
    # NCCL 2.28 looks up ncclProfiler_v5 first, 2.27 v4, 2.26 v3, 2.24 v2
    if version >= 22800:
        return 5
    if version >= 22700:
        return 4
    if version >= 22600:
        return 3
    if version >= 22400:
        return 2
    return 1


args = [a for a in sys.argv[1:] if not a.startswith("--")]
bpf = "--bpf" in sys.argv
# the types whose descriptor NCCL gives no rank (src/plugin/profiler.cc)
NO_RANK = {"np_group_api", "np_coll_api", "np_p2p_api", "np_kernel_launch",
           "np_group", "np_proxy_ctrl", "np_kernel_ch"}
EVENTS = NO_RANK | {"np_coll", "np_p2p", "np_proxy_op", "np_proxy_step",
                    "np_net_ib", "np_net_sock", "np_net"}
truth_f, json_f, db_f, stats_f = args
truth = [json.loads(l) for l in open(truth_f) if l.startswith("{")]
calls = collections.defaultdict(list)
replays = []
done = {}
for t in truth:
    if t.get("done"):
        done[t["pid"]] = t
    elif t["func"] == "GraphReplay":
        replays.append(t)
    else:
        calls[t["pid"]].append(t)
nranks = len(done)
if nranks == 0:
    fail("the job finished no rank")
version = next(iter(done.values()))["nccl_version"]
abi = expect_abi(version)
ev = [json.loads(l) for l in open(json_f)]
np = [e for e in ev if e.get("source") == "nccl-plugin"]
by_pid = collections.defaultdict(list)
for e in np:
    by_pid[e["pid"]].append(e)
if set(by_pid) != set(done):
    fail(f"plugin records from pids {sorted(by_pid)}, ranks were {sorted(done)}")

comm_ids = set()
report = []
for pid, d in sorted(done.items(), key=lambda x: x[1]["rank"]):
    r = d["rank"]
    mine = by_pid[pid]
    inits = [e for e in mine if e["type"] == "np_comm_init"]
    if len(inits) != 1:
        fail(f"rank {r}: {len(inits)} np_comm_init")
    ci = inits[0]
    if (ci["rank"], ci["nranks"], ci["abi"]) != (r, nranks, abi):
        fail(f"rank {r}: comm init {ci}, want rank {r} nranks {nranks} abi {abi} (NCCL {version})")
    comm_ids.add(ci["comm_id"])
    held = [e for e in mine if e["type"] in EVENTS]
    if not any(e["type"] in NO_RANK for e in held):
        fail(f"rank {r}: no event of the types NCCL gives no rank")
    wrong = collections.Counter(e["type"] for e in held if e["rank"] != r)
    if wrong:
        fail(f"rank {r}: events that say another rank: {dict(wrong)}")
    capi = {e["id"]: e for e in mine if e["type"] == "np_coll_api"}
    allc = [e for e in mine if e["type"] == "np_coll"]
    seqs = collections.Counter()
    for c in allc:
        if c["seq"] != seqs[c["func"]]:
            fail(f"rank {r}: {c['func']} seq {c['seq']}, want {seqs[c['func']]}")
        seqs[c["func"]] += 1
    graphed = [c for c in allc if abi >= 5 and capi[c["parent"]]["graph_captured"]]
    colls = [c for c in allc if c not in graphed]
    want = [c for c in calls[pid] if c["func"] != "SendRecv" and not c.get("graph")]
    gwant = [c for c in calls[pid] if c.get("graph")]
    greps = [t for t in replays if t["pid"] == pid]
    if len(colls) != len(want):
        fail(f"rank {r}: {len(colls)} Coll events, the job made {len(want)} collectives")
    for c, w in zip(colls, want):
        fine = c["func"] == w["func"] and (
            (c["count"], c["datatype"]) == (w["count"], "ncclFloat32") or
            (c["count"], c["datatype"]) == (w["bytes"], "ncclInt8"))
        if not fine:
            fail(f"rank {r}: Coll {c['func']} {c['count']} {c['datatype']}, the job called {w}")
        if not w["enq_start_ns"] <= c["ts_ns"] <= w["enq_end_ns"]:
            fail(f"rank {r}: Coll at {c['ts_ns']}, outside the call "
                 f"[{w['enq_start_ns']}, {w['enq_end_ns']}]")
        if c["comm_id"] != ci["comm_id"]:
            fail(f"rank {r}: Coll of comm {c['comm_id']}")
    ids = {c["id"]: w for c, w in zip(colls, want)}
    kch = [e for e in mine if e["type"] == "np_kernel_ch"]
    kstop = {e["id"] for e in mine if e["type"] == "np_state" and e["state"] == "KernelChStop"}
    if gwant and abi >= 5:
        gapi = sorted((e for e in capi.values() if e["graph_captured"]),
                      key=lambda e: e["ts_ns"])
        if len(gapi) != len(gwant):
            fail(f"rank {r}: {len(gapi)} captured CollApi, the job captured {len(gwant)}")
        for a, w in zip(gapi, gwant):
            if (a["func"], a["count"]) != (w["func"], w["count"]) or \
               not w["enq_start_ns"] <= a["ts_ns"] <= w["enq_end_ns"]:
                fail(f"rank {r}: captured CollApi {a}, the job captured {w}")
        if len(graphed) != len(gwant) * len(greps):
            fail(f"rank {r}: {len(graphed)} Colls of graph launches, want "
                 f"{len(gwant)} x {len(greps)}")
        for k, c in enumerate(graphed):
            if c["parent"] != gapi[k % len(gapi)]["id"] or \
               (c["func"], c["count"]) != (gwant[0]["func"], gwant[0]["count"]):
                fail(f"rank {r}: graph launch Coll {c}")
    for c in colls + graphed:
        ks = [k for k in kch if k["parent"] == c["id"]]
        if not ks or any(k["gpu_start"] == 0 or k["id"] not in kstop for k in ks):
            fail(f"rank {r}: Coll {c['func']} seq {c['seq']}: kernel channels {ks}")
    if nranks > 1:
        ops = collections.defaultdict(set)
        steps = collections.Counter(e["parent"] for e in mine if e["type"] == "np_proxy_step")
        for e in mine:
            if e["type"] == "np_proxy_op":
                if not steps[e["id"]]:
                    fail(f"rank {r}: ProxyOp {e['id']} without steps")
                ops[e["parent"]].add(e["is_send"])
        for c in colls + graphed:
            if c["func"] == "AllReduce" and ops[c["id"]] != {0, 1}:
                fail(f"rank {r}: AllReduce seq {c['seq']}: ProxyOps is_send {ops[c['id']]}")
        p2p = sorted((e["func"], e["peer"], e["count"]) for e in mine if e["type"] == "np_p2p")
        sr = [c for c in calls[pid] if c["func"] == "SendRecv"]
        if sr:
            cnt = sr[0]["count"]
            wp = sorted([("Recv", (r + nranks - 1) % nranks, cnt), ("Send", (r + 1) % nranks, cnt)])
            if p2p != wp:
                fail(f"rank {r}: P2P {p2p}, want {wp}")

    # GPU time against the job's cudaEvents, from the SQLite view
    db = sqlite3.connect(db_f)
    rows = db.execute("SELECT ev_id, func, gpu_ns FROM nccl_plugin_colls "
                      "WHERE pid = ? ORDER BY start_ns", (pid,)).fetchall()
    if len(rows) != len(allc):
        fail(f"rank {r}: {len(rows)} nccl_plugin_colls rows, {len(allc)} Colls")
    worst = 0.0
    gns = {c["id"]: 0 for c in graphed}
    for ev_id, func, gpu_ns in rows:
        if ev_id in gns:
            gns[ev_id] = gpu_ns or 0
            continue
        w = ids[ev_id]
        ev_ns = w["gpu_us"] * 1000
        if not gpu_ns or gpu_ns <= 0 or gpu_ns > ev_ns * 1.01 + 20000:
            fail(f"rank {r}: {func} GPU {gpu_ns} ns by the plugin, {ev_ns:.0f} ns by cudaEvents")
        worst = max(worst, gpu_ns / ev_ns)
    n = len(gwant)
    for k, t in enumerate(greps):
        spent = sum(gns[c["id"]] for c in graphed[k * n:(k + 1) * n])
        if not 0 < spent <= t["gpu_us"] * 1000 * 1.01 + 20000:
            fail(f"rank {r}: graph launch {k}: GPU {spent} ns by the plugin, "
                 f"{t['gpu_us']:.1f} us by cudaEvents")
        worst = max(worst, spent / (t["gpu_us"] * 1000))
    report.append(f"rank {r} (pid {pid}): {len(colls)} Colls, {len(graphed)} of "
                  f"{len(greps)} graph launches, {len(kch)} kernel channels, "
                  f"GPU span / cudaEvent time <= {worst:.3f}")

    if bpf:
        nc = [e for e in ev if e.get("source") == "bpf" and e["type"] == "nccl_call"
              and e["pid"] == pid and e["fn"] in
              ("ncclAllReduce", "ncclBroadcast", "ncclAllGather", "ncclSend", "ncclRecv")]
        wantc = []
        for c in calls[pid]:
            if c["func"] == "SendRecv":
                wantc += [("ncclSend", c["count"]), ("ncclRecv", c["count"])]
            else:
                wantc.append(("nccl" + c["func"], c["count"]))
        got = [(e["fn"], e["count"]) for e in nc]
        if got != wantc:
            fail(f"rank {r}: uprobes saw {got}, the job called {wantc}")
        bad = [e for e in nc if (e["ret"], e["rank"], e["nranks"]) != (0, r, nranks)]
        if bad:
            fail(f"rank {r}: uprobe records {bad[:2]}")
        report.append(f"rank {r}: {len(nc)} NCCL calls by uprobe, ret 0")

if len(comm_ids) != 1:
    fail(f"ranks in different communicators: {comm_ids}")
st = json.loads(open(stats_f).read())
npst = st["nccl_plugin"]
for f in npst["collectives"]:
    if f["gpu_count"] != f["count"]:
        fail(f"--stats: {f['func']}: {f['gpu_count']} of {f['count']} with GPU time")
total = sum(f["count"] for f in npst["collectives"])
if total != sum(1 for e in np if e["type"] == "np_coll"):
    fail(f"--stats: {total} collectives")
for g in npst["gpu_clocks"]:
    mine = by_pid[g["pid"]]
    nk = sum(1 for e in mine if e["type"] == "np_kernel_ch")
    nc = sum(1 for e in mine if e["type"] == "np_coll")
    if g["pairs"] != 2 * nk or g["launches"] != nc:
        fail(f"--stats GPU clock {g}: {nk} kernel channels, {nc} Colls")
print(f"NCCL {version}: profiler v{abi}, {nranks} rank(s), comm {comm_ids.pop()}")
for line in report:
    print(line)
for g in npst["gpu_clocks"]:
    print(f"pid {g['pid']}: GPU clock from {g['pairs']} pairs, launch "
          f"{g['launch_avg_ns'] / 1000:.1f} us on average")
