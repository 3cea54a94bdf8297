#!/bin/sh
# Install every Debian package rdmatrace needs to build, test and demo.
# Idempotent and non-interactive; runs `apt-get update` once per call.
set -eu

K612=${K612:-6.12.117+deb12-amd64}
# The PREEMPT_RT build of the same version (tests/vm/kernels debian-6.12-rt).
K612RT=${K612%-amd64}-rt-amd64

PKGS="
build-essential make gcc bc bison flex libssl-dev libelf-dev zlib1g-dev
dwarves cpio kmod xz-utils zstd rsync pkg-config python3 patch
linux-image-amd64 linux-headers-amd64 linux-source-6.1
linux-image-${K612}-unsigned linux-headers-${K612} linux-source-6.12
linux-image-${K612RT}-unsigned linux-headers-${K612RT}
qemu-system-x86 busybox-static iproute2 gdb
rdma-core ibverbs-utils rdmacm-utils perftest ibverbs-providers
libibverbs-dev librdmacm-dev
libbpf-dev bpftool clang llvm libclang-rt-14-dev
libsqlite3-dev sqlite3 systemtap-sdt-dev
libmicrohttpd-dev prometheus
dkms
bpftrace trace-cmd linux-perf valgrind
debhelper dh-dkms lintian
"

if [ "$(id -u)" != 0 ]; then
	echo "deps: must run as root (apt-get install)" >&2
	exit 1
fi

missing=
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "deps: all packages present"
	exit 0
fi
echo "deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# The kernel images are only unpacked for the guests; skip the host's
# bootloader and initramfs hooks, which are meaningless here.
apt-get install -y -qq --no-install-recommends \
	-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
	$missing
