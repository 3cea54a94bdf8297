#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Peak RSS of rdmatrace-dump merging N hosts' trace files to a binary file
# (issue 23: the merge streams, it must not hold all events with many
# inputs): rdt-gen -M N writes N hosts' files of rxe packets between ring
# neighbours (MSGS per link and direction), so the merge also runs its
# clock alignment pass.  R decode.merge_rss_kb_N_inputs (/usr/bin/time).
#   host-merge-rss.sh REPS MSGS [N...]   (default N: 2 8 32)
set -eu
REPS=$1 MSGS=$2
shift 2
[ $# -gt 0 ] || set -- 2 8 32
B=${RDT_BUILD:-build}
ROOT=${RDT_ROOT:-.}
GEN=$B/bench/rdt-gen DUMP=$B/bin/rdmatrace-dump
D=${TMPDIR:-/tmp}
[ -d /dev/shm ] && [ -w /dev/shm ] && D=/dev/shm
W=$(mktemp -d "${RDT_BENCH_TMP:-$D}/rdt-merge.XXXXXX")
trap 'rm -rf "$W"' EXIT
mkdir -p "$B/bench"
cc -std=gnu11 -O2 -Wall -Wextra -Werror -I"$ROOT/include" -o "$GEN" "$ROOT/tests/lib/rdt-gen.c"
for n in "$@"; do
	rm -f "$W"/h.*
	"$GEN" -M "$n" -Y ring -S 1000000 -m "$MSGS" -s 20000 "$W/h" >/dev/null
	set --
	for f in "$W"/h.h*; do set -- "$@" -i "$f"; done
	ev=$(cat "$W"/h.h* | wc -c)
	for r in $(seq "$REPS"); do
		/usr/bin/time -f "%e %M" -o "$W/time" "$DUMP" "$@" -o "$W/out.rdt" 2>"$W/err" ||
			{ cat "$W/err" >&2; exit 1; }
		read -r s kb <"$W/time"
		echo "R decode.merge_rss_kb_${n}_inputs $kb"
		echo "R decode.merge_s_${n}_inputs $s"
	done
	echo "M merge_${n}_inputs $(sed -n 's/^rdmatrace-dump: \([0-9]*\) events.*/\1 events/p' "$W/err"), $((ev / 1024)) KiB of files"
done
