# SPDX-License-Identifier: GPL-2.0
#
# rdmatrace: top-level build.  `make` builds the userspace parts and the
# kernel module (for the running kernel where its headers exist, otherwise
# for every kernel of the test bed); `make KDIR=...` builds for one kernel.
#
#   make deps      install the Debian packages everything needs (root)
#   make check     every test: unit, host BPF, KUnit, VM end-to-end
#   make check-full  the same with every kernel a test names (check= narrows
#                  a few debug-kernel runs out of make check, for CI time)
#   make demo      the main job: a traced ring AllReduce over SoftRoCE
#   make bench     what tracing costs (bench/RESULTS.md)
#   make stress    the long fault tests on the debug kernel
#   make install   library, header, pkg-config, NCCL profiler plugin, tools,
#                  man pages, DKMS source
#   make deb       Debian packages in build/deb (debian/, scripts/deb.sh)

PREFIX	?= /usr/local
DESTDIR	?=
VERSION	:= $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf 2>/dev/null)
B	:= $(CURDIR)/build
KERNELS	= tests/vm/kernels

export PREFIX DESTDIR

.PHONY: all userspace kmod deps check check-full schema demo bench stress kcsan install uninstall \
	clean debug-kernel dkms-install dkms-uninstall deb

all: userspace kmod

# Userspace, in data-flow order: BPF objects feed the library, which the
# tools link; then the test fixtures (NCCL double and driver, ...).
userspace:
	$(if $(wildcard producers/bpf/Makefile),$(MAKE) -C producers/bpf)
	$(if $(wildcard lib/Makefile),$(MAKE) -C lib)
	$(if $(wildcard producers/nccl-profiler/Makefile),$(MAKE) -C producers/nccl-profiler)
	$(if $(wildcard tools/Makefile),$(MAKE) -C tools)
	$(if $(wildcard tools/rdma-ring-allreduce/Makefile),$(MAKE) -C tools/rdma-ring-allreduce)
	$(foreach d,$(wildcard tests/*/Makefile),$(MAKE) -C $(dir $(d)) &&) true

# One kernel: KDIR=... (into build/kmod/<its UTS_RELEASE>); otherwise the
# running kernel's headers where they exist, else each test-bed kernel that
# is available, once per image (mainline is the debug kernel).
kmod:
ifneq ($(KDIR),)
	$(MAKE) -C kmod KDIR=$(KDIR)
else
	@set -e; \
	if [ -d /lib/modules/$$(uname -r)/build ]; then \
		$(MAKE) -C kmod KDIR=/lib/modules/$$(uname -r)/build \
			OUT=$(B)/kmod/$$(uname -r); \
	else \
		$(KERNELS) list | while read -r name kv vmlinuz kdir; do \
			if [ "$$kv" = - ]; then \
				echo "kmod: $$name kernel not built: skipped (make debug-kernel)"; \
				continue; \
			fi; \
			case " $$seen " in *" $$kv "*) continue ;; esac; \
			seen="$$seen $$kv"; \
			$(MAKE) -C kmod KDIR=$$kdir OUT=$(B)/kmod/$$kv; \
		done; \
	fi
endif

debug-kernel:
	$(KERNELS) build-debug

deps:
	scripts/deps.sh

# The tests need every kernel of the test bed and everything built;
# scripts/check.sh times each phase.
check:
	scripts/check.sh

# The C that schema/records.py describes (schema/gen.py says what).
schema:
	python3 schema/gen.py

# make check, and the debug-kernel runs that CI's 90 minutes leave out
# (tests whose line 2 says check=...)
check-full:
	scripts/check.sh --full

# KERNEL=NAME (a test-bed kernel: tests/vm/kernels names) boots that one;
# mainline and debug are the debug kernel's image, built first.
demo: deps
	$(if $(filter mainline debug,$(KERNEL)),$(MAKE) debug-kernel)
	$(MAKE) all
	scripts/demo.sh

bench: deps
	$(MAKE) debug-kernel
	$(MAKE) all
	scripts/bench.sh

stress: deps
	$(MAKE) debug-kernel
	$(MAKE) all
	scripts/stress.sh

# Churn and unload on the KCSAN kernel (built on first use, ~10 min).
kcsan: deps
	$(MAKE) all
	scripts/kcsan.sh

install: userspace
	$(if $(wildcard lib/Makefile),$(MAKE) -C lib install)
	$(if $(wildcard producers/nccl-profiler/Makefile),$(MAKE) -C producers/nccl-profiler install)
	$(if $(wildcard tools/Makefile),$(MAKE) -C tools install)
	$(if $(wildcard tools/rdma-ring-allreduce/Makefile),$(MAKE) -C tools/rdma-ring-allreduce install)
	scripts/dkms.sh install

deb:
	scripts/deb.sh $(B)/deb

uninstall:
	scripts/dkms.sh uninstall
	$(if $(wildcard tools/rdma-ring-allreduce/Makefile),$(MAKE) -C tools/rdma-ring-allreduce uninstall)
	$(if $(wildcard tools/Makefile),$(MAKE) -C tools uninstall)
	$(if $(wildcard producers/nccl-profiler/Makefile),$(MAKE) -C producers/nccl-profiler uninstall)
	$(if $(wildcard lib/Makefile),$(MAKE) -C lib uninstall)

clean:
	rm -rf $(B)
