# Shared by tests/lib/*.test: build the library, tool and generator once.
set -eu
RDT_ROOT=${RDT_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
RDT_BUILD=${RDT_BUILD:-$RDT_ROOT/build}
T=$(mktemp -d /tmp/rdt-libtest.XXXXXX)
trap 'rm -rf "$T"' EXIT
make -s -C "$RDT_ROOT/lib" >/dev/null
make -s -C "$RDT_ROOT/tools" >/dev/null
DUMP=${DUMP:-$RDT_BUILD/bin/rdmatrace-dump}
GEN=$RDT_BUILD/tests/lib/rdt-gen
mkdir -p "$RDT_BUILD/tests/lib"
if [ ! -x "$GEN" ] || [ "$RDT_ROOT/tests/lib/rdt-gen.c" -nt "$GEN" ]; then
	cc -std=gnu11 -Wall -Wextra -Werror -I"$RDT_ROOT/include" \
		-o "$GEN" "$RDT_ROOT/tests/lib/rdt-gen.c"
fi
fail() { echo "FAIL: $*"; exit 1; }
