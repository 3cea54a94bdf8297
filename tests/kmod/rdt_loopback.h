/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An RC loopback on one RoCE device, shared by the test workload
 * (rdt_workload.ko) and the bench module (rdt_bench.ko): a PD, one CQ
 * polled directly, and two RC QPs on port 1 connected to each other (RTS).
 */
#ifndef RDT_LOOPBACK_H
#define RDT_LOOPBACK_H

#include <linux/etherdevice.h>
#include <rdma/ib_verbs.h>

struct rdt_lb {
	struct ib_device	*dev;
	struct ib_pd		*pd;
	struct ib_cq		*cq;
	struct ib_qp		*qa, *qb;
	const struct ib_gid_attr *gid;
	u8			dmac[ETH_ALEN];
};

/*
 * Fill lb (dev set by the caller): QPs of @depth send and receive WRs, a
 * CQ of 2 * @depth.  On error lb holds what was made: rdt_lb_teardown()
 * releases it either way.
 */
int rdt_lb_setup(struct rdt_lb *lb, int pd_flags, u32 depth);
void rdt_lb_teardown(struct rdt_lb *lb);

#endif
