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

/* USDT argument @i of the probe, 0 where it cannot be read. */
static __always_inline long uarg(struct pt_regs *ctx, __u64 i)
{
	long v = 0;

	bpf_usdt_arg(ctx, i, &v);
	return v;
}

/*
 * The record is reserved first and each argument read straight into it:
 * one stack slot, where six locals made a 64-byte frame that 7.2 gives a
 * private stack (tests/bpf/stack-depth.test).
 */
static __always_inline void mark(struct pt_regs *ctx, __u32 phase)
{
	struct rdt_ev_coll_mark *e;

	e = RDT_RESERVE(RDT_EV_COLL_MARK, struct rdt_ev_coll_mark, bpf_ktime_get_ns(), RDT_NO_DEV);
	if (!e)
		return;
	e->op = uarg(ctx, 0);
	e->bytes = uarg(ctx, 1);
	e->rank = uarg(ctx, 2);
	e->nranks = uarg(ctx, 3);
	e->seq = uarg(ctx, 4);
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

	e = RDT_RESERVE(RDT_EV_COLL_STEP, struct rdt_ev_coll_step, bpf_ktime_get_ns(), RDT_NO_DEV);
	if (!e)
		return 0;
	e->op = uarg(ctx, 0);
	e->seq = uarg(ctx, 1);
	e->step = uarg(ctx, 2);
	e->steps = uarg(ctx, 3);
	e->rank = uarg(ctx, 4);
	e->nranks = uarg(ctx, 5);
	e->pad = 0;
	rdt_submit(e);
	return 0;
}
