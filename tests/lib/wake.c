// SPDX-License-Identifier: GPL-2.0
/*
 * How often a live reader looks at a ring-buffer source (BPF's) while a
 * record waits out the reorder window (tests/lib/wake.test).  A drained
 * ring's horizon trails the clock by the whole window, so the record is
 * due a window after its stamp and the reader needs a handful of passes
 * in between; it used to take relay's lag (a tenth) for every source and
 * look every millisecond for the rest, ~90 passes a record, each a vCPU
 * taken from the traced workload.
 *
 *   wake ROUNDS     prints "round N: emitted after MS ms, PASSES passes"
 *                   and exits 1 if a round took too many passes or came
 *                   out before its window.
 */
#include <rdmatrace/rdmatrace.h>
#include <rdmatrace/wire.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WINDOW_NS	100000000ull
/* The record's own passes (the one that reads it, the one that emits
 * it), and room for the -EAGAIN returns of the 1 s timeout below and a
 * stray early wake: far below the ~90 of a pass per millisecond. */
#define MAX_PASSES	10

struct ring {
	unsigned int	passes;
	int		pending;
	uint64_t	stamped;
};

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int ring_fd(void *ctx)
{
	(void)ctx;
	return -1;	/* as BPF's ring buffer without a wakeup: passes only */
}

static int ring_consume(void *ctx, int (*cb)(void *, const void *, size_t),
			void *cbctx)
{
	struct ring *g = ctx;
	struct rdt_ev_tcp_retransmit rec;
	int ret;

	g->passes++;
	if (!g->pending)
		return 0;
	g->pending = 0;
	memset(&rec, 0, sizeof(rec));
	rec.hdr.magic = RDT_REC_MAGIC;
	rec.hdr.version = RDT_ABI_MAJOR;
	rec.hdr.source = RDT_SRC_BPF;
	rec.hdr.type = RDT_EV_TCP_RETRANSMIT;
	rec.hdr.size = sizeof(rec);
	rec.hdr.pid = rec.hdr.tid = (uint32_t)getpid();
	rec.hdr.dev = RDT_NO_DEV;
	rec.family = 2;
	rec.hdr.ts_ns = g->stamped = mono_ns();
	ret = cb(cbctx, &rec, sizeof(rec));
	return ret < 0 ? ret : 1;
}

static const struct rdt_source_ops ring_ops = {
	.fd = ring_fd,
	.consume = ring_consume,
};

int main(int argc, char **argv)
{
	struct rdt_reader_opts o = { .sz = sizeof(o), .follow = true,
				     .reorder_window_ns = WINDOW_NS };
	int rounds = argc > 1 ? atoi(argv[1]) : 3, bad = 0;
	struct ring g = { 0 };
	struct rdt_reader *r = rdt_reader_new(&o);
	struct rdt_event ev;

	if (!r || rdt_reader_add_source(r, "ring", &ring_ops, &g) < 0) {
		fprintf(stderr, "wake: %s\n", r ? rdt_reader_error(r) : "no reader");
		return 2;
	}
	for (int i = 1; i <= rounds; i++) {
		uint64_t at;
		int n;

		g.pending = 1;
		g.passes = 0;
		/* The task's COMM record comes first, the first round. */
		do
			n = rdt_reader_next(r, &ev, 1000);
		while ((n == -11 /* -EAGAIN */ && g.passes < 10000) ||
		       (n == 1 && ev.rec.hdr.type != RDT_EV_TCP_RETRANSMIT));
		at = mono_ns();
		if (n != 1) {
			fprintf(stderr, "wake: round %d: no record (%d)\n", i, n);
			rdt_reader_free(r);
			return 2;
		}
		printf("round %d: emitted after %.1f ms, %u passes\n", i,
		       (double)(at - g.stamped) / 1e6, g.passes);
		if (g.passes > MAX_PASSES) {
			printf("FAIL: round %d: %u passes over one record's window (want <= %d)\n",
			       i, g.passes, MAX_PASSES);
			bad = 1;
		}
		if (at - g.stamped < WINDOW_NS) {
			printf("FAIL: round %d: out %.1f ms after its stamp, inside the %llu ms window\n",
			       i, (double)(at - g.stamped) / 1e6, WINDOW_NS / 1000000);
			bad = 1;
		}
	}
	rdt_reader_free(r);
	return bad;
}
