#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# `make demo`: a ring AllReduce over SoftRoCE traced end to end.  Boots the
# debian-6.1 test-bed guest, which loads rdmatrace, brings up rxe0, records
# kmod relay + BPF (rxe, TCP) + the ring's USDT marks with rdmatrace-dump
# while 3 ranks run the ring AllReduce and rdt_workload.ko runs kernel verbs
# (scripts/demo-guest.sh); then, on the host, turns the trace into SQLite and
# Perfetto JSON, prints the report (scripts/demo-report.py) and draws the
# timeline (scripts/demo-timeline.py).
#
#   scripts/demo.sh [rdma-ring-allreduce size options]   (default -b 8 -e 1M -f 4 -n 5 -w 1 -C 32768:
#   32 KiB chunks, so the larger sizes are pipelined, K > 1)
#
# Environment: DEMO_OUT (default out/demo, must be inside the checkout: the
# guest writes there), KERNEL or DEMO_KERNEL (debian-6.1; make demo
# KERNEL=mainline: Linux 7.2), DEMO_TIMEOUT (900 s).
# HOSTS=2 (make demo HOSTS=2): the two-host demo, scripts/demo-2hosts.sh.
# HANG=1 (make demo HANG=1): the ring with one rank's link lossy and the
# live --stuck reports, scripts/demo-hang.sh (HANG=1 HOSTS=2: the wire cut
# under the two-host ring, scripts/demo-hang-2hosts.sh).
set -u
[ "${HANG:-0}" = 0 ] || exec "$(dirname "$0")/demo-hang.sh" "$@"
case ${HOSTS:-1} in
1) ;;
2) exec "$(dirname "$0")/demo-2hosts.sh" "$@" ;;
*) echo "demo: HOSTS=${HOSTS} (1 or 2)" >&2; exit 2 ;;
esac
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${RDT_BUILD:-$ROOT/build}
DUMP=$B/bin/rdmatrace-dump
OUT=${DEMO_OUT:-$ROOT/out/demo}
KERNEL=${KERNEL:-${DEMO_KERNEL:-debian-6.1}}
TIMEOUT=${DEMO_TIMEOUT:-900}

. "$ROOT/scripts/demo-lib.sh"
demo_out
demo_need "$DUMP" "$B/bin/rdma-ring-allreduce"
command -v python3 >/dev/null || die "python3 missing (make deps)"

start=$(date +%s)
say "booting the $KERNEL guest (QEMU); the guest's output follows"
rm -f "$OUT/trace.rdt" "$OUT/trace.db" "$OUT/trace.perfetto.json" "$OUT/report.txt" \
	"$OUT/timeline.svg"
"$ROOT/tests/vm/run" --kernel "$KERNEL" --timeout "$TIMEOUT" -- \
	"$ROOT/scripts/demo-guest.sh" "$OUT" "$@" || die "the guest run failed ($?)"
[ -s "$OUT/trace.rdt" ] || die "no trace recorded in $OUT/trace.rdt"

say "converting the trace (rdmatrace-dump -i trace.rdt)"
"$DUMP" -i "$OUT/trace.rdt" -F sqlite -w "$OUT/trace.db" || die "SQLite conversion failed"
"$DUMP" -i "$OUT/trace.rdt" -F perfetto -w "$OUT/trace.perfetto.json" ||
	die "Perfetto conversion failed"
"$DUMP" -i "$OUT/trace.rdt" -q -s >"$OUT/stats.txt" 2>&1 || die "stats failed"

say "report (SQL over trace.db; kernel/rxe records linked to ranks by QPN)"
python3 "$ROOT/scripts/demo-report.py" "$OUT" | tee "$OUT/report.txt"
rc=$(tail -n 1 "$OUT/report.txt" | grep -q '^CHECK OK' && echo 0 || echo 1)
# A healthy run is not stuck: rdmatrace-dump -f --stuck=5 in the guest
# said nothing but its episode count, and the saved trace says the same.
"$DUMP" -i "$OUT/trace.rdt" -q --stuck=5 2>"$OUT/stuck.txt" || rc=1
if grep -q '^stuck: report' "$OUT/dump.err" "$OUT/stuck.txt" ||
   ! grep -q '^stuck: episodes=0$' "$OUT/dump.err" ||
   ! grep -q '^stuck: episodes=0$' "$OUT/stuck.txt"; then
	echo "STUCK CHECK FAILED: a healthy run reported something stuck:"
	grep '^stuck:' "$OUT/dump.err" "$OUT/stuck.txt" | head -n 20
	rc=1
else
	echo "STUCK CHECK OK: --stuck=5, live and from the saved trace: no report (0 episodes)"
fi
python3 "$ROOT/scripts/demo-timeline.py" "$OUT" "$OUT/timeline.svg" ||
	echo "demo: timeline drawing failed" >&2

say "done in $(($(date +%s) - start)) s; results in $OUT"
for f in trace.rdt trace.db trace.perfetto.json timeline.svg report.txt live.txt ring.txt; do
	[ -e "$OUT/$f" ] && printf '  %-22s %s\n' "$f" "$(du -h "$OUT/$f" | cut -f1)"
done
cat <<EOF
  open trace.perfetto.json in ui.perfetto.dev (Open trace file); query trace.db with
  sqlite3 (lib/SCHEMA.md); rdmatrace-dump -i $OUT/trace.rdt prints every event.
EOF
exit "$rc"
