# SPDX-License-Identifier: GPL-2.0
# Shared by tests/ring/*.test (guest side): bring up rxe0, find the binary.
RDT_ROOT=${RDT_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
RDT_BUILD=${RDT_BUILD:-$RDT_ROOT/build}
RRA=$RDT_BUILD/bin/rdma-ring-allreduce

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

[ -x "$RRA" ] || skip "$RRA not built (make -C tools/rdma-ring-allreduce)"
command -v rdt-rdma-up >/dev/null 2>&1 || skip "no rdt-rdma-up: not in the test-bed guest"
rdt-rdma-up rxe >/dev/null || fail "rdt-rdma-up rxe"
. /run/rdt-rdma.env
[ -n "${RXE_DEV:-}" ] || fail "rdt-rdma-up wrote no RXE_DEV"
# Registrations pin memory; the guest's default limit is small.
ulimit -l unlimited 2>/dev/null || true

# Pass the GID index rdt-rdma-up found, as a user would.
rra() { "$RRA" -d "$RXE_DEV" ${RXE_GID:+-g "$RXE_GID"} "$@"; }
