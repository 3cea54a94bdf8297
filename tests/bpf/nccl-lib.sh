# Sourced by tests/bpf/nccl-*.test: trace nccl-driver's calls into one
# library with rdt-bpf-selftest and check every record against what the
# driver says it did.  Usage: nccl_check LIBRARY [DELAY_US]
RDT_ROOT=${RDT_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
RDT_BUILD=${RDT_BUILD:-$RDT_ROOT/build}
SELFTEST=$RDT_BUILD/bpf/rdt-bpf-selftest
DRIVER=$RDT_BUILD/tests/nccl-driver/nccl-driver
DOUBLE=$RDT_BUILD/tests/nccl-double/libnccl-double.so

fail() { echo "FAIL: $*"; exit 1; }

need_built() {
	for f in "$SELFTEST" "$DRIVER" "$DOUBLE"; do
		[ -x "$f" ] || [ -f "$f" ] || fail "$f not built (make -C bpf; make -C tests/nccl-double; make -C tests/nccl-driver)"
	done
	[ "$(id -u)" = 0 ] || { echo "SKIP: needs root for BPF uprobes"; exit 77; }
}

# Start the tracer on $1 and wait until it has attached.
start_tracer() {
	rm -f "$T/ready"
	"$SELFTEST" --nccl="$1" --ready="$T/ready" >"$T/trace" 2>"$T/status" &
	TRACER=$!
	for _ in $(seq 300); do
		[ -e "$T/ready" ] && return 0
		kill -0 $TRACER 2>/dev/null || break
		sleep 0.1
	done
	cat "$T/status"
	fail "tracer did not attach"
}

stop_tracer() {
	sleep 0.3	# let the last records reach the ring buffer's reader
	kill -INT $TRACER
	wait $TRACER || fail "tracer exited with $?"
}

nccl_check() {
	lib=$1
	delay=${2:-0}
	T=$(mktemp -d)
	trap 'kill $TRACER 2>/dev/null; rm -rf "$T"' EXIT

	start_tracer "$lib"
	cat "$T/status"
	grep -q "^nccl: attached 19 functions in " "$T/status" ||
		fail "expected 19 NCCL functions attached (ncclAlltoAll included)"
	# Every function is exported as ncclX and pncclX: one probe per address.
	grep -q "(19 aliases at shared addresses not attached twice" "$T/status" ||
		fail "expected the 19 pnccl aliases to be recognised as aliases"

	NCCL_DOUBLE_DELAY_US=$delay "$DRIVER" "$lib" >"$T/driver" || fail "driver failed"
	stop_tracer
	pid=$(sed -n 's/^pid=//p' "$T/driver")

	# The comparable part of the tracer's lines: drop ts/pid/tid/cpu and duration.
	grep " pid=$pid .* NCCL_" "$T/trace" |
		sed 's/^ts=[0-9]* pid=[0-9]* tid=[0-9]* cpu=[0-9]* //; s/ dur_ns=[0-9]*$//' >"$T/got"
	grep '^NCCL_' "$T/driver" >"$T/want"
	if ! diff -u "$T/want" "$T/got"; then
		fail "trace differs from the driver's calls (- driver, + trace)"
	fi
	n=$(wc -l <"$T/want")
	[ "$n" -ge 25 ] || fail "only $n expected records: driver did not run its sequence"

	# The hash, once more from the raw ids, by a third implementation.
	if command -v python3 >/dev/null; then
		python3 - "$T/driver" <<'PY' || fail "comm hash does not match splitmix64 of the id"
import sys
M = (1 << 64) - 1
def sm(x):
    z = (x + 0x9e3779b97f4a7c15) & M
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M
    return z ^ (z >> 31)
lines = open(sys.argv[1]).read().split("\n")
ids = [bytes.fromhex(l[3:]) for l in lines if l.startswith("ID ")]
got = [l.split("hash=")[1].split()[0] for l in lines if "fn=ncclGetUniqueId " in l]
assert len(ids) == len(got) == 2, (ids, got)
for i, g in zip(ids, got):
    h = 0
    for k in range(0, 128, 8):
        h = sm(h ^ int.from_bytes(i[k:k+8], "little"))
    assert "0x%016x" % h == g, ("0x%016x" % h, g)
PY
	fi

	# Durations: with a delay, every successful collective took at least it.
	if [ "$delay" -gt 0 ]; then
		grep " pid=$pid .* NCCL_CALL fn=ncclAllReduce ret=0 " "$T/trace" |
			awk -v min=$((delay * 1000)) '{ n++; sub(/.*dur_ns=/, ""); if ($1 + 0 < min) bad++ }
				END { exit !(n >= 3 && !bad) }' ||
			fail "AllReduce durations below NCCL_DOUBLE_DELAY_US"
	fi
	grep -q "^dropped=0$" "$T/trace" || fail "records dropped: $(grep dropped= "$T/trace")"
	echo "ok: $n records match the driver's calls into $lib"
}
