# SPDX-License-Identifier: GPL-2.0
# Host side of the two-guest runs (tests/multihost/ring2.test, make demo
# HOSTS=2): boot guests A and B joined by a wire, sharing memory for the
# clock truth, each running tests/multihost/guest.sh; collect both exits.
#
#   . tests/multihost/lib.sh
#   mh_run KERNEL TIMEOUT OUTDIR [ring size options]
#
# OUTDIR must be inside the checkout (the guests write there).  Each
# guest's console goes to OUTDIR/A.console, B.console.  Returns 0 when
# both guests exited 0; MH_RC_A, MH_RC_B hold the two exit codes and
# MH_SECS the wall time.  MH_SKEW etc. pass through to guest.sh.
MH_ROOT=${MH_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}

# A TCP port nothing on 127.0.0.1 listens on now (the wire).
mh_free_port() {
	local p
	for _ in $(seq 50); do
		p=$((20000 + RANDOM % 40000))
		[ -z "$(ss -Hltn "sport = :$p" 2>/dev/null)" ] && { echo "$p"; return 0; }
	done
	return 1
}

mh_run() {
	local kernel=$1 timeout=$2 out=$3 port shm pa pb t0 first rc other i
	shift 3
	port=$(mh_free_port) || { echo "mh_run: no free port" >&2; return 1; }
	shm=$(mktemp /dev/shm/rdt-mh.XXXXXX) || return 1
	truncate -s 1M "$shm"
	mkdir -p "$out"
	rm -f "$out"/A.* "$out"/B.* "$out"/clock-*.txt "$out"/skew.txt
	t0=$(date +%s)
	echo "mh_run: guests A (192.0.2.1) and B (192.0.2.2), $kernel, wire on 127.0.0.1:$port, shared memory $shm" >&2
	"$MH_ROOT/tests/vm/run" --kernel "$kernel" --timeout "$timeout" \
		--wire "listen:$port" --wire-ip 192.0.2.1/24 --shm "$shm" -- \
		"$MH_ROOT/tests/multihost/guest.sh" A "$out" "$@" >"$out/A.console" 2>&1 &
	pa=$!
	"$MH_ROOT/tests/vm/run" --kernel "$kernel" --timeout "$timeout" \
		--wire "connect:$port" --wire-ip 192.0.2.2/24 --shm "$shm" -- \
		"$MH_ROOT/tests/multihost/guest.sh" B "$out" "$@" >"$out/B.console" 2>&1 &
	pb=$!
	# The first to end: if it failed, the other would wait for it until
	# its own deadlines: give it 30 s, then stop it.
	wait -n -p first $pa $pb
	rc=$?
	if [ "$first" = $pa ]; then MH_RC_A=$rc other=$pb; else MH_RC_B=$rc other=$pa; fi
	if [ $rc != 0 ]; then
		for i in $(seq 150); do
			kill -0 $other 2>/dev/null || break
			sleep 0.2
		done
		kill $other 2>/dev/null
	fi
	wait $other
	rc=$?
	if [ $other = $pa ]; then MH_RC_A=$rc; else MH_RC_B=$rc; fi
	MH_SECS=$(($(date +%s) - t0))
	rm -f "$shm"
	echo "mh_run: A exited $MH_RC_A, B exited $MH_RC_B, after ${MH_SECS}s" >&2
	[ $MH_RC_A = 0 ] && [ $MH_RC_B = 0 ]
}
