#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Draw the demo's timeline as SVG from OUTDIR/trace.db (no browser needed).

Top: the whole ring run, one track per rank with each collective as a slice
(USDT coll_begin..coll_end), the kernel workload's QPs below.  Bottom: a
zoom on the last three collectives of the largest size: per rank the
collective slices, the send QP with every WR as a bar from its doorbell
(post_send_db, kmod) to its send CQE (rxe_cqe, BPF), and the receive QP's
CQEs coloured by the collective they belong to (by order on the QP, as the
report attributes them) - so the early arrivals of seq+1 inside seq's
window are visible.  Ranks are linked to QPs by QPN (ring.txt).

  scripts/demo-timeline.py OUTDIR OUT.svg
"""
import html
import os
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
report = __import__("demo-report")

W, LEFT, RIGHT = 1400, 190, 20
PAL = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948",
       "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"]


class Svg:
    def __init__(self):
        self.parts = []

    def add(self, s):
        self.parts.append(s)

    def rect(self, x, y, w, h, fill, title=None, opacity=1.0):
        t = f"<title>{html.escape(title)}</title>" if title else ""
        self.add(f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(w, 0.8):.1f}" height="{h:.1f}" '
                 f'fill="{fill}" fill-opacity="{opacity}">{t}</rect>')

    def line(self, x1, y1, x2, y2, color, w=1.0):
        self.add(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
                 f'stroke="{color}" stroke-width="{w}"/>')

    def text(self, x, y, s, size=12, anchor="start", weight="normal", color="#222"):
        self.add(f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
                 f'font-weight="{weight}" fill="{color}">{html.escape(s)}</text>')


def axis(svg, y, t0, t1, x_of, label_unit):
    svg.line(LEFT, y, W - RIGHT, y, "#888")
    span = t1 - t0
    step = 10 ** len(str(int(span / 8))) / 10 if span > 8 else 1
    for mult in (1, 2, 5, 10):
        if span / (step * mult) <= 10:
            step *= mult
            break
    t = t0
    while t <= t1:
        x = x_of(t)
        svg.line(x, y, x, y + 4, "#888")
        v = (t - t0) / (1e6 if label_unit == "ms" else 1e3)
        svg.text(x, y + 16, f"{v:g} {label_unit}", 10, "middle", color="#555")
        t += step


def main():
    out, dst = sys.argv[1], sys.argv[2]
    db = sqlite3.connect(f"file:{os.path.join(out, 'trace.db')}?mode=ro", uri=True)
    env = report.read_env(os.path.join(out, "run.env"))
    ranks, chunk = report.read_ring(os.path.join(out, "ring.txt"))
    n = len(ranks)
    marks = {}
    for ph, by, seq, rank, ts in db.execute(
            "SELECT phase, bytes, seq, rank, ts_ns FROM coll_marks"):
        m = marks.setdefault((seq, rank), {"bytes": by})
        m[ph] = ts
    seqs = sorted({s for s, _ in marks})
    sizes = sorted({m["bytes"] for m in marks.values()})
    color = {b: PAL[i % len(PAL)] for i, b in enumerate(sizes)}
    begin = min(m["begin"] for m in marks.values())
    end = max(m["end"] for m in marks.values())
    wl = [int(env.get("WL_QPN_SEND", -1)), int(env.get("WL_QPN_RECV", -1))]
    wl_ts = [t for (t,) in db.execute(
        "SELECT ts_ns FROM completions WHERE via='rxe' AND qpn IN (?,?)", wl)]
    wl_post = [t for (t,) in db.execute(
        "SELECT ts_ns FROM verbs WHERE verb IN ('post_send','post_recv') AND qpn IN (?,?)", wl)]
    t0 = min([begin] + wl_ts + wl_post)
    t1 = end

    svg = Svg()
    y = 30
    svg.text(W / 2, y, f"rdmatrace: ring AllReduce, {n} ranks over SoftRoCE ({env.get('RXE_DEV', '?')}), "
             f"kernel {env.get('KERNEL', '?')} under QEMU", 16, "middle", "bold")
    y += 18
    svg.text(W / 2, y, "collectives = USDT coll_begin..coll_end; WR bars = doorbell (kmod post_send_db) "
             "-> send CQE (BPF rxe_cq_post); ranks linked to QPs by QPN", 11, "middle", color="#555")

    # ---- overview ----------------------------------------------------------
    y += 30
    svg.text(LEFT - 10, y, "whole run", 13, "end", "bold")

    def xo(t):
        return LEFT + (t - t0) / (t1 - t0) * (W - LEFT - RIGHT)
    y += 10
    for r in range(n):
        svg.text(LEFT - 10, y + 14, f"rank {r} collectives", 12, "end")
        for (seq, rank), m in marks.items():
            if rank == r and "begin" in m and "end" in m:
                svg.rect(xo(m["begin"]), y, xo(m["end"]) - xo(m["begin"]), 18,
                         color[m["bytes"]], f"rank {r} seq {seq}: {m['bytes']} B")
        y += 24
    svg.text(LEFT - 10, y + 14, "rdt_workload.ko QPs", 12, "end")
    for t in wl_post:
        svg.line(xo(t), y + 2, xo(t), y + 9, "#9c755f")
    for t in wl_ts:
        svg.line(xo(t), y + 10, xo(t), y + 17, "#59a14f")
    y += 30
    axis(svg, y, t0, t1, xo, "ms")
    y += 34
    lx = LEFT
    svg.text(LEFT - 10, y, "bytes", 11, "end")
    for b in sizes:
        svg.rect(lx, y - 10, 12, 12, color[b])
        lab = f"{b // 1024} KiB" if b >= 1024 else f"{b} B"
        svg.text(lx + 16, y, lab, 11)
        lx += 26 + 7 * len(lab)
    svg.line(lx + 10, y - 10, lx + 10, y - 3, "#9c755f")
    svg.text(lx + 15, y, "workload post", 11)
    svg.line(lx + 110, y - 3, lx + 110, y + 4, "#59a14f")
    svg.text(lx + 115, y, "workload CQE", 11)

    # ---- zoom ----------------------------------------------------------------
    big = sizes[-1]
    zs = [s for s in seqs if marks.get((s, 0), {}).get("bytes") == big][-3:]
    z0 = min(marks[(s, r)]["begin"] for s in zs for r in range(n) if (s, r) in marks)
    z1 = max(marks[(s, r)]["end"] for s in zs for r in range(n) if (s, r) in marks)
    pad = (z1 - z0) * 0.03
    z0, z1 = z0 - pad, z1 + pad

    def xz(t):
        return LEFT + (t - z0) / (z1 - z0) * (W - LEFT - RIGHT)
    y += 40
    K = report.ring_plan(n, big // 4, chunk)
    svg.text(LEFT - 10, y, f"zoom: seq {zs[0]}..{zs[-1]}", 13, "end", "bold")
    svg.text(LEFT, y, f"{big} B each, K = {K}: {2 * (n - 1) * K} WRITE_WITH_IMM + "
             f"{2 * (n - 1) * K} receive CQEs per rank per collective", 12)
    y += 12
    seq_col = {s: PAL[(i * 3) % len(PAL)] for i, s in enumerate(seqs)}
    for r in range(n):
        x = ranks[r]
        svg.text(LEFT - 10, y + 14, f"rank {r} collectives", 12, "end")
        for s in zs:
            m = marks.get((s, r))
            if m and "begin" in m and "end" in m:
                svg.rect(xz(m["begin"]), y, xz(m["end"]) - xz(m["begin"]), 18, seq_col[s],
                         f"rank {r} seq {s}")
                svg.text(xz(m["begin"]) + 4, y + 13, f"seq {s}", 11, color="#fff")
        y += 22
        svg.text(LEFT - 10, y + 14, f"QP {x['sq']} send -> rank {x['right']}", 12, "end")
        dbs = [t for (t,) in db.execute(
            "SELECT ts_ns FROM verbs WHERE verb='post_send_db' AND qpn=? ORDER BY ts_ns, id",
            (x["sq"],))]
        cqs = [t for (t,) in db.execute(
            "SELECT ts_ns FROM completions WHERE via='rxe' AND qpn=? ORDER BY ts_ns, id",
            (x["sq"],))]
        lane = 0
        for d, c in zip(dbs, cqs):
            if c < z0 or d > z1:
                continue
            yy = y + 2 + (lane % 4) * 4.5
            svg.line(xz(max(d, z0)), yy, xz(min(c, z1)), yy, "#4e79a7", 2.5)
            svg.line(xz(c), yy - 2, xz(c), yy + 2, "#1b3a5c", 1.2)
            lane += 1
        y += 22
        svg.text(LEFT - 10, y + 14, f"QP {x['rq']} recv <- rank {x['left']}", 12, "end")
        rcs = [t for (t,) in db.execute(
            "SELECT ts_ns FROM completions WHERE via='rxe' AND qpn=? ORDER BY ts_ns, id",
            (x["rq"],))]
        pos = 0
        for s in seqs:
            m = marks.get((s, r))
            want = 2 * (n - 1) * report.ring_plan(n, m["bytes"] // 4, chunk) if m else 0
            for t in rcs[pos:pos + want]:
                if z0 <= t <= z1:
                    svg.line(xz(t), y + 2, xz(t), y + 18, seq_col[s], 1.6)
            pos += want
        y += 30
    axis(svg, y, z0, z1, xz, "ms" if z1 - z0 > 2e7 else "us")
    y += 34
    svg.line(LEFT, y - 4, LEFT + 30, y - 4, "#4e79a7", 2.5)
    svg.text(LEFT + 36, y, "one WR: doorbell -> send CQE", 11)
    svg.line(LEFT + 250, y - 12, LEFT + 250, y + 2, seq_col[zs[-1]], 1.6)
    svg.text(LEFT + 256, y, "receive CQE, coloured by the collective it belongs to "
             "(2(n-1)K per collective, in order on the QP)", 11)
    y += 16

    body = "\n".join(svg.parts)
    with open(dst, "w") as f:
        f.write(f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{y + 10}" '
                f'viewBox="0 0 {W} {y + 10}" font-family="DejaVu Sans, Helvetica, sans-serif">\n'
                f'<rect width="100%" height="100%" fill="#fff"/>\n{body}\n</svg>\n')
    print(f"timeline: {dst}")


if __name__ == "__main__":
    main()
