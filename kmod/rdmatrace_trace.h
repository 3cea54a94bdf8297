/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmatrace: the wrappers' events as tracepoints (system "rdmatrace"), for
 * perf, trace-cmd and bpftrace.  The relay channel stays the main path.
 *
 * Each event takes the record body the relay path writes, built by the
 * same encoders, so its fields and values (hashed kernel ids included)
 * are those of the trace files; dev is the record header's device index.
 * post_send and post_recv fire per WR before the driver runs (the WR list
 * is the caller's, read only while the call has not returned); the call's
 * result follows in post_send_ret / post_recv_ret, nr = 0 for a doorbell.
 *
 * QP states, WC statuses and WC and WR opcodes print by name, the way
 * include/trace/misc/rdma.h prints rdma_show_wc_status(): __print_symbolic()
 * over the kernel's enums, each one's value put into the format file by
 * TRACE_DEFINE_ENUM() so that perf and trace-cmd print the names too.  The
 * fields stay the raw numbers, for filters (new_state == 3) and BPF.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rdmatrace

#if !defined(_RDMATRACE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _RDMATRACE_TRACE_H

#include <linux/tracepoint.h>

/* The data path's events install its wrappers while probed (wrap.c). */
int rdt_tp_reg(void);
void rdt_tp_unreg(void);

#include <rdmatrace/wire.h>

/* A QP state rdmatrace does not know (wrap.c) */
#define RDT_QPS_UNKNOWN		0xff

/* enum ib_qp_state, enum ib_wc_status */
TRACE_DEFINE_ENUM(IB_QPS_RESET);
TRACE_DEFINE_ENUM(IB_QPS_INIT);
TRACE_DEFINE_ENUM(IB_QPS_RTR);
TRACE_DEFINE_ENUM(IB_QPS_RTS);
TRACE_DEFINE_ENUM(IB_QPS_SQD);
TRACE_DEFINE_ENUM(IB_QPS_SQE);
TRACE_DEFINE_ENUM(IB_QPS_ERR);
TRACE_DEFINE_ENUM(IB_WC_SUCCESS);
TRACE_DEFINE_ENUM(IB_WC_LOC_LEN_ERR);
TRACE_DEFINE_ENUM(IB_WC_LOC_QP_OP_ERR);
TRACE_DEFINE_ENUM(IB_WC_LOC_EEC_OP_ERR);
TRACE_DEFINE_ENUM(IB_WC_LOC_PROT_ERR);
TRACE_DEFINE_ENUM(IB_WC_WR_FLUSH_ERR);
TRACE_DEFINE_ENUM(IB_WC_MW_BIND_ERR);
TRACE_DEFINE_ENUM(IB_WC_BAD_RESP_ERR);
TRACE_DEFINE_ENUM(IB_WC_LOC_ACCESS_ERR);
TRACE_DEFINE_ENUM(IB_WC_REM_INV_REQ_ERR);
TRACE_DEFINE_ENUM(IB_WC_REM_ACCESS_ERR);
TRACE_DEFINE_ENUM(IB_WC_REM_OP_ERR);
TRACE_DEFINE_ENUM(IB_WC_RETRY_EXC_ERR);
TRACE_DEFINE_ENUM(IB_WC_RNR_RETRY_EXC_ERR);
TRACE_DEFINE_ENUM(IB_WC_LOC_RDD_VIOL_ERR);
TRACE_DEFINE_ENUM(IB_WC_REM_INV_RD_REQ_ERR);
TRACE_DEFINE_ENUM(IB_WC_REM_ABORT_ERR);
TRACE_DEFINE_ENUM(IB_WC_INV_EECN_ERR);
TRACE_DEFINE_ENUM(IB_WC_INV_EEC_STATE_ERR);
TRACE_DEFINE_ENUM(IB_WC_FATAL_ERR);
TRACE_DEFINE_ENUM(IB_WC_RESP_TIMEOUT_ERR);
TRACE_DEFINE_ENUM(IB_WC_GENERAL_ERR);

/*
 * enum ib_wc_opcode and enum ib_wr_opcode; FLUSH and ATOMIC_WRITE where
 * the target's ib_verbs.h has them (Kbuild's probes).
 */
TRACE_DEFINE_ENUM(IB_WC_SEND);
TRACE_DEFINE_ENUM(IB_WC_RDMA_WRITE);
TRACE_DEFINE_ENUM(IB_WC_RDMA_READ);
TRACE_DEFINE_ENUM(IB_WC_COMP_SWAP);
TRACE_DEFINE_ENUM(IB_WC_FETCH_ADD);
TRACE_DEFINE_ENUM(IB_WC_BIND_MW);
TRACE_DEFINE_ENUM(IB_WC_LOCAL_INV);
TRACE_DEFINE_ENUM(IB_WC_LSO);
TRACE_DEFINE_ENUM(IB_WC_REG_MR);
TRACE_DEFINE_ENUM(IB_WC_MASKED_COMP_SWAP);
TRACE_DEFINE_ENUM(IB_WC_MASKED_FETCH_ADD);
TRACE_DEFINE_ENUM(IB_WC_RECV);
TRACE_DEFINE_ENUM(IB_WC_RECV_RDMA_WITH_IMM);
TRACE_DEFINE_ENUM(IB_WR_RDMA_WRITE);
TRACE_DEFINE_ENUM(IB_WR_RDMA_WRITE_WITH_IMM);
TRACE_DEFINE_ENUM(IB_WR_SEND);
TRACE_DEFINE_ENUM(IB_WR_SEND_WITH_IMM);
TRACE_DEFINE_ENUM(IB_WR_RDMA_READ);
TRACE_DEFINE_ENUM(IB_WR_ATOMIC_CMP_AND_SWP);
TRACE_DEFINE_ENUM(IB_WR_ATOMIC_FETCH_AND_ADD);
TRACE_DEFINE_ENUM(IB_WR_BIND_MW);
TRACE_DEFINE_ENUM(IB_WR_LSO);
TRACE_DEFINE_ENUM(IB_WR_SEND_WITH_INV);
TRACE_DEFINE_ENUM(IB_WR_RDMA_READ_WITH_INV);
TRACE_DEFINE_ENUM(IB_WR_LOCAL_INV);
TRACE_DEFINE_ENUM(IB_WR_MASKED_ATOMIC_CMP_AND_SWP);
TRACE_DEFINE_ENUM(IB_WR_MASKED_ATOMIC_FETCH_AND_ADD);
TRACE_DEFINE_ENUM(IB_WR_REG_MR);
TRACE_DEFINE_ENUM(IB_WR_REG_MR_INTEGRITY);
#ifdef RDT_HAVE_WC_FLUSH
TRACE_DEFINE_ENUM(IB_WC_ATOMIC_WRITE);
TRACE_DEFINE_ENUM(IB_WC_FLUSH);
#endif
#ifdef RDT_HAVE_WR_FLUSH
TRACE_DEFINE_ENUM(IB_WR_FLUSH);
TRACE_DEFINE_ENUM(IB_WR_ATOMIC_WRITE);
#endif

#define rdt_show_qp_state(x)						\
	__print_symbolic(x,						\
			 { IB_QPS_RESET, "RESET" },			\
			 { IB_QPS_INIT, "INIT" },			\
			 { IB_QPS_RTR, "RTR" },				\
			 { IB_QPS_RTS, "RTS" },				\
			 { IB_QPS_SQD, "SQD" },				\
			 { IB_QPS_SQE, "SQE" },				\
			 { IB_QPS_ERR, "ERR" },				\
			 { RDT_QPS_UNKNOWN, "UNKNOWN" })
#define rdt_show_wc_status(x)						\
	__print_symbolic(x,						\
			 { IB_WC_SUCCESS, "SUCCESS" },			\
			 { IB_WC_LOC_LEN_ERR, "LOC_LEN_ERR" },		\
			 { IB_WC_LOC_QP_OP_ERR, "LOC_QP_OP_ERR" },	\
			 { IB_WC_LOC_EEC_OP_ERR, "LOC_EEC_OP_ERR" },	\
			 { IB_WC_LOC_PROT_ERR, "LOC_PROT_ERR" },	\
			 { IB_WC_WR_FLUSH_ERR, "WR_FLUSH_ERR" },	\
			 { IB_WC_MW_BIND_ERR, "MW_BIND_ERR" },		\
			 { IB_WC_BAD_RESP_ERR, "BAD_RESP_ERR" },	\
			 { IB_WC_LOC_ACCESS_ERR, "LOC_ACCESS_ERR" },	\
			 { IB_WC_REM_INV_REQ_ERR, "REM_INV_REQ_ERR" },	\
			 { IB_WC_REM_ACCESS_ERR, "REM_ACCESS_ERR" },	\
			 { IB_WC_REM_OP_ERR, "REM_OP_ERR" },		\
			 { IB_WC_RETRY_EXC_ERR, "RETRY_EXC_ERR" },	\
			 { IB_WC_RNR_RETRY_EXC_ERR, "RNR_RETRY_EXC_ERR" }, \
			 { IB_WC_LOC_RDD_VIOL_ERR, "LOC_RDD_VIOL_ERR" }, \
			 { IB_WC_REM_INV_RD_REQ_ERR, "REM_INV_RD_REQ_ERR" }, \
			 { IB_WC_REM_ABORT_ERR, "REM_ABORT_ERR" },	\
			 { IB_WC_INV_EECN_ERR, "INV_EECN_ERR" },	\
			 { IB_WC_INV_EEC_STATE_ERR, "INV_EEC_STATE_ERR" }, \
			 { IB_WC_FATAL_ERR, "FATAL_ERR" },		\
			 { IB_WC_RESP_TIMEOUT_ERR, "RESP_TIMEOUT_ERR" }, \
			 { IB_WC_GENERAL_ERR, "GENERAL_ERR" })

/* One list; the opcodes only some trees have come as extra entries. */
#define rdt_show_wc_opcode_list(x, extra...)				\
	__print_symbolic(x,						\
			 { IB_WC_SEND, "SEND" },			\
			 { IB_WC_RDMA_WRITE, "RDMA_WRITE" },		\
			 { IB_WC_RDMA_READ, "RDMA_READ" },		\
			 { IB_WC_COMP_SWAP, "COMP_SWAP" },		\
			 { IB_WC_FETCH_ADD, "FETCH_ADD" },		\
			 { IB_WC_BIND_MW, "BIND_MW" },			\
			 { IB_WC_LOCAL_INV, "LOCAL_INV" },		\
			 { IB_WC_LSO, "LSO" },				\
			 { IB_WC_REG_MR, "REG_MR" },			\
			 { IB_WC_MASKED_COMP_SWAP, "MASKED_COMP_SWAP" }, \
			 { IB_WC_MASKED_FETCH_ADD, "MASKED_FETCH_ADD" }, \
			 { IB_WC_RECV, "RECV" },			\
			 { IB_WC_RECV_RDMA_WITH_IMM, "RECV_RDMA_WITH_IMM" }, \
			 ##extra)

/* IB_WC_ATOMIC_WRITE and IB_WC_FLUSH where the tree has them (Kbuild). */
#ifdef RDT_HAVE_WC_FLUSH
#define rdt_show_wc_opcode(x)						\
	rdt_show_wc_opcode_list(x, { IB_WC_ATOMIC_WRITE, "ATOMIC_WRITE" }, \
				{ IB_WC_FLUSH, "FLUSH" })
#else
#define rdt_show_wc_opcode(x)	rdt_show_wc_opcode_list(x)
#endif

#define rdt_show_wr_opcode_list(x, extra...)				\
	__print_symbolic(x,						\
			 { IB_WR_RDMA_WRITE, "RDMA_WRITE" },		\
			 { IB_WR_RDMA_WRITE_WITH_IMM, "RDMA_WRITE_WITH_IMM" }, \
			 { IB_WR_SEND, "SEND" },			\
			 { IB_WR_SEND_WITH_IMM, "SEND_WITH_IMM" },	\
			 { IB_WR_RDMA_READ, "RDMA_READ" },		\
			 { IB_WR_ATOMIC_CMP_AND_SWP, "ATOMIC_CMP_AND_SWP" }, \
			 { IB_WR_ATOMIC_FETCH_AND_ADD, "ATOMIC_FETCH_AND_ADD" }, \
			 { IB_WR_BIND_MW, "BIND_MW" },			\
			 { IB_WR_LSO, "LSO" },				\
			 { IB_WR_SEND_WITH_INV, "SEND_WITH_INV" },	\
			 { IB_WR_RDMA_READ_WITH_INV, "RDMA_READ_WITH_INV" }, \
			 { IB_WR_LOCAL_INV, "LOCAL_INV" },		\
			 { IB_WR_MASKED_ATOMIC_CMP_AND_SWP, "MASKED_ATOMIC_CMP_AND_SWP" }, \
			 { IB_WR_MASKED_ATOMIC_FETCH_AND_ADD, "MASKED_ATOMIC_FETCH_AND_ADD" }, \
			 { IB_WR_REG_MR, "REG_MR" },			\
			 { IB_WR_REG_MR_INTEGRITY, "REG_MR_INTEGRITY" }, \
			 ##extra)

/* IB_WR_FLUSH and IB_WR_ATOMIC_WRITE where the tree has them (Kbuild). */
#ifdef RDT_HAVE_WR_FLUSH
#define rdt_show_wr_opcode(x)						\
	rdt_show_wr_opcode_list(x, { IB_WR_FLUSH, "FLUSH" },		\
				{ IB_WR_ATOMIC_WRITE, "ATOMIC_WRITE" })
#else
#define rdt_show_wr_opcode(x)	rdt_show_wr_opcode_list(x)
#endif

TRACE_EVENT_FN(post_send,
	       TP_PROTO(u32 dev, const struct rdt_ev_post_send *ev),
	       TP_ARGS(dev, ev),
	       TP_STRUCT__entry(__field(u32, dev)
				__field(u32, qpn)
				__field(u64, wr_id)
				__field(u64, remote_addr)
				__field(u64, total_len)
				__field(u32, rkey)
				__field(u32, imm)
				__field(u8, opcode)
				__field(u16, send_flags)
				__field(u16, num_sge)
				__field(u16, index)
	       ),
	       TP_fast_assign(__entry->dev = dev;
			      __entry->qpn = ev->qpn;
			      __entry->wr_id = ev->wr_id;
			      __entry->remote_addr = ev->remote_addr;
			      __entry->total_len = ev->total_len;
			      __entry->rkey = ev->rkey;
			      __entry->imm = ev->imm;
			      __entry->opcode = ev->opcode;
			      __entry->send_flags = ev->send_flags;
			      __entry->num_sge = ev->num_sge;
			      __entry->index = ev->index;
	       ),
	       TP_printk("dev=%u qpn=%u index=%u wr_id=0x%llx opcode=%s send_flags=0x%x num_sge=%u total_len=%llu remote_addr=0x%llx rkey=0x%x imm=0x%x",
			 __entry->dev, __entry->qpn, __entry->index, __entry->wr_id,
			 rdt_show_wr_opcode(__entry->opcode), __entry->send_flags,
			 __entry->num_sge,
			 __entry->total_len, __entry->remote_addr, __entry->rkey,
			 __entry->imm),
	       rdt_tp_reg, rdt_tp_unreg
);

TRACE_EVENT_FN(post_recv,
	       TP_PROTO(u32 dev, const struct rdt_ev_post_recv *ev),
	       TP_ARGS(dev, ev),
	       TP_STRUCT__entry(__field(u32, dev)
				__field(u32, qpn)
				__field(u32, srq_id)
				__field(u64, wr_id)
				__field(u64, total_len)
				__field(u16, num_sge)
				__field(u8, srq)
				__field(u16, index)
	       ),
	       TP_fast_assign(__entry->dev = dev;
			      __entry->qpn = ev->qpn;
			      __entry->srq_id = ev->srq_id;
			      __entry->wr_id = ev->wr_id;
			      __entry->total_len = ev->total_len;
			      __entry->num_sge = ev->num_sge;
			      __entry->srq = ev->srq;
			      __entry->index = ev->index;
	       ),
	       TP_printk("dev=%u qpn=%u srq=%u srq_id=%u index=%u wr_id=0x%llx num_sge=%u total_len=%llu",
			 __entry->dev, __entry->qpn, __entry->srq, __entry->srq_id,
			 __entry->index, __entry->wr_id, __entry->num_sge,
			 __entry->total_len),
	       rdt_tp_reg, rdt_tp_unreg
);

DECLARE_EVENT_CLASS(rdt_post_ret,
		    TP_PROTO(u32 dev, u32 qpn, u32 srq_id, u32 nr, int ret),
		    TP_ARGS(dev, qpn, srq_id, nr, ret),
		    TP_STRUCT__entry(__field(u32, dev)
				     __field(u32, qpn)
				     __field(u32, srq_id)
				     __field(u32, nr)
				     __field(int, ret)
		    ),
		    TP_fast_assign(__entry->dev = dev;
				   __entry->qpn = qpn;
				   __entry->srq_id = srq_id;
				   __entry->nr = nr;
				   __entry->ret = ret;
		    ),
		    TP_printk("dev=%u qpn=%u srq_id=%u nr=%u ret=%d", __entry->dev,
			      __entry->qpn, __entry->srq_id, __entry->nr, __entry->ret)
);

DEFINE_EVENT_FN(rdt_post_ret, post_send_ret,
		TP_PROTO(u32 dev, u32 qpn, u32 srq_id, u32 nr, int ret),
		TP_ARGS(dev, qpn, srq_id, nr, ret),
		rdt_tp_reg, rdt_tp_unreg);

DEFINE_EVENT_FN(rdt_post_ret, post_recv_ret,
		TP_PROTO(u32 dev, u32 qpn, u32 srq_id, u32 nr, int ret),
		TP_ARGS(dev, qpn, srq_id, nr, ret),
		rdt_tp_reg, rdt_tp_unreg);

TRACE_EVENT_FN(poll_cq_wc,
	       TP_PROTO(u32 dev, const struct rdt_ev_poll_cq_wc *ev),
	       TP_ARGS(dev, ev),
	       TP_STRUCT__entry(__field(u32, dev)
				__field(u32, cq_id)
				__field(u64, wr_id)
				__field(u32, status)
				__field(u32, opcode)
				__field(u32, byte_len)
				__field(u32, qpn)
				__field(u32, src_qp)
				__field(u32, wc_flags)
				__field(u32, imm)
				__field(u32, vendor_err)
				__field(u16, index)
	       ),
	       TP_fast_assign(__entry->dev = dev;
			      __entry->cq_id = ev->cq_id;
			      __entry->wr_id = ev->wr_id;
			      __entry->status = ev->status;
			      __entry->opcode = ev->opcode;
			      __entry->byte_len = ev->byte_len;
			      __entry->qpn = ev->qpn;
			      __entry->src_qp = ev->src_qp;
			      __entry->wc_flags = ev->wc_flags;
			      __entry->imm = ev->imm;
			      __entry->vendor_err = ev->vendor_err;
			      __entry->index = ev->index;
	       ),
	       TP_printk("dev=%u cq_id=%u index=%u wr_id=0x%llx status=%s opcode=%s byte_len=%u qpn=%u src_qp=%u wc_flags=0x%x imm=0x%x vendor_err=%u",
			 __entry->dev, __entry->cq_id, __entry->index, __entry->wr_id,
			 rdt_show_wc_status(__entry->status),
			 rdt_show_wc_opcode(__entry->opcode), __entry->byte_len,
			 __entry->qpn, __entry->src_qp, __entry->wc_flags,
			 __entry->imm, __entry->vendor_err),
	       rdt_tp_reg, rdt_tp_unreg
);

TRACE_EVENT_FN(poll_cq,
	       TP_PROTO(u32 dev, const struct rdt_ev_poll_cq *ev),
	       TP_ARGS(dev, ev),
	       TP_STRUCT__entry(__field(u32, dev)
				__field(u32, cq_id)
				__field(int, requested)
				__field(int, ret)
	       ),
	       TP_fast_assign(__entry->dev = dev;
			      __entry->cq_id = ev->cq_id;
			      __entry->requested = ev->requested;
			      __entry->ret = ev->ret;
	       ),
	       TP_printk("dev=%u cq_id=%u requested=%d ret=%d", __entry->dev,
			 __entry->cq_id, __entry->requested, __entry->ret),
	       rdt_tp_reg, rdt_tp_unreg
);

TRACE_EVENT_FN(req_notify_cq,
	       TP_PROTO(u32 dev, const struct rdt_ev_req_notify_cq *ev),
	       TP_ARGS(dev, ev),
	       TP_STRUCT__entry(__field(u32, dev)
				__field(u32, cq_id)
				__field(u32, flags)
				__field(int, ret)
	       ),
	       TP_fast_assign(__entry->dev = dev;
			      __entry->cq_id = ev->cq_id;
			      __entry->flags = ev->flags;
			      __entry->ret = ev->ret;
	       ),
	       TP_printk("dev=%u cq_id=%u flags=0x%x ret=%d", __entry->dev,
			 __entry->cq_id, __entry->flags, __entry->ret),
	       rdt_tp_reg, rdt_tp_unreg
);

TRACE_EVENT(qp_create,
	    TP_PROTO(u32 dev, const struct rdt_ev_qp_create *ev),
	    TP_ARGS(dev, ev),
	    TP_STRUCT__entry(__field(u32, dev)
			     __field(u32, qpn)
			     __field(int, ret)
			     __field(u32, qp_type)
			     __field(u32, send_cq_id)
			     __field(u32, recv_cq_id)
			     __field(u32, srq)
			     __field(u32, max_send_wr)
			     __field(u32, max_recv_wr)
			     __field(u32, max_send_sge)
			     __field(u32, max_recv_sge)
			     __field(u32, max_inline_data)
			     __field(u32, sq_sig_type)
			     __field(u32, pd_id)
			     __field(u32, user)
			     __field(u32, port)
	    ),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->qpn = ev->qpn;
			   __entry->ret = ev->ret;
			   __entry->qp_type = ev->qp_type;
			   __entry->send_cq_id = ev->send_cq_id;
			   __entry->recv_cq_id = ev->recv_cq_id;
			   __entry->srq = ev->srq;
			   __entry->max_send_wr = ev->max_send_wr;
			   __entry->max_recv_wr = ev->max_recv_wr;
			   __entry->max_send_sge = ev->max_send_sge;
			   __entry->max_recv_sge = ev->max_recv_sge;
			   __entry->max_inline_data = ev->max_inline_data;
			   __entry->sq_sig_type = ev->sq_sig_type;
			   __entry->pd_id = ev->pd_id;
			   __entry->user = ev->user;
			   __entry->port = ev->port;
	    ),
	    TP_printk("dev=%u qpn=%u ret=%d qp_type=%u send_cq_id=%u recv_cq_id=%u srq=%u max_send_wr=%u max_recv_wr=%u max_send_sge=%u max_recv_sge=%u max_inline_data=%u sq_sig_type=%u pd_id=%u user=%u port=%u",
		      __entry->dev, __entry->qpn, __entry->ret, __entry->qp_type,
		      __entry->send_cq_id, __entry->recv_cq_id, __entry->srq,
		      __entry->max_send_wr, __entry->max_recv_wr,
		      __entry->max_send_sge, __entry->max_recv_sge,
		      __entry->max_inline_data, __entry->sq_sig_type,
		      __entry->pd_id, __entry->user, __entry->port)
);

TRACE_EVENT(qp_modify,
	    TP_PROTO(u32 dev, const struct rdt_ev_qp_modify *ev),
	    TP_ARGS(dev, ev),
	    TP_STRUCT__entry(__field(u32, dev)
			     __field(u32, qpn)
			     __field(int, ret)
			     __field(u32, attr_mask)
			     __field(u8, old_state)
			     __field(u8, new_state)
			     __field(u8, cur_state)
			     __field(u8, path_mtu)
			     __field(u32, dest_qpn)
			     __field(u32, sq_psn)
			     __field(u32, rq_psn)
			     __field(u8, timeout)
			     __field(u8, retry_cnt)
			     __field(u8, rnr_retry)
			     __field(u8, min_rnr_timer)
			     __field(u32, port)
			     __field(u32, qkey)
			     __field(u32, max_rd_atomic)
			     __field(u32, max_dest_rd_atomic)
	    ),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->qpn = ev->qpn;
			   __entry->ret = ev->ret;
			   __entry->attr_mask = ev->attr_mask;
			   __entry->old_state = ev->old_state;
			   __entry->new_state = ev->new_state;
			   __entry->cur_state = ev->cur_state;
			   __entry->path_mtu = ev->path_mtu;
			   __entry->dest_qpn = ev->dest_qpn;
			   __entry->sq_psn = ev->sq_psn;
			   __entry->rq_psn = ev->rq_psn;
			   __entry->timeout = ev->timeout;
			   __entry->retry_cnt = ev->retry_cnt;
			   __entry->rnr_retry = ev->rnr_retry;
			   __entry->min_rnr_timer = ev->min_rnr_timer;
			   __entry->port = ev->port;
			   __entry->qkey = ev->qkey;
			   __entry->max_rd_atomic = ev->max_rd_atomic;
			   __entry->max_dest_rd_atomic = ev->max_dest_rd_atomic;
	    ),
	    TP_printk("dev=%u qpn=%u ret=%d attr_mask=0x%x old_state=%s new_state=%s cur_state=%s path_mtu=%u dest_qpn=%u sq_psn=%u rq_psn=%u timeout=%u retry_cnt=%u rnr_retry=%u min_rnr_timer=%u port=%u qkey=0x%x max_rd_atomic=%u max_dest_rd_atomic=%u",
		      __entry->dev, __entry->qpn, __entry->ret, __entry->attr_mask,
		      rdt_show_qp_state(__entry->old_state),
		      rdt_show_qp_state(__entry->new_state),
		      rdt_show_qp_state(__entry->cur_state),
		      __entry->path_mtu, __entry->dest_qpn, __entry->sq_psn,
		      __entry->rq_psn, __entry->timeout, __entry->retry_cnt,
		      __entry->rnr_retry, __entry->min_rnr_timer, __entry->port,
		      __entry->qkey, __entry->max_rd_atomic,
		      __entry->max_dest_rd_atomic)
);

TRACE_EVENT(qp_destroy,
	    TP_PROTO(u32 dev, const struct rdt_ev_qp_destroy *ev),
	    TP_ARGS(dev, ev),
	    TP_STRUCT__entry(__field(u32, dev)
			     __field(u32, qpn)
			     __field(int, ret)
			     __field(u32, qp_type)
	    ),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->qpn = ev->qpn;
			   __entry->ret = ev->ret;
			   __entry->qp_type = ev->qp_type;
	    ),
	    TP_printk("dev=%u qpn=%u ret=%d qp_type=%u", __entry->dev,
		      __entry->qpn, __entry->ret, __entry->qp_type)
);

DECLARE_EVENT_CLASS(rdt_cq,
		    TP_PROTO(u32 dev, const struct rdt_ev_cq *ev),
		    TP_ARGS(dev, ev),
		    TP_STRUCT__entry(__field(u32, dev)
				     __field(u32, cq_id)
				     __field(int, ret)
				     __field(u32, cqe)
				     __field(int, comp_vector)
				     __field(u32, user)
		    ),
		    TP_fast_assign(__entry->dev = dev;
				   __entry->cq_id = ev->cq_id;
				   __entry->ret = ev->ret;
				   __entry->cqe = ev->cqe;
				   __entry->comp_vector = ev->comp_vector;
				   __entry->user = ev->user;
		    ),
		    TP_printk("dev=%u cq_id=%u ret=%d cqe=%u comp_vector=%d user=%u",
			      __entry->dev, __entry->cq_id, __entry->ret, __entry->cqe,
			      __entry->comp_vector, __entry->user)
);

DEFINE_EVENT(rdt_cq, cq_create,
	     TP_PROTO(u32 dev, const struct rdt_ev_cq *ev),
	     TP_ARGS(dev, ev));

DEFINE_EVENT(rdt_cq, cq_destroy,
	     TP_PROTO(u32 dev, const struct rdt_ev_cq *ev),
	     TP_ARGS(dev, ev));

DECLARE_EVENT_CLASS(rdt_mr,
		    TP_PROTO(u32 dev, const struct rdt_ev_mr *ev),
		    TP_ARGS(dev, ev),
		    TP_STRUCT__entry(__field(u32, dev)
				     __field(u32, lkey)
				     __field(u32, rkey)
				     __field(u64, iova)
				     __field(u64, length)
				     __field(int, ret)
				     __field(u32, access)
				     __field(u32, kind)
				     __field(u32, pd_id)
		    ),
		    TP_fast_assign(__entry->dev = dev;
				   __entry->lkey = ev->lkey;
				   __entry->rkey = ev->rkey;
				   __entry->iova = ev->iova;
				   __entry->length = ev->length;
				   __entry->ret = ev->ret;
				   __entry->access = ev->access;
				   __entry->kind = ev->kind;
				   __entry->pd_id = ev->pd_id;
		    ),
		    TP_printk("dev=%u lkey=0x%x rkey=0x%x iova=0x%llx length=%llu ret=%d access=0x%x kind=%u pd_id=%u",
			      __entry->dev, __entry->lkey, __entry->rkey, __entry->iova,
			      __entry->length, __entry->ret, __entry->access,
			      __entry->kind, __entry->pd_id)
);

DEFINE_EVENT(rdt_mr, mr_reg,
	     TP_PROTO(u32 dev, const struct rdt_ev_mr *ev),
	     TP_ARGS(dev, ev));

DEFINE_EVENT(rdt_mr, mr_dereg,
	     TP_PROTO(u32 dev, const struct rdt_ev_mr *ev),
	     TP_ARGS(dev, ev));

DECLARE_EVENT_CLASS(rdt_pd,
		    TP_PROTO(u32 dev, const struct rdt_ev_pd *ev),
		    TP_ARGS(dev, ev),
		    TP_STRUCT__entry(__field(u32, dev)
				     __field(u32, pd_id)
				     __field(int, ret)
				     __field(u32, user)
				     __field(u32, local_dma_lkey)
		    ),
		    TP_fast_assign(__entry->dev = dev;
				   __entry->pd_id = ev->pd_id;
				   __entry->ret = ev->ret;
				   __entry->user = ev->user;
				   __entry->local_dma_lkey = ev->local_dma_lkey;
		    ),
		    TP_printk("dev=%u pd_id=%u ret=%d user=%u local_dma_lkey=0x%x",
			      __entry->dev, __entry->pd_id, __entry->ret, __entry->user,
			      __entry->local_dma_lkey)
);

DEFINE_EVENT(rdt_pd, pd_alloc,
	     TP_PROTO(u32 dev, const struct rdt_ev_pd *ev),
	     TP_ARGS(dev, ev));

DEFINE_EVENT(rdt_pd, pd_dealloc,
	     TP_PROTO(u32 dev, const struct rdt_ev_pd *ev),
	     TP_ARGS(dev, ev));

#endif /* _RDMATRACE_TRACE_H */

/* Out of tree: define_trace.h finds this file through -I$(src). */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE rdmatrace_trace
#include <trace/define_trace.h>
