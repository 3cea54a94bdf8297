// SPDX-License-Identifier: GPL-2.0
/* The RC loopback of rdt_loopback.h. */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <net/ipv6.h>
#include <rdma/ib_cache.h>

#include "rdt_loopback.h"

/* A RoCEv2 GID on port 1, IPv4-mapped by preference, and its MAC. */
static int lb_find_gid(struct rdt_lb *lb)
{
	const struct ib_gid_attr *attr;
	struct net_device *ndev;
	int pass, i;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < 32; i++) {
			attr = rdma_get_gid_attr(lb->dev, 1, i);
			if (IS_ERR(attr))
				continue;
			if (attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP ||
			    (!pass && !ipv6_addr_v4mapped((struct in6_addr *)attr->gid.raw))) {
				rdma_put_gid_attr(attr);
				continue;
			}
			rcu_read_lock();
			ndev = rdma_read_gid_attr_ndev_rcu(attr);
			if (!IS_ERR(ndev))
				ether_addr_copy(lb->dmac, ndev->dev_addr);
			rcu_read_unlock();
			if (!IS_ERR(ndev)) {
				lb->gid = attr;
				return 0;
			}
			rdma_put_gid_attr(attr);
		}
	}
	pr_err("%s: no RoCEv2 GID on port 1\n", dev_name(&lb->dev->dev));
	return -ENODEV;
}

static struct ib_qp *lb_create_qp(struct rdt_lb *lb, u32 depth)
{
	struct ib_qp_init_attr ia = {
		.send_cq	= lb->cq,
		.recv_cq	= lb->cq,
		.cap = {
			.max_send_wr	= depth,
			.max_recv_wr	= depth,
			.max_send_sge	= 1,
			.max_recv_sge	= 1,
		},
		.sq_sig_type	= IB_SIGNAL_ALL_WR,
		.qp_type	= IB_QPT_RC,
		.port_num	= 1,
	};

	return ib_create_qp(lb->pd, &ia);
}

static int lb_connect(struct rdt_lb *lb, struct ib_qp *qp, u32 dest)
{
	union ib_gid dgid = lb->gid->gid;
	struct ib_qp_attr a = {};
	int ret;

	a.qp_state = IB_QPS_INIT;
	a.port_num = 1;
	a.pkey_index = 0;
	a.qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ;
	ret = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (ret)
		return ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = IB_MTU_1024;
	a.dest_qp_num = dest;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&a.ah_attr, 1);
	rdma_ah_set_grh(&a.ah_attr, &dgid, 0, lb->gid->index, 64, 0);
	memcpy(a.ah_attr.roce.dmac, lb->dmac, ETH_ALEN);
	ret = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.sq_psn = 0;
	/*
	 * 18: 4.096 us << 18, about 1 s, not ibv_rc_pingpong's 14 (67 ms).
	 * Loopback loses nothing, so every retransmit here is spurious: a
	 * TCG guest, busier still under PREEMPT_RT, can take longer than
	 * 67 ms to answer.  And a retry is what meets Debian's rxe requester
	 * bug (upstream/linux-7.2/0004): a WQE completed during a retry
	 * leaves the requester on a freed slot, and once the producer wraps
	 * onto it the QP sits in RTS forever.  A CI run lost
	 * kmod/rmmod [debian-6.12-rt] to a kernel workload that failed (its
	 * log was not kept): that, most likely.
	 */
	a.timeout = 18;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_SQ_PSN |
			    IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
			    IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC);
}

int rdt_lb_setup(struct rdt_lb *lb, int pd_flags, u32 depth)
{
	int ret;

	ret = lb_find_gid(lb);
	if (ret)
		return ret;
	lb->pd = ib_alloc_pd(lb->dev, pd_flags);
	if (IS_ERR(lb->pd)) {
		ret = PTR_ERR(lb->pd);
		lb->pd = NULL;
		return ret;
	}
	lb->cq = ib_alloc_cq(lb->dev, NULL, 2 * depth, 0, IB_POLL_DIRECT);
	if (IS_ERR(lb->cq)) {
		ret = PTR_ERR(lb->cq);
		lb->cq = NULL;
		return ret;
	}
	lb->qa = lb_create_qp(lb, depth);
	if (IS_ERR(lb->qa)) {
		ret = PTR_ERR(lb->qa);
		lb->qa = NULL;
		return ret;
	}
	lb->qb = lb_create_qp(lb, depth);
	if (IS_ERR(lb->qb)) {
		ret = PTR_ERR(lb->qb);
		lb->qb = NULL;
		return ret;
	}
	ret = lb_connect(lb, lb->qa, lb->qb->qp_num);
	if (!ret)
		ret = lb_connect(lb, lb->qb, lb->qa->qp_num);
	if (ret)
		pr_err("connecting QPs: %d\n", ret);
	return ret;
}

void rdt_lb_teardown(struct rdt_lb *lb)
{
	if (lb->qb)
		ib_destroy_qp(lb->qb);
	if (lb->qa)
		ib_destroy_qp(lb->qa);
	if (lb->cq)
		ib_free_cq(lb->cq);
	if (lb->pd)
		ib_dealloc_pd(lb->pd);
	if (lb->gid)
		rdma_put_gid_attr(lb->gid);
	lb->qb = NULL;
	lb->qa = NULL;
	lb->cq = NULL;
	lb->pd = NULL;
	lb->gid = NULL;
}
