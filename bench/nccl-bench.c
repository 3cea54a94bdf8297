// SPDX-License-Identifier: GPL-2.0
/*
 * nccl-bench LIB N: time N calls of ncclAllReduce (comm NULL: the real
 * library rejects it after its argument checks, the test double returns
 * at once) and N calls of ncclGetVersion through dlopen(LIB).  Prints
 *   allreduce_ns_per_call X
 *   getversion_ns_per_call Y
 * Traced vs untraced, the difference is the uprobe + uretprobe cost.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

typedef int (*allreduce_fn)(const void *, void *, size_t, int, int, void *, void *);
typedef int (*version_fn)(int *);

static uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	static float buf[64];
	allreduce_fn ar;
	version_fn gv;
	uint64_t t0, t1;
	long n;
	int v;
	void *h;

	if (argc != 3) {
		fprintf(stderr, "usage: nccl-bench LIB N\n");
		return 2;
	}
	n = atol(argv[2]);
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "nccl-bench: %s\n", dlerror());
		return 1;
	}
	ar = (allreduce_fn)dlsym(h, "ncclAllReduce");
	gv = (version_fn)dlsym(h, "ncclGetVersion");
	if (!ar || !gv) {
		fprintf(stderr, "nccl-bench: missing symbols\n");
		return 1;
	}
	/* Warm up: first calls resolve lazily, fault pages in. */
	for (int i = 0; i < 1000; i++) {
		ar(buf, buf, 64, 7 /* float */, 0 /* sum */, NULL, NULL);
		gv(&v);
	}
	t0 = now();
	for (long i = 0; i < n; i++)
		ar(buf, buf, 64, 7, 0, NULL, NULL);
	t1 = now();
	printf("allreduce_ns_per_call %.1f\n", (double)(t1 - t0) / (double)n);
	t0 = now();
	for (long i = 0; i < n; i++)
		gv(&v);
	t1 = now();
	printf("getversion_ns_per_call %.1f\n", (double)(t1 - t0) / (double)n);
	printf("pid %d\n", (int)getpid());
	return 0;
}
