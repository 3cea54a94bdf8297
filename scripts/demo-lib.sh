# SPDX-License-Identifier: GPL-2.0
# Sourced by scripts/demo.sh and scripts/demo-2hosts.sh (POSIX sh): their
# messages and the checks before a guest boots.  Needs ROOT and OUT.
die() { echo "demo: $*" >&2; exit 1; }
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

# OUT made and absolute; inside the checkout, which the guests mount.
demo_out() {
	mkdir -p "$OUT" || die "cannot make $OUT"
	OUT=$(cd "$OUT" && pwd)
	case "$OUT/" in
	"$ROOT"/*) ;;
	*) die "DEMO_OUT=$OUT is outside the checkout $ROOT (the guests write there)" ;;
	esac
}

# demo_need PROGRAM...: each one built.
demo_need() {
	for f in "$@"; do
		[ -x "$f" ] || die "$f not built: run make demo (or make all first)"
	done
}
