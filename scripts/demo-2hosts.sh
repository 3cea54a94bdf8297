#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make demo HOSTS=2`: one ring AllReduce across two hosts, traced on each,
# merged on one timeline aligned from the RDMA traffic itself.  Boots two
# debian-6.1 guests joined by a wire (tests/multihost/lib.sh): each brings
# up rxe0 on its wire NIC and records every source with rdmatrace-dump -f
# while its 2 ranks of a 4-rank ring run (tests/multihost/guest.sh); B's
# clock is stepped by DEMO_SKEW seconds first.  Then, on the host: the two
# traces merged (rdmatrace-dump -i A.rdt -i B.rdt) into SQLite, Perfetto
# and --stats; the offset found against the skew injected and the true
# offset; cross-host receive-before-send counts with and without the
# alignment; per collective, the time on the wire and on each host
# (tests/multihost/report.py).
#
#   scripts/demo-2hosts.sh [rdma-ring-allreduce size options]
#         (default -b 4K -e 256K -f 4 -n 3 -w 1 -C 16K)
#
# Environment: DEMO_OUT (out/demo2, inside the checkout), DEMO_KERNEL
# (debian-6.1), DEMO_TIMEOUT (1200 s per guest), DEMO_SKEW (3.25 s).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${RDT_BUILD:-$ROOT/build}
DUMP=$B/bin/rdmatrace-dump
OUT=${DEMO_OUT:-$ROOT/out/demo2}
KERNEL=${DEMO_KERNEL:-debian-6.1}
TIMEOUT=${DEMO_TIMEOUT:-1200}
export MH_SKEW=${DEMO_SKEW:-3.25}

. "$ROOT/scripts/demo-lib.sh"
demo_out
demo_need "$DUMP" "$B/bin/rdma-ring-allreduce" "$B/tests/multihost/rdt-clockpair"
command -v python3 >/dev/null || die "python3 missing (make deps)"
. "$ROOT/tests/multihost/lib.sh"

start=$(date +%s)
say "booting two $KERNEL guests, A (192.0.2.1) and B (192.0.2.2), on one wire; B's clock stepped by ${MH_SKEW} s"
rm -f "$OUT"/trace.db "$OUT"/trace.perfetto.json "$OUT"/stats.txt "$OUT"/report.txt
mh_run "$KERNEL" "$TIMEOUT" "$OUT" "$@" || { mh_consoles "$OUT"; die "a guest failed (A exited $MH_RC_A, B $MH_RC_B)"; }
grep -h "^mh-guest" "$OUT/A.console" "$OUT/B.console"
say "ring output (rank 0, on A)"
cat "$OUT/A.ring.txt"

say "merging: rdmatrace-dump -i A.rdt -i B.rdt (clocks aligned from the rxe packets)"
"$DUMP" -i "$OUT/A.rdt" -i "$OUT/B.rdt" -F sqlite -w "$OUT/trace.db" 2>"$OUT/merge.err" ||
	die "SQLite conversion failed: $(cat "$OUT/merge.err")"
cat "$OUT/merge.err"
"$DUMP" -i "$OUT/A.rdt" -i "$OUT/B.rdt" -F perfetto -w "$OUT/trace.perfetto.json" 2>/dev/null ||
	die "Perfetto conversion failed"
"$DUMP" -i "$OUT/A.rdt" -i "$OUT/B.rdt" -q -s >"$OUT/stats.txt" 2>&1 || die "stats failed"
say "the merged --stats: per-QP counts of both hosts, WR latency, collectives, hosts, drops"
cat "$OUT/stats.txt"

say "two hosts: offset found, skew injected, causality, time split"
python3 "$ROOT/tests/multihost/report.py" --split "$OUT" "$DUMP" | tee "$OUT/report.txt"
rc=${PIPESTATUS[0]}

say "done in $(($(date +%s) - start)) s; results in $OUT"
for f in A.rdt B.rdt trace.db trace.perfetto.json stats.txt report.txt; do
	[ -e "$OUT/$f" ] && printf '  %-22s %s\n' "$f" "$(du -h "$OUT/$f" | cut -f1)"
done
cat <<EOF2
  open trace.perfetto.json in ui.perfetto.dev (a process group per host); query trace.db
  with sqlite3 (lib/SCHEMA.md: the host column); rdmatrace-dump -i $OUT/A.rdt -i $OUT/B.rdt
  prints every event of both hosts on one timeline.
EOF2
exit "$rc"
