#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# What each part of a traced verb costs, measured rather than estimated
# (issue 36's kernel writer target): figure 1 (bench/guest-verbs.sh under
# -icount, deterministic) for rdmatrace.ko as it is, then for each variant
# in bench/kmod-variants/*.patch, a change to kmod/ that removes one part
# of the fast path's work.  The variants are measurements, not modules to
# ship: their records are not what the reader expects (raw TSC stamps, no
# task in the header).
#   bench/kmod-variants.sh [--kernel K] [--check] [ITERS]
# --check: only apply and build each variant, into a scratch directory
# (tests/bench/kmod-variants.test: a variant that no longer applies to
# kmod/ is said, not measured wrong); the guests' rdmatrace.ko is not
# touched, so guest tests may run meanwhile.
# RDT_KMOD_VARIANTS=DIR: the patches of DIR instead.
# Prints figure 1's untraced and traced lines for base and each variant
# as "R variants.NAME.{none,enabled}.METRIC V" (python3 bench/report.py
# RAW DIR derives variants.NAME.enabled.added_verb_ns and the rest); the
# module of the tree is built again at the end, whatever happened.
set -euo pipefail
cd "$(dirname "$0")/.."
K=debian-6.1
[ "${1:-}" != --kernel ] || { K=$2; shift 2; }
CHECK=0
[ "${1:-}" != --check ] || { CHECK=1; shift; }
ITERS=${1:-2000}
KERNELS=tests/vm/kernels
KDIR=$($KERNELS kdir "$K")
REL=$($KERNELS release "$K")
OUT=$PWD/build/kmod/$REL
W=$PWD/build/bench/kmod-variants
rebuild() { make -s -C kmod KDIR="$KDIR" OUT="$OUT" modules >/dev/null 2>&1; }
if [ $CHECK = 1 ]; then
	W=$(mktemp -d "$PWD/build/kmod-variants-check.XXXXXX")
	OUT=$W/out
	trap 'rm -rf "$W"' EXIT
else
	trap 'rebuild' EXIT
fi
[ $CHECK = 1 ] || make -s -C bench kmod KDIR="$KDIR" >/dev/null

# One figure 1 of the module now in $OUT, as NAME: its untraced and
# traced lines, renamed variants.NAME.{none,enabled}.*, from which
# bench/report.py derives the added figures as it does figure 1's.
fig1() {	# NAME
	tests/vm/run --kernel "$K" --icount --smp 1 --timeout 900 -- \
		bench/guest-verbs.sh icount 1 "$ITERS" >"$W/$1.log" 2>&1 ||
		{ cat "$W/$1.log" >&2; echo "kmod-variants: $1: the guest run failed" >&2; exit 1; }
	awk -v n="$1" '$1 == "R" && $2 ~ /^verbs\.icount\.(none|enabled)\./ {
			k = $2; sub(/^verbs\.icount\./, "", k); v[k] = $3
		}
		END {
			if (!("none.verb_ns" in v) || !("enabled.verb_ns" in v)) exit 1
			if (v["enabled.dropped"] != 0) { print "kmod-variants: " n ": records dropped" > "/dev/stderr"; exit 1 }
			for (k in v)
				printf "R variants.%s.%s %s\n", n, k, v[k]
		}' "$W/$1.log" || { cat "$W/$1.log" >&2; exit 1; }
}

if [ $CHECK = 0 ]; then
	rm -rf "$W" && mkdir -p "$W"
	rebuild
	fig1 base
fi
V=${RDT_KMOD_VARIANTS:-bench/kmod-variants}
ls "$V"/*.patch >/dev/null 2>&1 || { echo "kmod-variants: no patches in $V" >&2; exit 1; }
for p in "$V"/*.patch; do
	n=$(basename "$p" .patch)
	rm -rf "$W/tree" && mkdir -p "$W/tree"
	cp -r kmod include "$W/tree/"
	patch -s -d "$W/tree" -p1 <"$p" ||
		{ echo "kmod-variants: $p does not apply to this kmod/: update it" >&2; exit 1; }
	make -s -C "$W/tree/kmod" KDIR="$KDIR" OUT="$OUT" modules >/dev/null 2>&1 ||
		{ echo "kmod-variants: $n does not build" >&2; exit 1; }
	if [ $CHECK = 1 ]; then
		echo "kmod-variants: $n applies and builds"
	else
		fig1 "$n"
	fi
done
