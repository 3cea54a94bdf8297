#!/bin/sh
# Seeds for fuzz_ring.c in directory $1: real ring files of np-driver
# (2 rings of 8 slots, full, with drops counted; left by a process killed
# before finalize), each behind a few operation strings (fuzz_ring.c's
# first 8 bytes): passes only, truncated to 0 and to half, grown,
# rewritten, a head moved on, replaced.
set -eu
RDT_ROOT=${RDT_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
RDT_BUILD=${RDT_BUILD:-$RDT_ROOT/build}
S=$(mktemp -d /tmp/rdt-npseed.XXXXXX)
trap 'rm -rf "$S"' EXIT
mkdir -p "$1"
rc=0
RDMATRACE_NCCL_DIR=$S RDMATRACE_NCCL_SLOTS=8 RDMATRACE_NCCL_RINGS=2 \
	NCCL_PROFILER_PLUGIN=rdmatrace LD_LIBRARY_PATH="$RDT_BUILD/lib" \
	"$RDT_BUILD/tests/nccl-plugin/np-driver" --comms 1 --iters 1 --bad \
	--crash 2>/dev/null || rc=$?
[ $rc = 137 ] || { echo "fuzz-seeds: np-driver --crash: exit $rc, not killed" >&2; exit 1; }
set -- "$1" "$S"/rdmatrace-nccl.*
[ -f "$2" ] || { echo "fuzz-seeds: no ring file left" >&2; exit 1; }
python3 - "$1" "$2" <<'PY'
import sys
out, ring = sys.argv[1], open(sys.argv[2], "rb").read()
# op byte: operation in the low 3 bits, its argument above
ops = {"passes": [0] * 8, "trunc0": [0, 2, 0, 0, 0, 0, 0, 0],
       "trunchalf": [0, 8 << 3 | 2, 0, 0, 0, 0, 0, 0],
       "grow": [0, 31 << 3 | 2, 0, 3, 0, 0, 0, 0],
       "rewrite": [0, 4 << 3 | 4, 0, 3, 0, 0, 7, 0],
       "head": [0, 5 << 3 | 4, 0, 1 << 3 | 4, 0, 5, 0, 0],
       "replace": [0, 6, 0, 0, 0, 0, 0, 0]}
for name, o in ops.items():
    open(f"{out}/{name}", "wb").write(bytes(o) + ring)
PY
