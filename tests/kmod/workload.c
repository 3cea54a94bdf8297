// SPDX-License-Identifier: GPL-2.0
/*
 * rdt_workload: a deterministic kernel verbs workload for rdmatrace's tests.
 *
 * Loading it runs, `repeat` times (or for `seconds`), an RC loopback on one RoCE device: a PD,
 * one CQ, two RC QPs RESET->INIT->RTR->RTS aimed at each other, `count`
 * receives posted as one list on QP B (wr_id = recv_base + i) and `count`
 * signalled SENDs posted one by one on QP A (wr_id = send_base + i, `size`
 * bytes, byte pattern (i * 7 + 1)), then polls the CQ until every completion
 * arrived and checks statuses, wr_ids, byte counts and the received data.
 *
 * The load fails (-EIO) if anything did not match.  The QPNs and CQ id of
 * the last run are left in the read-only parameters qpn_send, qpn_recv and
 * polls (ib_poll_cq calls) and polls_hit (those that returned completions),
 * for the tests to compare with the trace.
 *
 * With kaddr=1 each run also maps an MR over the receive buffer and posts
 * one signalled RDMA WRITE (wr_id = send_base + count) of the first send
 * into it through the PD's unsafe global rkey: on rxe both carry the
 * buffer's kernel virtual address, which must never reach the trace.
 *
 * With freewr=1 loading only puts an interposer under the device's
 * post_send and post_recv (load rdmatrace after it: rdmatrace then saves
 * the interposer as the driver's op) and keeps the device; each write of 1
 * to the parameter `run` then runs the workload with every WR in its own
 * allocation, which the interposer poisons and frees as soon as the driver
 * took it, as a ULP does whose completion ran before the post returned.
 * A reader of a WR after the driver's return reads freed memory (KASAN) or
 * the poison.  Each run ends with one post_send of three WRs whose second
 * has too many SGEs: the driver posts the first and fails on the second.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include "rdt_loopback.h"

static char *dev_name_param = "rxe0";
module_param_named(dev, dev_name_param, charp, 0444);
MODULE_PARM_DESC(dev, "RDMA device (RoCE) to use, default rxe0");

#ifndef RDT_HAVE_DEVICE_GET_BY_NAME
/*
 * 7.2 has no ib_device_get_by_name(): a client registered for the lookup
 * is offered every registered device and takes a reference on the one so
 * named.  Its add declines every device, so nothing is left to remove.
 */
static const char *wl_want;
static struct ib_device *wl_found;

static int wl_find_add(struct ib_device *dev)
{
	if (!wl_found && !strcmp(dev_name(&dev->dev), wl_want) &&
	    ib_device_try_get(dev))
		wl_found = dev;
	return -EOPNOTSUPP;
}

static struct ib_client wl_find_client = {
	.name = "rdt_workload_find",
	.add = wl_find_add,
	.no_kverbs_req = 1,
};

static struct ib_device *ib_device_get_by_name(const char *name,
					       enum rdma_driver_id driver_id)
{
	wl_want = name;
	wl_found = NULL;
	if (ib_register_client(&wl_find_client))
		return NULL;
	ib_unregister_client(&wl_find_client);
	return wl_found;
}
#endif

static uint count = 16;
module_param(count, uint, 0444);
MODULE_PARM_DESC(count, "receives and sends per run (1..1024), default 16");

static uint size = 64;
module_param(size, uint, 0444);
MODULE_PARM_DESC(size, "bytes per send (1..4096), default 64");

static uint repeat = 1;
module_param(repeat, uint, 0444);
MODULE_PARM_DESC(repeat, "runs (1..100000), default 1");

static uint seconds;
module_param(seconds, uint, 0444);
MODULE_PARM_DESC(seconds, "keep repeating until this many seconds passed (0..600)");

static unsigned long long send_base = 0x5e000000ULL;
module_param(send_base, ullong, 0444);
MODULE_PARM_DESC(send_base, "wr_id of the first send");

static unsigned long long recv_base = 0x7e000000ULL;
module_param(recv_base, ullong, 0444);
MODULE_PARM_DESC(recv_base, "wr_id of the first receive");

static bool kaddr;
module_param(kaddr, bool, 0444);
MODULE_PARM_DESC(kaddr, "also an MR and an RDMA WRITE at kernel addresses");

static bool brackets;
module_param(brackets, bool, 0444);
MODULE_PARM_DESC(brackets, "log each send's ktime_get_ns() just before and after its ib_post_send (dmesg: \"bracket WR_ID BEFORE AFTER\")");

static uint qpn_send;
module_param(qpn_send, uint, 0444);
MODULE_PARM_DESC(qpn_send, "result: QPN of the sending QP (last run)");

static uint qpn_recv;
module_param(qpn_recv, uint, 0444);
MODULE_PARM_DESC(qpn_recv, "result: QPN of the receiving QP (last run)");

static uint polls;
module_param(polls, uint, 0444);
MODULE_PARM_DESC(polls, "result: ib_poll_cq calls (last run)");
static uint polls_hit;
module_param(polls_hit, uint, 0444);
MODULE_PARM_DESC(polls_hit, "result: of those, calls that returned completions");

static bool freewr;
module_param(freewr, bool, 0444);
MODULE_PARM_DESC(freewr, "interpose post_send/post_recv, free WRs once posted; run on writes to run");

static uint post_sleep_ms;
module_param(post_sleep_ms, uint, 0644);
MODULE_PARM_DESC(post_sleep_ms, "freewr: the workload's first post_send of each run sleeps this long inside the interposer, as a driver's spinlock_t can on PREEMPT_RT");

struct wl {
	struct rdt_lb		lb;
	u8			*sbuf, *rbuf;
	u64			sdma, rdma;
};

/* ---- freewr: a post that frees its WRs before it returns --------------- */

static struct ib_device *fw_dev;
static int (*fw_post_send)(struct ib_qp *qp, const struct ib_send_wr *wr,
			   const struct ib_send_wr **bad);
static int (*fw_post_recv)(struct ib_qp *qp, const struct ib_recv_wr *wr,
			   const struct ib_recv_wr **bad);
static struct ib_qp *fw_qa, *fw_qb;	/* the workload's QPs, else NULL */

struct fw_send {
	struct ib_send_wr	wr;
	struct ib_sge		sge[];
};

struct fw_recv {
	struct ib_recv_wr	wr;
	struct ib_sge		sge;
};

/* Poison and free the WRs from wr up to (not including) end. */
static void fw_free_send(const struct ib_send_wr *wr,
			 const struct ib_send_wr *end)
{
	while (wr != end) {
		struct fw_send *f = container_of(wr, struct fw_send, wr);

		wr = wr->next;
		memset(f, 0x6b, struct_size(f, sge, f->wr.num_sge));
		kfree(f);
	}
}

/*
 * The wr_id of a post that the interposer fails (-EINVAL) before the driver
 * sees it, leaving *bad as it was: a driver error path that names no bad
 * WR (rxe's destroyed QP).
 */
#define FW_UNSET	0x200

static int fw_send(struct ib_qp *qp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad)
{
	const struct ib_send_wr *dummy;
	int ret;

	if (qp == READ_ONCE(fw_qa) && wr && wr->wr_id == send_base + FW_UNSET)
		return -EINVAL;
	if (!bad)
		bad = &dummy;
	*bad = NULL;
	/*
	 * Blocked inside the "driver" (the workload's posts run in process
	 * context): what rdmatrace's exit must wait for on PREEMPT_RT.
	 */
	if (qp == READ_ONCE(fw_qa) && wr && wr->wr_id == send_base &&
	    READ_ONCE(post_sleep_ms)) {
		/* In the log: a run holds the module's parameters' lock. */
		pr_info("post_send asleep in the driver\n");
		msleep(READ_ONCE(post_sleep_ms));
		pr_info("post_send awake\n");
	}
	ret = fw_post_send(qp, wr, bad);
	if (qp == READ_ONCE(fw_qa))
		fw_free_send(wr, ret ? *bad : NULL);
	return ret;
}

static int fw_recv(struct ib_qp *qp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad)
{
	const struct ib_recv_wr *dummy, *end;
	int ret;

	if (qp == READ_ONCE(fw_qa) && wr && wr->wr_id == recv_base + FW_UNSET)
		return -EINVAL;
	if (!bad)
		bad = &dummy;
	*bad = NULL;
	ret = fw_post_recv(qp, wr, bad);
	if (qp != READ_ONCE(fw_qb))
		return ret;
	end = ret ? *bad : NULL;
	while (wr != end) {
		struct fw_recv *f = container_of(wr, struct fw_recv, wr);

		wr = wr->next;
		memset(f, 0x6b, sizeof(*f));
		kfree(f);
	}
	return ret;
}

static int fw_install(struct ib_device *dev)
{
	fw_post_send = dev->ops.post_send;
	fw_post_recv = dev->ops.post_recv;
	if (cmpxchg(&dev->ops.post_send, fw_post_send, fw_send) !=
	    fw_post_send)
		return -EBUSY;
	if (cmpxchg(&dev->ops.post_recv, fw_post_recv, fw_recv) !=
	    fw_post_recv) {
		cmpxchg(&dev->ops.post_send, fw_send, fw_post_send);
		return -EBUSY;
	}
	return 0;
}

static void fw_uninstall(struct ib_device *dev)
{
	WARN_ON(cmpxchg(&dev->ops.post_recv, fw_recv, fw_post_recv) != fw_recv);
	WARN_ON(cmpxchg(&dev->ops.post_send, fw_send, fw_post_send) != fw_send);
	synchronize_rcu();
}

/* freewr's posts: every WR allocated alone, freed by the interposer. */
static int fw_post(struct wl *w)
{
	struct ib_recv_wr *head = NULL, **link = &head;
	u32 i;
	int ret;

	for (i = 0; i < count; i++) {
		struct fw_recv *r = kzalloc(sizeof(*r), GFP_KERNEL);

		if (!r) {
			ret = -ENOMEM;
			goto free_recv;
		}
		r->sge.addr = w->rdma + (u64)i * size;
		r->sge.length = size;
		r->sge.lkey = w->lb.pd->local_dma_lkey;
		r->wr.wr_id = recv_base + i;
		r->wr.sg_list = &r->sge;
		r->wr.num_sge = 1;
		*link = &r->wr;
		link = &r->wr.next;
	}
	ret = ib_post_recv(w->lb.qb, head, NULL);	/* frees the list */
	if (ret) {
		pr_err("post_recv: %d\n", ret);
		return ret;
	}
	for (i = 0; i < count; i++) {
		struct fw_send *f = kzalloc(struct_size(f, sge, 1), GFP_KERNEL);

		if (!f)
			return -ENOMEM;
		f->sge[0].addr = w->sdma + (u64)i * size;
		f->sge[0].length = size;
		f->sge[0].lkey = w->lb.pd->local_dma_lkey;
		f->wr.wr_id = send_base + i;
		f->wr.sg_list = f->sge;
		f->wr.num_sge = 1;
		f->wr.opcode = IB_WR_SEND;
		f->wr.send_flags = IB_SEND_SIGNALED;
		ret = ib_post_send(w->lb.qa, &f->wr, NULL);
		if (ret) {
			pr_err("post_send %u: %d\n", i, ret);
			return ret;
		}
	}
	return 0;

free_recv:
	while (head) {
		struct ib_recv_wr *n = head->next;

		kfree(container_of(head, struct fw_recv, wr));
		head = n;
	}
	return ret;
}

/*
 * Three unsignaled zero-length sends, the second with one SGE more than the
 * QP takes: the driver posts the first, fails on the second (-EINVAL) and
 * leaves it and the third to us.  A receive first, for the first send.
 */
static int fw_post_bad(struct wl *w)
{
	const struct ib_send_wr *bad = NULL;
	struct ib_recv_wr rwr = { .wr_id = recv_base + 0x100 };
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;
	struct fw_send *s[3];
	int i, ret, nsge;

	ret = ib_query_qp(w->lb.qa, &attr, IB_QP_CAP, &init);
	if (ret)
		return ret;
	nsge = init.cap.max_send_sge + 1;
	WRITE_ONCE(fw_qb, NULL);	/* rwr is on the stack */
	ret = ib_post_recv(w->lb.qb, &rwr, NULL);
	if (ret)
		return ret;
	for (i = 0; i < 3; i++) {
		s[i] = kzalloc(struct_size(s[i], sge, nsge), GFP_KERNEL);
		if (!s[i]) {
			while (--i >= 0)
				kfree(s[i]);
			return -ENOMEM;
		}
	}
	for (i = 0; i < 3; i++) {
		s[i]->wr.wr_id = send_base + 0x100 + i;
		s[i]->wr.opcode = IB_WR_SEND;
		s[i]->wr.sg_list = s[i]->sge;
		s[i]->wr.num_sge = i == 1 ? nsge : 0;
		s[i]->wr.next = i < 2 ? &s[i + 1]->wr : NULL;
	}
	ret = ib_post_send(w->lb.qa, &s[0]->wr, &bad);
	if (!ret)
		return -EIO;	/* all three posted and freed */
	if (ret != -EINVAL || bad != &s[1]->wr) {
		pr_err("bad post: ret %d, bad_wr %s\n", ret,
		       bad == &s[1]->wr ? "the second" : "another");
		return -EIO;	/* and the unposted ones leak */
	}
	kfree(s[1]);
	kfree(s[2]);
	return 0;
}

/*
 * A failed post whose driver set no bad WR, send and receive: the caller's
 * bad_wr left pointing at a stale one-WR list, as an uninitialised one
 * would point anywhere.  The interposer fails them without touching *bad:
 * the caller must get its pointer back unchanged and rdmatrace must not
 * take the stale list for the unposted tail (POST_FAIL bad_index unknown,
 * not 1).  Of two WRs each, then of one (rdmatrace's lean wrappers, which
 * lend the caller's own bad_wr to the driver for the call).
 */
static int fw_post_unset_n(struct wl *w, int n)
{
	struct ib_send_wr stale_s = { .wr_id = send_base + FW_UNSET + 9 };
	struct ib_recv_wr stale_r = { .wr_id = recv_base + FW_UNSET + 9 };
	struct ib_send_wr s[2] = {
		{ .wr_id = send_base + FW_UNSET, .opcode = IB_WR_SEND,
		  .next = n > 1 ? &s[1] : NULL },
		{ .wr_id = send_base + FW_UNSET + 1, .opcode = IB_WR_SEND },
	};
	struct ib_recv_wr r[2] = {
		{ .wr_id = recv_base + FW_UNSET, .next = n > 1 ? &r[1] : NULL },
		{ .wr_id = recv_base + FW_UNSET + 1 },
	};
	const struct ib_send_wr *bad_s = &stale_s;
	const struct ib_recv_wr *bad_r = &stale_r;
	int ret;

	ret = ib_post_send(w->lb.qa, s, &bad_s);
	if (ret != -EINVAL || bad_s != &stale_s) {
		pr_err("unset post_send of %d: ret %d, bad_wr %s\n", n, ret,
		       bad_s == &stale_s ? "kept" : "changed");
		return -EIO;
	}
	ret = ib_post_recv(w->lb.qa, r, &bad_r);
	if (ret != -EINVAL || bad_r != &stale_r) {
		pr_err("unset post_recv of %d: ret %d, bad_wr %s\n", n, ret,
		       bad_r == &stale_r ? "kept" : "changed");
		return -EIO;
	}
	return 0;
}

static int fw_post_unset(struct wl *w)
{
	return fw_post_unset_n(w, 2) ?: fw_post_unset_n(w, 1);
}

static u8 wl_pattern(u32 i)
{
	return (i * 7 + 1) & 0xff;
}

static int wl_post(struct wl *w)
{
	struct ib_recv_wr *rwr;
	struct ib_sge *rsge;
	u32 i;
	int ret = -ENOMEM;

	rwr = kcalloc(count, sizeof(*rwr), GFP_KERNEL);
	rsge = kcalloc(count, sizeof(*rsge), GFP_KERNEL);
	if (!rwr || !rsge)
		goto out;

	for (i = 0; i < count; i++) {
		rsge[i].addr = w->rdma + (u64)i * size;
		rsge[i].length = size;
		rsge[i].lkey = w->lb.pd->local_dma_lkey;
		rwr[i].wr_id = recv_base + i;
		rwr[i].sg_list = &rsge[i];
		rwr[i].num_sge = 1;
		rwr[i].next = i + 1 < count ? &rwr[i + 1] : NULL;
	}
	ret = ib_post_recv(w->lb.qb, rwr, NULL);
	if (ret) {
		pr_err("post_recv: %d\n", ret);
		goto out;
	}

	for (i = 0; i < count; i++) {
		struct ib_sge sge = {
			.addr	= w->sdma + (u64)i * size,
			.length	= size,
			.lkey	= w->lb.pd->local_dma_lkey,
		};
		struct ib_send_wr wr = {
			.wr_id		= send_base + i,
			.sg_list	= &sge,
			.num_sge	= 1,
			.opcode		= IB_WR_SEND,
			.send_flags	= IB_SEND_SIGNALED,
		};
		u64 before, after;

		before = ktime_get_ns();
		ret = ib_post_send(w->lb.qa, &wr, NULL);
		after = ktime_get_ns();
		if (ret) {
			pr_err("post_send %u: %d\n", i, ret);
			goto out;
		}
		/*
		 * The interposer's record of this post is stamped between the
		 * two: a reference for its clock that a stalled vCPU only
		 * widens (tests/kmod/clock.test).
		 */
		if (brackets)
			pr_info("bracket 0x%llx %llu %llu\n", wr.wr_id, before,
				after);
	}
out:
	kfree(rsge);
	kfree(rwr);
	return ret;
}

static int wl_check_wc(struct wl *w, const struct ib_wc *wc, unsigned long *sent,
		       unsigned long *rcvd)
{
	u64 i;

	if (wc->status != IB_WC_SUCCESS) {
		pr_err("wr_id 0x%llx: status %d (%s)\n", wc->wr_id, wc->status,
		       ib_wc_status_msg(wc->status));
		return -EIO;
	}
	if (wc->opcode == IB_WC_SEND) {
		i = wc->wr_id - send_base;
		if (wc->qp != w->lb.qa || i >= count || test_and_set_bit(i, sent))
			goto bad;
		return 0;
	}
	if (wc->opcode != IB_WC_RECV)
		goto bad;
	i = wc->wr_id - recv_base;
	if (wc->qp != w->lb.qb || i >= count || wc->byte_len != size ||
	    test_and_set_bit(i, rcvd))
		goto bad;
	return 0;
bad:
	pr_err("unexpected completion: wr_id 0x%llx opcode %d byte_len %u\n",
	       wc->wr_id, wc->opcode, wc->byte_len);
	return -EIO;
}

static int wl_poll(struct wl *w)
{
	unsigned long *sent, *rcvd;
	unsigned long deadline = jiffies + 10 * HZ;
	struct ib_wc wc[8];
	u32 done = 0, i;
	int n, ret = 0;

	sent = bitmap_zalloc(count, GFP_KERNEL);
	rcvd = bitmap_zalloc(count, GFP_KERNEL);
	if (!sent || !rcvd) {
		ret = -ENOMEM;
		goto out;
	}
	polls = 0;
	polls_hit = 0;
	while (done < 2 * count) {
		n = ib_poll_cq(w->lb.cq, ARRAY_SIZE(wc), wc);
		polls++;
		polls_hit += n > 0;
		if (n < 0) {
			ret = n;
			goto out;
		}
		for (i = 0; i < n && !ret; i++)
			ret = wl_check_wc(w, &wc[i], sent, rcvd);
		if (ret)
			goto out;
		done += n;
		if (!n) {
			if (time_after(jiffies, deadline)) {
				pr_err("timeout: %u of %u completions\n", done,
				       2 * count);
				ret = -ETIMEDOUT;
				goto out;
			}
			usleep_range(500, 1000);
		}
	}
	ib_dma_sync_single_for_cpu(w->lb.dev, w->rdma, (size_t)count * size,
				   DMA_FROM_DEVICE);
	for (i = 0; i < count * size; i++) {
		if (w->rbuf[i] != wl_pattern(i / size)) {
			pr_err("data mismatch at byte %u of receive %u\n",
			       i % size, i / size);
			ret = -EIO;
			break;
		}
	}
out:
	bitmap_free(rcvd);
	bitmap_free(sent);
	return ret;
}

static int wl_kaddr(struct wl *w)
{
	unsigned long deadline = jiffies + 10 * HZ;
	struct ib_sge sge = {
		.addr	= w->sdma,
		.length	= size,
		.lkey	= w->lb.pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id		= send_base + count,
			.sg_list	= &sge,
			.num_sge	= 1,
			.opcode		= IB_WR_RDMA_WRITE,
			.send_flags	= IB_SEND_SIGNALED,
		},
		.remote_addr	= w->rdma,
		.rkey		= w->lb.pd->unsafe_global_rkey,
	};
	struct scatterlist sg;
	struct ib_mr *mr;
	struct ib_wc wc;
	int n, ret;

	mr = ib_alloc_mr(w->lb.pd, IB_MR_TYPE_MEM_REG, 2);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	sg_init_table(&sg, 1);
	sg_dma_address(&sg) = w->rdma;
	sg_dma_len(&sg) = size;
	n = ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE);
	ib_dereg_mr(mr);
	if (n != 1) {
		pr_err("map_mr_sg: %d\n", n);
		return n < 0 ? n : -EIO;
	}

	ret = ib_post_send(w->lb.qa, &wr.wr, NULL);
	if (ret) {
		pr_err("post_send RDMA WRITE: %d\n", ret);
		return ret;
	}
	while (!(n = ib_poll_cq(w->lb.cq, 1, &wc))) {
		if (time_after(jiffies, deadline)) {
			pr_err("timeout: RDMA WRITE completion\n");
			return -ETIMEDOUT;
		}
		usleep_range(500, 1000);
	}
	if (n < 0)
		return n;
	if (wc.status != IB_WC_SUCCESS || wc.opcode != IB_WC_RDMA_WRITE ||
	    wc.wr_id != send_base + count) {
		pr_err("RDMA WRITE: wr_id 0x%llx status %d opcode %d\n",
		       wc.wr_id, wc.status, wc.opcode);
		return -EIO;
	}
	return 0;
}

static void wl_teardown(struct wl *w)
{
	size_t len = (size_t)count * size;
	struct ib_device *dev = w->lb.dev;

	rdt_lb_teardown(&w->lb);
	if (w->rbuf && !ib_dma_mapping_error(dev, w->rdma))
		ib_dma_unmap_single(dev, w->rdma, len, DMA_FROM_DEVICE);
	if (w->sbuf && !ib_dma_mapping_error(dev, w->sdma))
		ib_dma_unmap_single(dev, w->sdma, len, DMA_TO_DEVICE);
	kfree(w->rbuf);
	kfree(w->sbuf);
}

static int wl_run(struct ib_device *dev)
{
	size_t len = (size_t)count * size;
	struct wl w = { .lb.dev = dev };
	int ret;
	u32 i;

	w.sbuf = kmalloc(len, GFP_KERNEL);
	w.rbuf = kzalloc(len, GFP_KERNEL);
	if (!w.sbuf || !w.rbuf) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < len; i++)
		w.sbuf[i] = wl_pattern(i / size);
	w.sdma = ib_dma_map_single(dev, w.sbuf, len, DMA_TO_DEVICE);
	w.rdma = ib_dma_map_single(dev, w.rbuf, len, DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(dev, w.sdma) ||
	    ib_dma_mapping_error(dev, w.rdma)) {
		ret = -ENOMEM;
		goto out;
	}
	ret = rdt_lb_setup(&w.lb, kaddr ? IB_PD_UNSAFE_GLOBAL_RKEY : 0, count);
	if (ret)
		goto out;
	qpn_send = w.lb.qa->qp_num;
	qpn_recv = w.lb.qb->qp_num;

	if (freewr) {
		WRITE_ONCE(fw_qa, w.lb.qa);
		WRITE_ONCE(fw_qb, w.lb.qb);
		ret = fw_post(&w);
	} else {
		ret = wl_post(&w);
	}
	if (!ret)
		ret = wl_poll(&w);
	if (!ret && freewr)
		ret = fw_post_bad(&w);
	if (!ret && freewr)
		ret = fw_post_unset(&w);
	WRITE_ONCE(fw_qa, NULL);
	WRITE_ONCE(fw_qb, NULL);
	if (!ret && kaddr)
		ret = wl_kaddr(&w);
out:
	wl_teardown(&w);
	return ret;
}

static int fw_run_set(const char *val, const struct kernel_param *kp)
{
	int ret;

	if (!fw_dev)
		return -EINVAL;
	ret = wl_run(fw_dev);
	pr_info("%s dev=%s count=%u size=%u qpn_send=%u qpn_recv=%u polls=%u\n",
		ret ? "FAIL" : "PASS", dev_name_param, count, size, qpn_send,
		qpn_recv, polls);
	return ret ? -EIO : 0;
}

static const struct kernel_param_ops fw_run_ops = {
	.set	= fw_run_set,
	.get	= param_get_uint,
};

static uint fw_runs;
module_param_cb(run, &fw_run_ops, &fw_runs, 0200);
MODULE_PARM_DESC(run, "freewr: write 1 to run the workload once");

static int __init wl_init(void)
{
	unsigned long until;
	struct ib_device *dev;
	int ret = 0;
	u32 r;

	if (!count || count > 1024 || !size || size > 4096 || !repeat ||
	    repeat > 100000 || seconds > 600) {
		pr_err("count 1..1024, size 1..4096, repeat 1..100000, seconds 0..600\n");
		return -EINVAL;
	}
	dev = ib_device_get_by_name(dev_name_param, RDMA_DRIVER_UNKNOWN);
	if (!dev) {
		pr_err("no RDMA device %s\n", dev_name_param);
		return -ENODEV;
	}
	if (freewr) {
		ret = fw_install(dev);
		if (ret) {
			ib_device_put(dev);
			return ret;
		}
		fw_dev = dev;	/* its reference kept until unload */
		return 0;
	}
	until = jiffies + seconds * HZ;
	for (r = 0; !ret && (r < repeat || time_before(jiffies, until)); r++)
		ret = wl_run(dev);
	ib_device_put(dev);
	if (ret) {
		pr_err("FAIL after %u runs: %d\n", r, ret);
		return -EIO;
	}
	pr_info("PASS dev=%s runs=%u count=%u size=%u qpn_send=%u qpn_recv=%u polls=%u\n",
		dev_name_param, r, count, size, qpn_send, qpn_recv, polls);
	return 0;
}

static void __exit wl_exit(void)
{
	if (fw_dev) {
		fw_uninstall(fw_dev);
		ib_device_put(fw_dev);
	}
}

module_init(wl_init);
module_exit(wl_exit);

MODULE_DESCRIPTION("rdmatrace test workload: kernel RC loopback verbs");
MODULE_LICENSE("GPL");
