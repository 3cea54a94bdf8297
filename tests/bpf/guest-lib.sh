# Sourced by the guest tests of tests/bpf: tracer start/stop around a workload.
RDT_ROOT=${RDT_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
RDT_BUILD=${RDT_BUILD:-$RDT_ROOT/build}
SELFTEST=$RDT_BUILD/bpf/rdt-bpf-selftest

fail() { echo "FAIL: $*"; [ -n "${T:-}" ] && [ -f "$T/status" ] && cat "$T/status"; exit 1; }

T=$(mktemp -d)
trap 'kill $TRACER 2>/dev/null; rm -rf "$T"' EXIT
TRACER=

[ -x "$SELFTEST" ] || fail "$SELFTEST not built (make -C bpf on the host)"

# start_tracer ARGS...: run rdt-bpf-selftest ARGS, wait until attached.
start_tracer() {
	rm -f "$T/ready"
	"$SELFTEST" "$@" --ready="$T/ready" >"$T/trace" 2>"$T/status" &
	TRACER=$!
	for _ in $(seq 600); do
		[ -e "$T/ready" ] && { cat "$T/status"; return 0; }
		kill -0 $TRACER 2>/dev/null || break
		sleep 0.1
	done
	fail "tracer did not attach"
}

stop_tracer() {
	sleep 0.5
	kill -INT $TRACER
	wait $TRACER || fail "tracer exited with $?"
	TRACER=
	grep -q "^dropped=0$" "$T/trace" || fail "records dropped: $(grep dropped= "$T/trace")"
}
