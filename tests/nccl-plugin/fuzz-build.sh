#!/bin/sh
# Builds the ring-file fuzz target (fuzz_ring.c) with libFuzzer, ASan and
# UBSan into $1, with librdmatrace's sources as lib/Makefile lists them:
# tests/nccl-plugin/fuzz.test and scripts/stress.sh build it so.
set -eu
RDT_ROOT=${RDT_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
RDT_BUILD=${RDT_BUILD:-$RDT_ROOT/build}
L=$RDT_ROOT/lib
mkdir -p "$(dirname "$1")"
# shellcheck disable=SC2046
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-I"$L/include" -I"$RDT_ROOT/include" -I"$L" -o "$1" \
	"$RDT_ROOT/tests/nccl-plugin/fuzz_ring.c" \
	$(for f in $(make --no-print-directory -s -C "$L" print-srcs); do echo "$L/$f"; done) \
	-lsqlite3 -lm
