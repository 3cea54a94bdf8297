#!/bin/sh
# Builds a libFuzzer target SRC (with ASan and UBSan) into OUT, linked
# against librdmatrace built once for every target the same way
# (make -C lib FUZZ=1: build/lib-fuzz, its objects compiled in parallel
# and kept): tests/lib/fuzz.test, tests/nccl-plugin/fuzz.test and
# scripts/stress.sh build their targets so.
#   tests/fuzz-build.sh SRC OUT
set -eu
RDT_ROOT=${RDT_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
RDT_BUILD=${RDT_BUILD:-$RDT_ROOT/build}
L=$RDT_ROOT/lib
make --no-print-directory -s -C "$L" FUZZ=1 BUILD="$RDT_BUILD" \
	-j"$(nproc 2>/dev/null || echo 2)" >&2
mkdir -p "$(dirname "$2")"
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-I"$L/include" -I"$RDT_ROOT/include" -I"$L" -o "$2" "$1" \
	"$RDT_BUILD/lib-fuzz/librdmatrace.a" -lsqlite3 -lm
