/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmatrace: the data path's encoders, inline in its wrappers: verb
 * arguments -> record bodies.  Pure functions of their arguments (the
 * KUnit suites check every field through encode.c's exported copies).
 * Out of line they were a call per record with the body's pointer and
 * the WR's reloaded (bench/NOTES.md).
 */
#ifndef _RDT_ENCODE_H
#define _RDT_ENCODE_H

#include <linux/bits.h>
#include <rdma/ib_verbs.h>

#include "rdt.h"

/* encode.c: the keyed hash of a kernel address, from a per-CPU cache. */
u64 rdt_wr_id_kernel(u64 wr_id);

/*
 * A wr_id, remote address or iova as it may cross the ABI: a kernel
 * object's kernel address (bit 63 set) hashed (encode.c), every other
 * value as it is.
 */
static __always_inline u64 __rdt_wr_id(u64 wr_id, bool user)
{
	if (user || !(wr_id & BIT_ULL(63)))
		return wr_id;
	return rdt_wr_id_kernel(wr_id);
}

/* One SGE is the common WR: its length without the loop's setup (~8). */
static __always_inline u64 rdt_sge_len(const struct ib_sge *sg, int n)
{
	u64 len = 0;
	int i;

	if (likely(n == 1))
		return sg[0].length;
	for (i = 0; i < n; i++)
		len += sg[i].length;
	return len;
}

/*
 * The opcodes whose WR carries more than the common fields, as bits: a
 * SEND, the common WR, is told from them by one range check and one test
 * (two switches were ~15 instructions).
 */
#define RDT_WR_RDMA	(BIT(IB_WR_RDMA_WRITE) | BIT(IB_WR_RDMA_WRITE_WITH_IMM) | \
			 BIT(IB_WR_RDMA_READ) | BIT(IB_WR_RDMA_READ_WITH_INV))
#define RDT_WR_ATOMIC	(BIT(IB_WR_ATOMIC_CMP_AND_SWP) | \
			 BIT(IB_WR_ATOMIC_FETCH_AND_ADD) | \
			 BIT(IB_WR_MASKED_ATOMIC_CMP_AND_SWP) | \
			 BIT(IB_WR_MASKED_ATOMIC_FETCH_AND_ADD))
#define RDT_WR_IMM	(BIT(IB_WR_RDMA_WRITE_WITH_IMM) | BIT(IB_WR_SEND_WITH_IMM))
#define RDT_WR_INV	(BIT(IB_WR_SEND_WITH_INV) | BIT(IB_WR_RDMA_READ_WITH_INV) | \
			 BIT(IB_WR_LOCAL_INV))

/*
 * Two adjacent fields, @first at the lower address, as the one wider
 * word that a single store writes: the compiler stored each field on its
 * own, a load and a store apiece or a zeroed register and a store
 * (bench/NOTES.md).  The pairs it is used on are asserted below.
 */
static __always_inline u64 rdt_pair32(u32 first, u32 second)
{
#ifdef __LITTLE_ENDIAN
	return (u64)first | (u64)second << 32;
#else
	return (u64)first << 32 | second;
#endif
}

static __always_inline u32 rdt_pair16(u16 first, u16 second)
{
#ifdef __LITTLE_ENDIAN
	return (u32)first | (u32)second << 16;
#else
	return (u32)first << 16 | second;
#endif
}

static __always_inline u16 rdt_pair8(u8 first, u8 second)
{
#ifdef __LITTLE_ENDIAN
	return (u16)first | (u16)second << 8;
#else
	return (u16)first << 8 | second;
#endif
}

static_assert(offsetofend(struct rdt_ev_post_send, qpn) ==
	      offsetof(struct rdt_ev_post_send, ret));
static_assert(offsetofend(struct rdt_ev_post_send, rkey) ==
	      offsetof(struct rdt_ev_post_send, imm));
static_assert(offsetofend(struct rdt_ev_post_send, num_sge) ==
	      offsetof(struct rdt_ev_post_send, index) &&
	      sizeof_field(struct rdt_ev_post_send, num_sge) == 2);
static_assert(offsetofend(struct rdt_ev_post_recv, qpn) ==
	      offsetof(struct rdt_ev_post_recv, srq_id));
static_assert(offsetofend(struct rdt_ev_post_recv, srq) ==
	      offsetof(struct rdt_ev_post_recv, bad));
static_assert(offsetofend(struct rdt_ev_post_recv, index) ==
	      offsetof(struct rdt_ev_post_recv, pad0) &&
	      sizeof_field(struct rdt_ev_post_recv, index) == 2);
static_assert(offsetofend(struct rdt_ev_poll_cq_wc, status) ==
	      offsetof(struct rdt_ev_poll_cq_wc, opcode));
static_assert(offsetofend(struct rdt_ev_poll_cq_wc, index) ==
	      offsetof(struct rdt_ev_poll_cq_wc, poll_requested) &&
	      sizeof_field(struct rdt_ev_poll_cq_wc, index) == 2);
/* A completion's status and opcode are one copy of ib_wc's pair. */
static_assert(offsetofend(struct ib_wc, status) ==
	      offsetof(struct ib_wc, opcode) &&
	      sizeof_field(struct ib_wc, status) == 4 &&
	      sizeof_field(struct ib_wc, opcode) == 4);

/*
 * The encoders write every field of the body but a completion's cq_id and
 * index, which their caller fills (the data path writes straight into a
 * relay slot that holds an older record's bytes, so nothing may be left
 * unwritten).
 */
static __always_inline void
__rdt_enc_send_wr(struct rdt_ev_post_send *ev, const struct ib_send_wr *wr,
		  u32 qpn, u16 index, bool user)
{
	u32 op = wr->opcode;
	u64 raddr = 0;
	u32 rkey = 0, imm = 0;

	/* A SEND, the common WR, by one shift and test of the opcode. */
	if (unlikely(op >= 32 || ((RDT_WR_RDMA | RDT_WR_ATOMIC | RDT_WR_IMM |
				   RDT_WR_INV) >> op) & 1)) {
		u32 kind = op < 32 ? BIT(op) : 0;

		if (kind & RDT_WR_RDMA) {
			raddr = __rdt_wr_id(rdma_wr(wr)->remote_addr, user);
			rkey = rdma_wr(wr)->rkey;
		} else if (kind & RDT_WR_ATOMIC) {
			raddr = __rdt_wr_id(atomic_wr(wr)->remote_addr, user);
			rkey = atomic_wr(wr)->rkey;
		}
		if (kind & RDT_WR_IMM)
			imm = (__force u32)wr->ex.imm_data;
		else if (kind & RDT_WR_INV)
			imm = wr->ex.invalidate_rkey;
	}

	ev->wr_id = __rdt_wr_id(wr->wr_id, user);
	ev->remote_addr = raddr;
	ev->total_len = rdt_sge_len(wr->sg_list, wr->num_sge);
	put_unaligned(rdt_pair32(qpn, 0), (u64 *)&ev->qpn);	/* ret 0 */
	put_unaligned(rdt_pair32(rkey, imm), (u64 *)&ev->rkey);
	ev->opcode = op;
	ev->bad = 0;
	ev->send_flags = wr->send_flags;
	put_unaligned(rdt_pair16(wr->num_sge, index), (u32 *)&ev->num_sge);
}

static __always_inline void
__rdt_enc_recv_wr(struct rdt_ev_post_recv *ev, const struct ib_recv_wr *wr,
		  u32 qpn, u32 srq_id, bool srq, u16 index, bool user)
{
	ev->wr_id = __rdt_wr_id(wr->wr_id, user);
	ev->total_len = rdt_sge_len(wr->sg_list, wr->num_sge);
	put_unaligned(rdt_pair32(qpn, srq_id), (u64 *)&ev->qpn);
	ev->ret = 0;
	ev->num_sge = wr->num_sge;
	put_unaligned(rdt_pair8(srq, 0), (u16 *)&ev->srq);	/* bad 0 */
	put_unaligned(rdt_pair16(index, 0), (u32 *)&ev->index); /* pad0 */
	ev->pad1 = 0;
}

static __always_inline void
__rdt_enc_wc(struct rdt_ev_poll_cq_wc *ev, const struct ib_wc *wc, bool user)
{
	ev->wr_id = __rdt_wr_id(wc->wr_id, user);
	/* Adjacent in both, in the same order: one copy of the pair. */
	put_unaligned(get_unaligned((const u64 *)&wc->status),
		      (u64 *)&ev->status);
	ev->byte_len = wc->byte_len;
	ev->qpn = wc->qp ? wc->qp->qp_num : 0;
	ev->src_qp = wc->src_qp;
	ev->wc_flags = wc->wc_flags;
	ev->vendor_err = wc->vendor_err;
	if (wc->wc_flags & IB_WC_WITH_INVALIDATE)
		ev->imm = wc->ex.invalidate_rkey;
	else
		ev->imm = (__force u32)wc->ex.imm_data;
}

/*
 * A completion's index in its poll, and poll_requested 0 (its caller sets
 * the last one's): one store.
 */
static __always_inline void rdt_wc_index(struct rdt_ev_poll_cq_wc *ev, u16 i)
{
	put_unaligned(rdt_pair16(i, 0), (u32 *)&ev->index);
}

#endif /* _RDT_ENCODE_H */
