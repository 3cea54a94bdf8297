// SPDX-License-Identifier: GPL-2.0
/*
 * rdt_bench: timing loops for `make bench` (bench-only, never a test).
 *
 * mode=verbs: an RC loopback on one RoCE device (tests/kmod/rdt_loopback.c,
 * as for the test workload), then `iters` rounds of
 *     ib_post_recv(1 WR) ; ib_post_send(1 signalled SEND) ; ib_poll_cq()
 *     until both completions are back
 * after `warmup` untimed rounds.  Results in read-only parameters:
 * total_ns (guest CLOCK_MONOTONIC over the timed rounds), calls (verb calls
 * made: posts + every poll_cq), polls.
 *
 * mode=rate: one CQ, then `iters` calls of ib_poll_cq() on it while it is
 * empty, paced to `rate` calls per second (0: as fast as possible).  With
 * rdmatrace enabled and its event mask set to POLL_CQ only, each call is
 * exactly one trace event: a producer with a known count and rate.
 * Results: total_ns, calls.
 *
 * Everything runs inside module init, so `insmod` returns when it is done;
 * the module is then removed again by the script.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bottom_half.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "rdt_loopback.h"

static char *dev_name_param = "rxe0";
module_param_named(dev, dev_name_param, charp, 0444);
static char *mode = "verbs";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "verbs | rate");
static uint iters = 10000;
module_param(iters, uint, 0444);
static uint warmup = 200;
module_param(warmup, uint, 0444);
static uint size = 64;
module_param(size, uint, 0444);
static ulong rate;
module_param(rate, ulong, 0444);
MODULE_PARM_DESC(rate, "mode=rate: poll_cq calls per second, 0 = unpaced");
static bool wr_cqe;
module_param(wr_cqe, bool, 0444);
MODULE_PARM_DESC(wr_cqe, "mode=verbs: wr_ids are kernel addresses, as a ULP's ib_cqe (rdmatrace hashes them)");

static ulong total_ns;
module_param(total_ns, ulong, 0444);
static ulong calls;
module_param(calls, ulong, 0444);
static ulong polls;
module_param(polls, ulong, 0444);

struct bq {
	struct rdt_lb		lb;
	void			*buf;
	u64			dma;
};

/*
 * Time of each verb call, accumulated (guest ns; instructions under icount).
 * Only the time inside the three verbs counts: the wait for rxe's deferred
 * work between polls is not the verbs' cost and is left out.
 */
static ulong ns_send, ns_recv, ns_poll_hit, ns_poll_empty, n_poll_empty;
module_param(ns_send, ulong, 0444);
module_param(ns_recv, ulong, 0444);
module_param(ns_poll_hit, ulong, 0444);
module_param(ns_poll_empty, ulong, 0444);
module_param(n_poll_empty, ulong, 0444);

/* wr_cqe: a request pool of 128, as a ULP's. */
static struct ib_cqe bq_cqes[128];

/* One round: 1 receive, 1 send, poll until both completions. */
static int bq_round(struct bq *b, u64 n, ulong *ncalls, ulong *npolls)
{
	struct ib_sge rsge = { .addr = b->dma + size, .length = size,
			       .lkey = b->lb.pd->local_dma_lkey };
	struct ib_sge ssge = { .addr = b->dma, .length = size,
			       .lkey = b->lb.pd->local_dma_lkey };
	struct ib_recv_wr rwr = { .wr_id = n, .sg_list = &rsge, .num_sge = 1 };
	struct ib_send_wr swr = { .wr_id = n, .sg_list = &ssge, .num_sge = 1,
				  .opcode = IB_WR_SEND,
				  .send_flags = IB_SEND_SIGNALED };
	unsigned long deadline = jiffies + 10 * HZ;
	struct ib_wc wc[2];
	int got = 0, r, i, spins = 0;
	u64 t0, t1;

	if (wr_cqe) {
		n = (u64)(uintptr_t)&bq_cqes[n % ARRAY_SIZE(bq_cqes)];
		rwr.wr_id = n;
		swr.wr_id = n;
	}
	t0 = ktime_get_ns();
	r = ib_post_recv(b->lb.qb, &rwr, NULL);
	t1 = ktime_get_ns();
	ns_recv += t1 - t0;
	if (r)
		return r;
	/*
	 * Bottom halves off around the post: rxe's post_send schedules its
	 * requester's tasklet, and raising the softirq from task context
	 * wakes ksoftirqd, some 500 instructions of the scheduler's inside
	 * the timed call or not, as the timing of the round fell.  That made
	 * post_send's figure sit in modes that moved by up to 100 a call
	 * with no change in the module (bench/NOTES.md, 38th session).  The
	 * softirq runs at local_bh_enable(), outside the timed call, as
	 * rxe's other deferred work does; the wrappers see task context
	 * (in_task()) either way.
	 */
	local_bh_disable();
	t0 = ktime_get_ns();
	r = ib_post_send(b->lb.qa, &swr, NULL);
	t1 = ktime_get_ns();
	local_bh_enable();
	ns_send += t1 - t0;
	if (r)
		return r;
	*ncalls += 2;
	while (got < 2) {
		t0 = ktime_get_ns();
		r = ib_poll_cq(b->lb.cq, 2, wc);
		t1 = ktime_get_ns();
		(*ncalls)++;
		(*npolls)++;
		if (r < 0)
			return r;
		if (r > 0) {
			ns_poll_hit += t1 - t0;
		} else {
			ns_poll_empty += t1 - t0;
			n_poll_empty++;
		}
		for (i = 0; i < r; i++)
			if (wc[i].status != IB_WC_SUCCESS || wc[i].wr_id != n)
				return -EIO;
		got += r;
		if (!r) {
			/* Let rxe's tasklets (6.1) or work items (6.12) run. */
			local_bh_disable();
			local_bh_enable();
			if (++spins > 4)
				usleep_range(10, 20);
			else
				cond_resched();
			if (time_after(jiffies, deadline))
				return -ETIMEDOUT;
		}
	}
	return 0;
}

static int bench_verbs(struct bq *b)
{
	ulong c = 0, p = 0;
	u64 t0, i;
	int ret;

	b->buf = kzalloc(2 * size, GFP_KERNEL);
	if (!b->buf)
		return -ENOMEM;
	b->dma = ib_dma_map_single(b->lb.dev, b->buf, 2 * size,
				   DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(b->lb.dev, b->dma)) {
		b->dma = 0;
		return -ENOMEM;
	}
	ret = rdt_lb_setup(&b->lb, 0, 16);
	if (ret)
		return ret;

	for (i = 0; i < warmup && !ret; i++)
		ret = bq_round(b, i, &c, &p);
	c = 0;
	p = 0;
	ns_send = 0;
	ns_recv = 0;
	ns_poll_hit = 0;
	ns_poll_empty = 0;
	n_poll_empty = 0;
	t0 = ktime_get_ns();
	for (i = 0; i < iters && !ret; i++) {
		ret = bq_round(b, i, &c, &p);
		if (!(i & 255))
			cond_resched();
	}
	total_ns = ktime_get_ns() - t0;
	calls = c;
	polls = p;
	return ret;
}

static int bench_rate(struct bq *b)
{
	u64 t0, next, step = rate ? NSEC_PER_SEC / rate : 0;
	u64 frac = rate ? NSEC_PER_SEC % rate : 0, acc = 0;
	struct ib_wc wc;
	ulong i;
	int r;

	b->lb.cq = ib_alloc_cq(b->lb.dev, NULL, 16, 0, IB_POLL_DIRECT);
	if (IS_ERR(b->lb.cq)) {
		r = PTR_ERR(b->lb.cq);
		b->lb.cq = NULL;
		return r;
	}
	t0 = ktime_get_ns();
	next = t0;
	for (i = 0; i < iters; i++) {
		if (rate) {
			while (ktime_get_ns() < next)
				cpu_relax();
			next += step;
			acc += frac;
			if (acc >= rate) {
				acc -= rate;
				next++;
			}
		}
		r = ib_poll_cq(b->lb.cq, 1, &wc);
		if (r < 0)
			return r;
		if (!(i & 1023))
			cond_resched();
	}
	total_ns = ktime_get_ns() - t0;
	calls = iters;
	return 0;
}

static void bq_teardown(struct bq *b)
{
	rdt_lb_teardown(&b->lb);
	if (b->dma)
		ib_dma_unmap_single(b->lb.dev, b->dma, 2 * size,
				    DMA_BIDIRECTIONAL);
	kfree(b->buf);
}

static int __init rb_init(void)
{
	struct bq b = {};
	int ret;

	if (!iters || !size || size > 4096)
		return -EINVAL;
	b.lb.dev = ib_device_get_by_name(dev_name_param, RDMA_DRIVER_UNKNOWN);
	if (!b.lb.dev) {
		pr_err("no RDMA device %s\n", dev_name_param);
		return -ENODEV;
	}
	if (!strcmp(mode, "verbs"))
		ret = bench_verbs(&b);
	else if (!strcmp(mode, "rate"))
		ret = bench_rate(&b);
	else
		ret = -EINVAL;
	bq_teardown(&b);
	ib_device_put(b.lb.dev);
	if (ret) {
		pr_err("mode=%s failed: %d\n", mode, ret);
		return ret;
	}
	pr_info("mode=%s iters=%u total_ns=%lu calls=%lu polls=%lu\n", mode,
		iters, total_ns, calls, polls);
	return 0;
}

static void __exit rb_exit(void)
{
}

module_init(rb_init);
module_exit(rb_exit);
MODULE_DESCRIPTION("rdmatrace bench: kernel verbs timing loops");
MODULE_LICENSE("GPL");
