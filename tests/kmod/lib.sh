# SPDX-License-Identifier: GPL-2.0
# Shared helpers of the rdmatrace.ko guest tests (sourced, POSIX sh).

D=/sys/kernel/debug/rdmatrace
CHECK=${RDT_BUILD:-${RDT_ROOT:-.}/build}/tests/kmod/rdt-check
T=$(mktemp -d /tmp/rdt.XXXXXX)

fail() { echo "FAIL: $*"; dmesg | tail -20; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
ok() { echo "ok: $*"; }

[ "$(id -u)" = 0 ] || skip "needs root (runs in the test-bed guest)"
[ -x "$CHECK" ] || skip "$CHECK not built (make -C kmod tools)"
mountpoint -q /sys/kernel/debug 2>/dev/null ||
	mount -t debugfs none /sys/kernel/debug 2>/dev/null || true

# tracing_on [SECS [PID ERRFILE]]: wait (60 s at most) until the
# rdmatrace-dump -f or rdmatrace-record started in the background has
# switched tracing on (it writes enable itself, once its sources are
# attached): a fixed sleep lost a workload's first events whenever the
# guest ran slowly.  With PID, a tool that exited says why (its ERRFILE)
# at once.
tracing_on() {
	_i=0
	until [ "$(cat "$D/enable")" = 1 ]; do
		_i=$((_i + 1))
		if [ -n "${2:-}" ] && ! kill -0 "$2" 2>/dev/null; then
			fail "the tracer (pid $2) exited before switching tracing on: $(cat "${3:-/dev/null}")"
		fi
		[ $_i -lt $((${1:-60} * 10)) ] ||
			fail "tracing was not switched on in ${1:-60} s (by the rdmatrace-dump -f or rdmatrace-record started for it)"
		sleep 0.1
	done
}

# rdt_load [PARAM=VALUE...]: a fresh rdmatrace with the given parameters.
rdt_load() {
	rmmod rdmatrace 2>/dev/null || true
	modprobe rdmatrace "$@" || fail "modprobe rdmatrace $*"
	[ -d "$D" ] || fail "no $D"
}

# rdt_collect OUT: drain every trace file, decode and validate, merge the
# CPUs by timestamp (stable: one CPU's order is kept on equal stamps).  The
# bytes stay in $T/collected/trace<cpu>, a directory rdmatrace-dump -d reads.
rdt_collect() {
	local f n=0
	: >"$T/all"
	rm -rf "$T/collected"
	mkdir "$T/collected"
	for f in "$D"/trace*; do
		cat "$f" >"$T/collected/${f##*/}" || fail "reading $f"
		"$CHECK" "$T/collected/${f##*/}" >>"$T/all" ||
			fail "malformed records in $f"
		n=$((n + 1))
	done
	[ $n -gt 0 ] || fail "no trace files in $D"
	awk '{ t = $3; sub(/^ts=/, "", t); print t, $0 }' "$T/all" |
		sort -s -n -k1,1 | cut -d' ' -f2- >"$1"
}

# count FILE AWK-CONDITION: records matching, e.g. count f '$1=="POST_SEND"'
# Fields after the first are key=value; kv(k) returns the value of key k.
count() {
	awk 'function kv(k,  i) { for (i = 2; i <= NF; i++)
		if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
		'"$2"' { n++ } END { print n + 0 }' "$1"
}

# values FILE AWK-CONDITION KEY: the KEY of matching records, one a line.
values() {
	awk 'function kv(k,  i) { for (i = 2; i <= NF; i++)
		if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
		'"$2"' { print kv("'"$3"'") }' "$1"
}

# hexseq BASE N: BASE+0 .. BASE+N-1 as rdt-check prints them (0x%x).
hexseq() {
	awk -v b="$1" -v n="$2" 'BEGIN { for (i = 0; i < n; i++) printf "0x%x\n", b + i }'
}

dropped_total() { awk '$1 == "total" { print $2 }' "$D/dropped"; }

rdma_up() {
	rdt-rdma-up "$@" >/dev/null || fail "rdt-rdma-up"
	. /run/rdt-rdma.env
}
