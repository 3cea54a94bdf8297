#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# `make bench`: what tracing costs, side by side, in one run.  Writes
# bench/RESULTS.md and bench/results.json (BENCH_OUT=DIR to write elsewhere).
#   BENCH_QUICK=1   tiny sizes, host figures only (tests/bench/smoke.test)
#   BENCH_VM=0      skip the guest figures (1, 2, 5)
#   BENCH_KERNEL=K  test-bed kernel for the guest figures (debian-6.1)
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export RDT_ROOT=$ROOT RDT_BUILD=${RDT_BUILD:-$ROOT/build}
OUT=${BENCH_OUT:-$ROOT/bench}
K=${BENCH_KERNEL:-debian-6.1}
QUICK=${BENCH_QUICK:-0}
VM=${BENCH_VM:-1}
[ "$QUICK" = 1 ] && VM=${BENCH_VM:-0}
mkdir -p "$OUT"
RAW=$(mktemp /tmp/rdt-bench-raw.XXXXXX)
trap 'rm -f "$RAW"' EXIT
log() { echo "bench: $*" >&2; }

make -s -C bench >&2
{
	echo "M date $(date -Iseconds)"
	echo "M commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
	echo "M host_kernel $(uname -r)"
	echo "M cpu $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1) x $(nproc)"
	echo "M load_at_start $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "M guest_kernel $K ($(tests/vm/kernels list | awk -v k="$K" '$1 == k { print $2 }'))"
	echo "M mode $([ "$QUICK" = 1 ] && echo quick || echo full)"
} >>"$RAW"

if [ "$QUICK" = 1 ]; then
	REPS=1 DEC_N=100000 DEC_SLOW=20000 NCCL_N=2000 NP_N=100000 MERGE_MSGS=200 VERBS_N=2000
	FOLLOW_N=100000
else
	REPS=${BENCH_REPS:-5} DEC_N=${BENCH_DECODE_EVENTS:-8000000} DEC_SLOW=${BENCH_SLOW_EVENTS:-400000}
	NCCL_N=${BENCH_NCCL_CALLS:-100000}
	VERBS_N=${BENCH_VERBS_CALLS:-100000}
	NP_N=${BENCH_NCCL_PLUGIN_PAIRS:-2000000}
	MERGE_MSGS=${BENCH_MERGE_MSGS:-5000}
	FOLLOW_N=${BENCH_FOLLOW_EVENTS:-2000000}
fi

log "figure 3: decode + merge ($DEC_N events; $DEC_SLOW for JSON/Perfetto/SQLite), $REPS reps"
bench/host-decode.sh "$REPS" "$DEC_N" "$DEC_SLOW" >>"$RAW"
log "figure 3: merge of 2, 8 and 32 hosts' files, peak RSS ($MERGE_MSGS messages per link and direction), $REPS reps"
bench/host-merge-rss.sh "$REPS" "$MERGE_MSGS" >>"$RAW"
log "figure 2, host: live reader and recorder CPU per event ($FOLLOW_N events), $REPS reps"
RDT_BUILD=build python3 bench/host-follow.py "$REPS" "$FOLLOW_N" >>"$RAW" ||
	log "host follow figure failed"
log "figure 4: NCCL uprobes ($NCCL_N calls), $REPS reps"
bench/host-nccl.sh "$REPS" "$NCCL_N" >>"$RAW" || log "NCCL figure failed"
log "figure 8: --verbs uprobes ($VERBS_N post_send and poll_cq calls), $REPS reps"
bench/host-verbs.sh "$REPS" "$VERBS_N" >>"$RAW" || log "verbs figure failed"
log "figure 6: NCCL profiler plugin ($NP_N event pairs), $REPS reps"
bench/host-nccl-plugin.sh "$REPS" "$NP_N" >>"$RAW" || log "NCCL plugin figure failed"

if [ "$VM" = 1 ]; then
	kmake() {
		kd=$(tests/vm/kernels kdir "$K")
		make -s -C bench kmod KDIR="$kd" >&2
		make -s -C bench >&2
	}
	kmake
	# A guest run that produced no figure (e.g. the test bed's initramfs
	# cache was busy with another build) is retried once.
	vm() {
		for try in 1 2; do
			tests/vm/run --kernel "$K" "$@" >"$RAW.one" 2>&1 || true
			cat "$RAW.one" >>"$RAW.log"
			grep '^R ' "$RAW.one" >>"$RAW" && break
			log "guest run gave no figures (try $try): $(grep -v '^R ' "$RAW.one" | tail -3 | tr '\n' ' ')"
		done
		rm -f "$RAW.one"
	}
	log "figure 1: kernel verb cost, icount (deterministic), 3 reps"
	vm --icount --smp 1 --timeout 600 -- bench/guest-verbs.sh icount 3 5000
	log "figure 7: the BPF rxe source per packet, icount (deterministic), 3 reps"
	vm --icount --smp 1 --timeout 900 -- bench/guest-bpf.sh 3 2000
	log "figure 1: where each wrapper's instructions go (gdb single-step)"
	{
		echo "# Instructions per wrapped call, by kernel function ($(git rev-parse --short HEAD 2>/dev/null), $K)"
		echo
		echo "Made by \`bench/verb-profile.sh\` (see bench/NOTES.md, figure 1)."
		echo '```'
		bench/verb-profile.sh --kernel "$K" || echo "verb-profile failed"
		echo '```'
	} >"$OUT/PROFILE.md" 2>&1
	# The same figure for the tree's module and for each variant of it
	# that leaves out one part of the fast path (bench/kmod-variants/):
	# what ABI 2's record and the task would save, and the wrapper's own
	# share.  The tree's module is built again after.
	log "figure 1: what each part of a traced verb costs (bench/kmod-variants.sh)"
	bench/kmod-variants.sh --kernel "$K" 2000 >>"$RAW" 2>>"$RAW.log" ||
		log "kmod variants failed: $(tail -3 "$RAW.log" | tr '\n' ' ')"
	log "figure 1: kernel verb cost, plain TCG, $REPS reps"
	vm --smp 2 --timeout 600 -- bench/guest-verbs.sh tcg "$REPS" 5000
	# Each reader's figure is one bisection, moved by the host's stalls
	# (the same code gave live/record 1.60 and then 0.78): three rounds,
	# the two readers alternating, and each figure the median of three.
	# Both readers' runs last 2 s: a rate is lost to one stall of the
	# host's in the run, and the recorder's 1 s runs (to 974ed9b) were
	# half as exposed to them as the live reader's.
	for round in 1 2 3; do
		log "figure 2: capture rate, round $round of 3"
		vm --smp 2 --timeout 600 -- bench/guest-capture.sh 2 50000 20000000
		log "figure 2: capture rate, rdmatrace-record (saved, decoded after), round $round of 3"
		vm --smp 2 --mem 4096 --timeout 900 -- bench/guest-capture.sh 2 50000 20000000 record
	done
	log "figure 5: workload slowdown, 3 reps"
	vm --smp 2 --timeout 1500 -- bench/guest-workload.sh 3 500 500 1048576
	grep -E '^capture(_record)?[: ]|FAIL|rdt-guest: |exited|^guest-(workload|bpf): ' "$RAW.log" >&2 || true
	rm -f "$RAW.log"
fi
# The raw lines stay, so that the report can be made again from them:
# python3 bench/report.py build/bench/raw.txt DIR
# The quick mode's (tests/bench/smoke.test, in make check) go to its own
# directory: they must not replace the last make bench's.
if [ "$QUICK" = 1 ]; then
	cp "$RAW" "$OUT/raw.txt"
else
	mkdir -p "$RDT_BUILD/bench" && cp "$RAW" "$RDT_BUILD/bench/raw.txt"
fi
python3 bench/report.py "$RAW" "$OUT"
