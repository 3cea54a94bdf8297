#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""report.py RAW OUTDIR: turn the "R key value" lines of the bench scripts
into OUTDIR/results.json and OUTDIR/RESULTS.md (median/min/max over
repetitions, ratios traced/untraced, each target and where it stands)."""
import json, math, os, platform, statistics, subprocess, sys, time

raw, out = sys.argv[1], sys.argv[2]
vals, meta = {}, {}
for line in open(raw, errors="replace"):
    p = line.split()
    if len(p) == 3 and p[0] == "R":
        try:
            v = float(p[2])
        except ValueError:
            continue
        if math.isfinite(v):
            vals.setdefault(p[1], []).append(v)
    elif len(p) >= 3 and p[0] == "M":
        meta[p[1]] = " ".join(p[2:])

def stat(k):
    v = vals.get(k)
    if not v:
        return None
    return {"median": statistics.median(v), "min": min(v), "max": max(v), "n": len(v)}

figs = {k: stat(k) for k in sorted(vals)}

def med(k):
    s = figs.get(k)
    return s["median"] if s else None

def ratio(a, b):
    a, b = med(a), med(b)
    return a / b if a is not None and b else None

derived, targets = {}, []
# Figure 1 and its variants (bench/kmod-variants.sh: variants.NAME.*),
# each mode over the untraced run of the same guests.
for pre in ["verbs.icount", "verbs.tcg"] + sorted(
        {k.rsplit(".", 2)[0] for k in vals if k.startswith("variants.")}):
    for mode in ("disabled", "enabled", "enabled_ktime", "enabled_cqe"):
        for m in ("verb_ns", "post_send_ns", "post_recv_ns", "poll_cq_hit_ns"):
            a, b = med(f"{pre}.{mode}.{m}"), med(f"{pre}.none.{m}")
            if a is not None and b is not None:
                derived[f"{pre}.{mode}.added_{m}"] = a - b
                derived[f"{pre}.{mode}.ratio_{m}"] = a / b if b else None
for tag in ("real", "double"):
    a, b = med(f"nccl.{tag}.traced_ns"), med(f"nccl.{tag}.untraced_ns")
    if a is not None and b is not None:
        derived[f"nccl.{tag}.added_ns"] = a - b
        derived[f"nccl.{tag}.ratio"] = a / b if b else None
    f = med(f"nccl.{tag}.floor_ns")
    if f is not None and b is not None:
        derived[f"nccl.{tag}.floor_added_ns"] = f - b
# Figure 8 (issue 33): --verbs per post_send and poll_cq, against the bare
# uprobe + uretprobe floor on the same functions.
for op in ("post_send", "poll_cq"):
    a, b = med(f"verbs_uprobe.{op}.traced_ns"), med(f"verbs_uprobe.{op}.untraced_ns")
    f = med(f"verbs_uprobe.{op}.floor_ns")
    if a is not None and b is not None:
        derived[f"verbs_uprobe.{op}.added_ns"] = a - b
    if a is not None and f is not None:
        derived[f"verbs_uprobe.{op}.over_floor_ns"] = a - f
for m in ("write_bw_MBps", "send_lat_us", "ring_time_us"):
    r = ratio(f"workload.traced.{m}", f"workload.untraced.{m}")
    if r is not None:
        derived[f"workload.ratio_{m}"] = r
# Issue 21: where the ring's slowdown goes (bench/guest-workload.sh
# ring_split): the kernel module with each reader, the BPF sources alone.
for m in ("split_relay", "split_record", "split_bpf"):
    r = ratio(f"workload.{m}.ring_time_us", "workload.untraced.ring_time_us")
    if r is not None:
        derived[f"workload.ratio_ring_{m}"] = r
# Issue 36: the design's floor (guest-workload.sh floor_split): empty
# programs at the rxe hooks, reading the clock at a CQE, with no reader;
# alone and with rdmatrace.ko tracing.  No tracer of that design is faster.
for m in ("floor_hooks", "floor"):
    for k in ("send_lat_us", "ring_time_us"):
        r = ratio(f"workload.{m}.{k}", f"workload.untraced.{k}")
        if r is not None:
            derived[f"workload.ratio_{k}_{m}"] = r
# Issue 21: the live reader against the recorder, on the same guest.
r = ratio("capture.zero_loss_achieved", "capture_record.zero_loss_achieved")
if r is not None:
    derived["capture.live_over_record"] = r
# The same readers' own CPU per event on the host (bench/host-follow.py).
r = ratio("follow.host.dump_ns_per_event", "follow.host.record_ns_per_event")
if r is not None:
    derived["follow.host.dump_over_record_cpu"] = r
# Issue 34: --stuck's tracker, as time per event over the same read without it.
r = ratio("decode.quiet.events_per_s", "decode.stuck.events_per_s")
if r is not None:
    derived["decode.stuck_time_ratio"] = r
# ... and over what rdmatrace-dump -f does per event: decode, merge, text.
r = ratio("decode.text.events_per_s", "decode.text_stuck.events_per_s")
if r is not None:
    derived["decode.text_stuck_time_ratio"] = r
# The same as instructions (callgrind), which do not move with the load.
a, b = med("decode.text_stuck.instr_per_event"), med("decode.text.instr_per_event")
if a is not None and b:
    derived["decode.text_stuck_instr_ratio"] = a / b
# Issue 37: --metrics' cost per event, in instructions over the same read
# writing a file (-o, the follow figure's output) or text, and as the
# follow figure's CPU time (moves with the machine's load).
for sink in ("binary", "text", "quiet"):
    a, b = med(f"decode.{sink}_metrics.instr_per_event"), med(f"decode.{sink}.instr_per_event")
    if a is not None and b:
        derived[f"decode.{sink}_metrics_instr_ratio"] = a / b
# The least any --metrics can add (bench/metrics-floor.c), over the same
# read to a file: what the 5 % above leaves room for.
a, b = med("decode.metrics_floor.instr_per_event"), med("decode.binary.instr_per_event")
if a is not None and b:
    derived["decode.binary_metrics_floor_ratio"] = (a + b) / b
# Issue 36: the relay form's reader (CPU and task named, raw stamps
# interpolated) over the same records read in ABI 1's form.
a, b = med("decode.relay_form.instr_per_event"), med("decode.relay_abi1.instr_per_event")
if a is not None and b:
    derived["decode.relay_form_instr_ratio"] = a / b
r = ratio("follow.host.dump_metrics_ns_per_event", "follow.host.dump_ns_per_event")
if r is not None:
    derived["follow.host.metrics_over_dump_cpu"] = r
# Issue 36: each decode rate over a reference of the same run, same files:
# a copy of the input files (input events/s), and for SQLite the sqlite3
# CLI's .import of the same rows into the same schema.
# Where host-decode.sh timed a copy right after each decoder run, the
# figure is the median of those pairs' ratios (decoder and copy seconds
# apart, not tens of seconds: a shared host's slow spells hit both).
for sink, ref in (("binary", "copy"), ("text", "copy"), ("json", "copy_slow"),
                  ("perfetto", "copy_slow"), ("sqlite", "copy_slow")):
    r = med(f"decode.{sink}.ratio_paired")
    if r is None:
        r = ratio(f"decode.{sink}.events_per_s", f"decode.{ref}.events_per_s")
    if r is not None:
        derived[f"decode.{sink}.ratio_to_copy"] = r
r = ratio("decode.sqlite.events_per_s", "decode.sqlite_cli.events_per_s")
if r is not None:
    derived["decode.sqlite.ratio_to_cli"] = r
r = ratio("decode.binary.rss_kb", "decode.binary_quarter.rss_kb")
if r is not None:
    derived["decode.rss_ratio_4x_events"] = r
# How far past the zero-loss rate the overload run really went.
for k in ("capture", "capture_record"):
    a, b = med(f"{k}.over.achieved"), med(f"{k}.zero_loss_achieved")
    if a is not None and b:
        derived[f"{k}.over.reached_x_zero_loss"] = a / b

def tgt(name, key, op, goal, unit):
    """op None: a figure the issue asks to measure, with no goal yet."""
    v = derived.get(key, med(key))
    if op is None:
        targets.append({"target": name, "key": key, "value": v, "goal": f"none yet ({unit})",
                        "met": None, "measure_only": True})
        return
    ok = None if v is None else (v <= goal if op == "<=" else v >= goal)
    targets.append({"target": name, "key": key, "value": v, "goal": f"{op} {goal} {unit}",
                    "met": ok})

tgt("added ns per wrapped verb, enabled (guest instructions, icount)",
    "verbs.icount.enabled.added_verb_ns", "<=", 50, "ns")
tgt("added ns per wrapped verb, enabled (TCG guest ns)", "verbs.tcg.enabled.added_verb_ns", "<=", 50, "ns")
# The rate the producer reached, not the one asked: past ~1 M/s the guest's
# producer falls behind what it is asked, and the recorder keeps up with it.
tgt("capture with zero loss (rate reached)", "capture.zero_loss_achieved", ">=", 10e6, "events/s")
tgt("exact drop count at 2x the rate asked", "capture.over.exact", ">=", 1, "(1 = exact)")
tgt("capture with zero loss (rate reached), rdmatrace-record", "capture_record.zero_loss_achieved",
    ">=", 10e6, "events/s")
tgt("exact drop count at 2x the rate asked, rdmatrace-record", "capture_record.over.exact", ">=", 1,
    "(1 = exact)")
tgt("decode+merge to binary", "decode.binary.events_per_s", ">=", 50e6, "events/s")
tgt("decode+merge to text", "decode.text.events_per_s", ">=", 5e6, "events/s")
# "Adds nothing measurable": within the run-to-run noise of a read, 5 %.
# The words are "-f's per-event cost": -f prints text, so the goal
# is on that read; over a read that writes nothing (-q) it is measured only.
tgt("issue 34: --stuck=2 instructions per event over the same text read (the hang tracker's cost to -f; callgrind)",
    "decode.text_stuck_instr_ratio", "<=", 1.05, "x")
tgt("issue 34: --stuck=2 time over the same text read (wall; moves with the machine's load)",
    "decode.text_stuck_time_ratio", None, None, "x")
tgt("issue 34: -q --stuck=2 time over -q (the tracker against a read that writes nothing)",
    "decode.stuck_time_ratio", None, None, "x")
# Issue 37: "costs nothing measurable per event": 5 %, as for --stuck.
tgt("issue 37: --metrics instructions per event over the same read to a file (-f -o's output; callgrind)",
    "decode.binary_metrics_instr_ratio", "<=", 1.05, "x")
tgt("issue 37: the floor of any --metrics (bench/metrics-floor.c) added to the same read to a file (callgrind)",
    "decode.binary_metrics_floor_ratio", None, None, "x")
tgt("issue 37: --metrics instructions per event over the same text read (callgrind)",
    "decode.text_metrics_instr_ratio", "<=", 1.05, "x")
# The figure the issue names ("make bench shows the follow figure with and
# without --metrics"), each thread's schedstat since b58d32d (10 ms ticks
# before): "nothing measurable" as above, 5 %.
tgt("issue 37: -f -o with --metrics (scraped each second) over -f -o, CPU per event (schedstat; the issue's follow figure)",
    "follow.host.metrics_over_dump_cpu", "<=", 1.05, "x")
tgt("issue 36: the relay form's records read to a file, instructions per event over the same records in ABI 1's form (callgrind)",
    "decode.relay_form_instr_ratio", None, None, "x")
# Issue 36: the decode figures as ratios to references of the same run.
tgt("issue 36: decode+merge to binary over a copy of the files (events/s)",
    "decode.binary.ratio_to_copy", ">=", 0.5, "x")
tgt("issue 36: decode+merge to text over a copy of the files", "decode.text.ratio_to_copy",
    ">=", 0.15, "x")
tgt("issue 36: decode to Perfetto over a copy of the files", "decode.perfetto.ratio_to_copy",
    ">=", 0.12, "x")
tgt("issue 36: decode to SQLite over the sqlite3 CLI's .import of the same rows",
    "decode.sqlite.ratio_to_cli", ">=", 1.0, "x")
# Issue 21: the two slow sinks (400 k events); Perfetto's memory stays flat.
tgt("decode to SQLite", "decode.sqlite.events_per_s", ">=", 1e6, "events/s")
tgt("decode to Perfetto", "decode.perfetto.events_per_s", ">=", 1e6, "events/s")
tgt("Perfetto sink peak RSS (400 k events)", "decode.perfetto.rss_kb", "<=", 8192, "KiB")
tgt("RSS growth with 4x events (binary)", "decode.rss_ratio_4x_events", "<=", 1.1, "x")
tgt("merge of 32 hosts' files to binary, peak RSS (clock alignment included)", "decode.merge_rss_kb_32_inputs", "<=", 65536, "KiB")
tgt("added ns per traced NCCL call (real libnccl)", "nccl.real.added_ns", "<=", 1000, "ns")
tgt("added ns per profiler startEvent + stopEvent pair, reader draining",
    "nccl.plugin.event_pair_ns", "<=", 200, "ns")
tgt("the same with no reader (rings full: every record dropped and counted)",
    "nccl.plugin.noreader_pair_ns", "<=", 50, "ns")
tgt("ring allreduce time traced/untraced", "workload.ratio_ring_time_us", "<=", 1.02, "x")
tgt("ib_write_bw untraced/traced slowdown (ratio traced/untraced)", "workload.ratio_write_bw_MBps", ">=", 0.98, "x")

# Issue 21 ("tracing you can leave on"): its own goals, beside the older ones.
tgt("issue 21: added guest instructions per wrapped verb, tracing off (icount)",
    "verbs.icount.disabled.added_verb_ns", "<=", 10, "ns")
tgt("issue 21: added guest instructions per wrapped verb, tracing on (icount)",
    "verbs.icount.enabled.added_verb_ns", "<=", 150, "ns")
# Issue 36: figure 1 for variants of the module (bench/kmod-variants.sh),
# each leaving out one part of the fast path; base is the tree's module in
# the same run (the relay form since relay ABI 2: raw TSC, no pid, tid or
# cpu in the header).  Measurements of what each part costs, not targets.
for v, what in (("base", "the tree's module"),
                ("min-body", "the record with only wr_id, QPN (and status) in its body"),
                ("no-clock-pair", "no test of whether the CPU owes its clock pair"),
                ("no-task", "no clock pair test and no task (no COMM test)"),
                ("wrapper-only", "the wrappers writing no record: the wrapper's own cost")):
    tgt(f"issue 36: added guest instructions per traced verb, variant {v}: {what} (icount)",
        f"variants.{v}.enabled.added_verb_ns", None, None, "ns")
tgt("issue 21: ring allreduce traced/untraced", "workload.ratio_ring_time_us", "<=", 1.15, "x")
tgt("issue 21: ib_send_lat traced/untraced", "workload.ratio_send_lat_us", "<=", 1.15, "x")
tgt("issue 21: live rdmatrace-dump -f against rdmatrace-record (zero-loss rate)",
    "capture.live_over_record", ">=", 0.9, "x")
tgt("issue 21: live reader CPU per event on the host, rdmatrace-dump -f -o (host-follow.py)",
    "follow.host.dump_ns_per_event", None, None, "ns")
tgt("issue 21: the same, rdmatrace-record", "follow.host.record_ns_per_event", None, None, "ns")
tgt("issue 21: decode+merge to binary", "decode.binary.events_per_s", ">=", 15e6, "events/s")
tgt("issue 21: the same, wr_ids that are kernel addresses (a ULP's ib_cqe: hashed, per-CPU cache)",
    "verbs.icount.enabled_cqe.added_verb_ns", None, None, "ns")
tgt("issue 21: BPF rxe source, added guest instructions per packet (icount)",
    "bpf.rxe.added_per_packet", None, None, "ns")
tgt("issue 21: ring traced/untraced, rdmatrace.ko alone, rdmatrace-dump -f",
    "workload.ratio_ring_split_relay", None, None, "x")
tgt("issue 21: ring traced/untraced, rdmatrace.ko alone, rdmatrace-record",
    "workload.ratio_ring_split_record", None, None, "x")
tgt("issue 21: ring traced/untraced, BPF sources alone, rdmatrace-dump -f",
    "workload.ratio_ring_split_bpf", None, None, "x")
tgt("issue 36: ring allreduce traced/untraced (every default source, rdmatrace-dump -f -o)",
    "workload.ratio_ring_time_us", "<=", 1.15, "x")
tgt("issue 36: ib_send_lat traced/untraced", "workload.ratio_send_lat_us", "<=", 1.10, "x")
tgt("issue 36: ib_send_lat, the design's floor: empty programs at the rxe hooks (clock read at a CQE), no reader",
    "workload.ratio_send_lat_us_floor_hooks", None, None, "x")
tgt("issue 36: ib_send_lat, the same floor with rdmatrace.ko tracing (no reader)",
    "workload.ratio_send_lat_us_floor", None, None, "x")
tgt("issue 36: ring, the design's floor with rdmatrace.ko tracing (no reader)",
    "workload.ratio_ring_time_us_floor", None, None, "x")

def git(*a):
    try:
        return subprocess.run(["git", *a], capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""
meta.setdefault("date", time.strftime("%Y-%m-%dT%H:%M:%S%z"))
meta.setdefault("commit", git("rev-parse", "--short", "HEAD") + (" (dirty)" if git("status", "--porcelain", "--", "bench", "scripts") else ""))
meta.setdefault("host_kernel", platform.release())
meta.setdefault("machine", f"{platform.machine()}, {os.cpu_count()} CPUs")
try:
    meta.setdefault("cpu", [l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")][0])
except (OSError, IndexError):
    pass

# The run before this one, where OUTDIR holds it: its value of each target.
before, before_commit = {}, None
try:
    prev = json.load(open(os.path.join(out, "results.json")))
    before = {t["key"]: t["value"] for t in prev.get("targets", [])}
    for k in set(prev.get("derived", {})) | set(prev.get("figures", {})):
        v = prev.get("derived", {}).get(k)
        if v is None and prev.get("figures", {}).get(k):
            v = prev["figures"][k]["median"]
        before.setdefault(k, v)
    before_commit = prev.get("meta", {}).get("commit")
except (OSError, ValueError, KeyError, TypeError):
    pass
for t in targets:
    t["before"] = before.get(t["key"])

res = {"meta": meta, "figures": figs, "derived": derived, "targets": targets,
       "before_commit": before_commit}
with open(os.path.join(out, "results.json"), "w") as f:
    json.dump(res, f, indent=1, sort_keys=True)

def fmt(v):
    if v is None:
        return "—"
    if abs(v) >= 1e5:
        return f"{v:.3g}"
    return f"{v:.3f}".rstrip("0").rstrip(".") if abs(v) < 10 else f"{v:.1f}"

L = ["# rdmatrace: what tracing costs (`make bench`)", ""]
for k in sorted(meta):
    L.append(f"- **{k}**: {meta[k]}")
L += ["", "Generated by `scripts/bench.sh` (bench/report.py); raw figures in `bench/results.json`.",
      "Guest figures run under QEMU TCG (no KVM here): under `icount` guest ns count guest "
      "instructions (deterministic); under plain TCG they are emulated time, not native.", "",
      "## Targets", "", f"Before: the run this one replaced ({before_commit or 'none'}).", "",
      "| target | before | value | goal | met |", "| --- | --- | --- | --- | --- |"]
for t in targets:
    m = {True: "yes", False: "**no**", None: "not measured"}[t["met"]]
    if t.get("measure_only") and t["value"] is not None:
        m = "measured"
    L.append(f"| {t['target']} | {fmt(t['before'])} | {fmt(t['value'])} | {t['goal']} | {m} |")
L += ["", "## Derived (medians: added = traced − untraced, ratio = traced / untraced)", "",
      "| key | value |", "| --- | --- |"]
for k in sorted(derived):
    L.append(f"| {k} | {fmt(derived[k])} |")
L += ["", "## Every figure (median, min, max over repetitions)", "",
      "| figure | median | min | max | n |", "| --- | --- | --- | --- | --- |"]
for k, s in figs.items():
    L.append(f"| {k} | {fmt(s['median'])} | {fmt(s['min'])} | {fmt(s['max'])} | {s['n']} |")
notes = os.path.join(os.path.dirname(os.path.abspath(__file__)), "NOTES.md")
if os.path.exists(notes):
    L += ["", open(notes).read().rstrip()]
with open(os.path.join(out, "RESULTS.md"), "w") as f:
    f.write("\n".join(L) + "\n")
print(f"bench: wrote {out}/RESULTS.md and {out}/results.json")
