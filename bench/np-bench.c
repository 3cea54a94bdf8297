// SPDX-License-Identifier: GPL-2.0
/*
 * np-bench: ns per startEvent + stopEvent pair through the NCCL profiler
 * plugin, as NCCL's proxy thread makes them (ProxyStep under a ProxyOp),
 * in bursts with pauses between them so that a reader can drain: only the
 * bursts are timed.
 *   np-bench PLUGIN.so PAIRS BURST PAUSE_US HOLD_MS
 * HOLD_MS: wait after init (a live reader attaches to the rings).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../producers/nccl-profiler/nccl_profiler_abi.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
	ncclProfilerEventDescr_v5_t op, st;
	ncclProfiler_v5_t *p;
	long pairs, burst, pause_us, hold;
	double busy = 0;
	void *ctx, *oph, *h, *dl;
	int mask;

	if (argc != 6) {
		fprintf(stderr, "usage: np-bench PLUGIN.so PAIRS BURST PAUSE_US HOLD_MS\n");
		return 2;
	}
	pairs = atol(argv[2]);
	burst = atol(argv[3]);
	pause_us = atol(argv[4]);
	hold = atol(argv[5]);
	dl = dlopen(argv[1], RTLD_NOW);
	p = dl ? dlsym(dl, "ncclProfiler_v5") : NULL;
	if (!p || burst < 1) {
		fprintf(stderr, "np-bench: %s\n", dl ? "no ncclProfiler_v5" : dlerror());
		return 1;
	}
	if (p->init(&ctx, 0xbe9c4, &mask, "bench", 1, 2, 0, NULL) || !ctx) {
		fprintf(stderr, "np-bench: init failed (ring file?)\n");
		return 1;
	}
	if (hold)
		usleep((useconds_t)hold * 1000);
	memset(&op, 0, sizeof(op));
	op.type = ncclProfileProxyOp;
	op.proxyOp.pid = getpid();
	op.proxyOp.nSteps = 8;
	p->startEvent(ctx, &oph, &op);
	memset(&st, 0, sizeof(st));
	st.type = ncclProfileProxyStep;
	st.parentObj = oph;
	for (long done = 0; done < pairs; done += burst) {
		double t0 = now();

		for (long i = 0; i < burst; i++) {
			st.proxyStep.step = (int)i;
			p->startEvent(ctx, &h, &st);
			p->stopEvent(h);
		}
		busy += now() - t0;
		if (pause_us)
			usleep((useconds_t)pause_us);
	}
	p->stopEvent(oph);
	p->finalize(ctx);
	printf("pair_ns %.2f\n", busy / (double)((pairs + burst - 1) / burst * burst));
	return 0;
}
