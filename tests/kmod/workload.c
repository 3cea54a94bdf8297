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
 * polls (ib_poll_cq calls), for the tests to compare with the trace.
 *
 * With kaddr=1 each run also maps an MR over the receive buffer and posts
 * one signalled RDMA WRITE (wr_id = send_base + count) of the first send
 * into it through the PD's unsafe global rkey: on rxe both carry the
 * buffer's kernel virtual address, which must never reach the trace.
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

static uint qpn_send;
module_param(qpn_send, uint, 0444);
MODULE_PARM_DESC(qpn_send, "result: QPN of the sending QP (last run)");

static uint qpn_recv;
module_param(qpn_recv, uint, 0444);
MODULE_PARM_DESC(qpn_recv, "result: QPN of the receiving QP (last run)");

static uint polls;
module_param(polls, uint, 0444);
MODULE_PARM_DESC(polls, "result: ib_poll_cq calls (last run)");

struct wl {
	struct rdt_lb		lb;
	u8			*sbuf, *rbuf;
	u64			sdma, rdma;
};

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

		ret = ib_post_send(w->lb.qa, &wr, NULL);
		if (ret) {
			pr_err("post_send %u: %d\n", i, ret);
			goto out;
		}
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
	while (done < 2 * count) {
		n = ib_poll_cq(w->lb.cq, ARRAY_SIZE(wc), wc);
		polls++;
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

	ret = wl_post(&w);
	if (!ret)
		ret = wl_poll(&w);
	if (!ret && kaddr)
		ret = wl_kaddr(&w);
out:
	wl_teardown(&w);
	return ret;
}

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
}

module_init(wl_init);
module_exit(wl_exit);

MODULE_DESCRIPTION("rdmatrace test workload: kernel RC loopback verbs");
MODULE_LICENSE("GPL");
