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
# both guests exited 0; MH_RC_A, MH_RC_B hold the two exit codes,
# MH_SECS the wall time and MH_BOOTS how many times the pair was booted.
# MH_SKEW, MH_NLOCAL, MH_PORT, MH_TIMEOUT, MH_CUT and MH_STUCK go to guest.sh on
# its command line (tests/vm/run passes no environment into the guest).
#
# A guest that dies while booting (under TCG a stock kernel oopses at
# random in its boot-time code patching) ends its side of the wire, which
# the other QEMU cannot join again: tests/vm/run then exits 123 instead of
# booting once more, and both guests are booted again, once; the first
# pair's consoles are kept as OUTDIR/A.console.1, B.console.1.
# MH_FAIL_BOOT=A (or B) makes that guest's first boot die (an init that
# does not exist), to prove the path.
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

# One boot of the pair: mh_pair KERNEL TIMEOUT OUTDIR FAILBOOT [ring args].
# Sets MH_RC_A, MH_RC_B.
mh_pair() {
	local kernel=$1 timeout=$2 out=$3 failboot=$4 port shm pa pb first rc other i v
	local -a xa=() xb=() ge=(env)
	shift 4
	for v in MH_SKEW MH_NLOCAL MH_PORT MH_TIMEOUT MH_CUT MH_STUCK; do
		[ -z "${!v:-}" ] || ge+=("$v=${!v}")
	done
	port=$(mh_free_port) || { echo "mh_run: no free port" >&2; return 1; }
	shm=$(mktemp /dev/shm/rdt-mh.XXXXXX) || return 1
	truncate -s 1M "$shm"
	case $failboot in
	A) xa=(--append rdinit=/rdt-no-such-init) ;;
	B) xb=(--append rdinit=/rdt-no-such-init) ;;
	esac
	# One host thread per guest (--tcg-thread single): the two guests'
	# four vCPUs already share this machine's 2 cores, and the pair runs
	# faster so (ring2 [debian-6.12]: 14 s, not 18 s).  Multi-threaded TCG
	# also lost one CI run (stop 50): B oopsed in tcp_connect() while its
	# rdmatrace-dump attached its BPF programs, i.e. while the kernel
	# patched its text (static keys, fentry) on one vCPU and ran it on the
	# other, the hazard tests/vm/run's boot retry names.  Not reproduced
	# in 10 runs; its report had lost the oops' first lines.
	echo "mh_run: guests A (192.0.2.1) and B (192.0.2.2), $kernel, wire on 127.0.0.1:$port, shared memory $shm${failboot:+, the boot of $failboot made to die}" >&2
	"$MH_ROOT/tests/vm/run" --kernel "$kernel" --timeout "$timeout" --tcg-thread single ${xa[@]+"${xa[@]}"} \
		--wire "listen:$port" --wire-ip 192.0.2.1/24 --shm "$shm" -- \
		"${ge[@]}" "$MH_ROOT/tests/multihost/guest.sh" A "$out" "$@" >"$out/A.console" 2>&1 &
	pa=$!
	"$MH_ROOT/tests/vm/run" --kernel "$kernel" --timeout "$timeout" --tcg-thread single ${xb[@]+"${xb[@]}"} \
		--wire "connect:$port" --wire-ip 192.0.2.2/24 --shm "$shm" -- \
		"${ge[@]}" "$MH_ROOT/tests/multihost/guest.sh" B "$out" "$@" >"$out/B.console" 2>&1 &
	pb=$!
	# The first to end: if it failed, the other would wait for it until
	# its own deadlines: give it 30 s (none if the first never booted:
	# the wire is gone), then stop it.
	wait -n -p first $pa $pb
	rc=$?
	if [ "$first" = $pa ]; then MH_RC_A=$rc other=$pb; else MH_RC_B=$rc other=$pa; fi
	if [ $rc != 0 ]; then
		for i in $(seq 150); do
			[ $rc != 123 ] || break
			kill -0 $other 2>/dev/null || break
			sleep 0.2
		done
		kill $other 2>/dev/null
	fi
	wait $other
	rc=$?
	if [ $other = $pa ]; then MH_RC_A=$rc; else MH_RC_B=$rc; fi
	rm -f "$shm"
}

mh_run() {
	local kernel=$1 timeout=$2 out=$3 t0 failboot=${MH_FAIL_BOOT:-} g
	shift 3
	case $failboot in
	''|A|B) ;;
	*) echo "mh_run: MH_FAIL_BOOT must be A or B, not '$failboot'" >&2; return 1 ;;
	esac
	mkdir -p "$out"
	rm -f "$out"/A.* "$out"/B.* "$out"/clock-*.txt "$out"/skew.txt
	t0=$(date +%s)
	for MH_BOOTS in 1 2; do
		mh_pair "$kernel" "$timeout" "$out" "$failboot" "$@"
		failboot=
		[ $MH_BOOTS = 1 ] && { [ $MH_RC_A = 123 ] || [ $MH_RC_B = 123 ]; } || break
		echo "mh_run: A exited $MH_RC_A, B exited $MH_RC_B: a guest died while booting; booting both again (the first consoles: $out/A.console.1, B.console.1)" >&2
		for g in A B; do
			mv "$out/$g.console" "$out/$g.console.1"
		done
	done
	MH_SECS=$(($(date +%s) - t0))
	echo "mh_run: A exited $MH_RC_A, B exited $MH_RC_B, after ${MH_SECS}s, $MH_BOOTS boot(s) of the pair" >&2
	[ $MH_RC_A = 0 ] && [ $MH_RC_B = 0 ]
}

# mh_consoles OUTDIR: after a failed mh_run, each guest's "mh-guest"
# lines, the first kernel report in its console in full (tests/vm/run
# prints it from its first line when a guest dies: a console's tail alone
# starts inside the trace, without what oopsed), and its last lines.
mh_consoles() {
	local g
	grep -h "^mh-guest" "$1/A.console" "$1/B.console" 2>/dev/null
	for g in A B; do
		if grep -q '^---- first report in full' "$1/$g.console" 2>/dev/null; then
			echo "----- guest $g: the first kernel report in $1/$g.console"
			sed -n '/^---- first report in full/,/^====$/p' "$1/$g.console" | head -n 80
		fi
		echo "----- guest $g: last lines of $1/$g.console"
		tail -n 30 "$1/$g.console"
	done
}
