// SPDX-License-Identifier: GPL-2.0
/*
 * USDT markers of tools/rdma-ring-allreduce: provider rdmatrace, probes
 * coll_begin / coll_end (op, bytes, rank, nranks, seq).  They bracket a
 * collective in the application's own terms, so the join with rxe and
 * kmod records needs no NCCL at all.  coll_step (op, seq, step, steps,
 * rank, nranks): a rank began a step, posting its first send; it says
 * where each rank is in a collective that does not end.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>
#include "rdt_emit.bpf.h"

char LICENSE[] SEC("license") = "GPL";

static __always_inline void mark(struct pt_regs *ctx, __u32 phase)
{
	struct rdt_ev_coll_mark *e;
	long op = 0, bytes = 0, rank = 0, nranks = 0, seq = 0;

	bpf_usdt_arg(ctx, 0, &op);
	bpf_usdt_arg(ctx, 1, &bytes);
	bpf_usdt_arg(ctx, 2, &rank);
	bpf_usdt_arg(ctx, 3, &nranks);
	bpf_usdt_arg(ctx, 4, &seq);
	e = RDT_RESERVE(RDT_EV_COLL_MARK, struct rdt_ev_coll_mark, bpf_ktime_get_ns(), RDT_NO_DEV);
	if (!e)
		return;
	e->op = op;
	e->bytes = bytes;
	e->rank = rank;
	e->nranks = nranks;
	e->seq = seq;
	e->phase = phase;
	rdt_submit(e);
}

SEC("usdt")
int coll_begin(struct pt_regs *ctx)
{
	mark(ctx, 0);
	return 0;
}

SEC("usdt")
int coll_end(struct pt_regs *ctx)
{
	mark(ctx, 1);
	return 0;
}

SEC("usdt")
int coll_step(struct pt_regs *ctx)
{
	struct rdt_ev_coll_step *e;
	long v = 0;

	/* One argument at a time through one slot: six locals made a
	 * 64-byte frame, which 7.2 gives a private stack
	 * (tests/bpf/stack-depth.test). */
	e = RDT_RESERVE(RDT_EV_COLL_STEP, struct rdt_ev_coll_step, bpf_ktime_get_ns(), RDT_NO_DEV);
	if (!e)
		return 0;
	bpf_usdt_arg(ctx, 0, &v);
	e->op = v;
	v = 0;
	bpf_usdt_arg(ctx, 1, &v);
	e->seq = v;
	v = 0;
	bpf_usdt_arg(ctx, 2, &v);
	e->step = v;
	v = 0;
	bpf_usdt_arg(ctx, 3, &v);
	e->steps = v;
	v = 0;
	bpf_usdt_arg(ctx, 4, &v);
	e->rank = v;
	v = 0;
	bpf_usdt_arg(ctx, 5, &v);
	e->nranks = v;
	e->pad = 0;
	rdt_submit(e);
	return 0;
}
