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
/*
 * Each event's fields, their types, assignment and print, made from
 * schema/records.py's TRACEPOINTS (RDT_TP_<NAME>_ENTRY, _ASSIGN, _PRINTK).
 * Written here by hand, as the schema has nothing to say of them: each
 * event's name, TP_PROTO (the record body and the header's dev) and
 * registration; the TRACE_DEFINE_ENUM() lines and the __print_symbolic()
 * tables of rdt_show_*() below, which name the kernel's enums (not the
 * wire format's), with entries that depend on the target tree (Kbuild's
 * probes); and the rdt_post_ret class, whose arguments are a call's
 * result, not a record.
 */
#include "rdmatrace_trace_fields.h"

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
	       RDT_TP_POST_SEND_ENTRY,
	       RDT_TP_POST_SEND_ASSIGN,
	       RDT_TP_POST_SEND_PRINTK,
	       rdt_tp_reg, rdt_tp_unreg
);

TRACE_EVENT_FN(post_recv,
	       TP_PROTO(u32 dev, const struct rdt_ev_post_recv *ev),
	       TP_ARGS(dev, ev),
	       RDT_TP_POST_RECV_ENTRY,
	       RDT_TP_POST_RECV_ASSIGN,
	       RDT_TP_POST_RECV_PRINTK,
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
	       RDT_TP_POLL_CQ_WC_ENTRY,
	       RDT_TP_POLL_CQ_WC_ASSIGN,
	       RDT_TP_POLL_CQ_WC_PRINTK,
	       rdt_tp_reg, rdt_tp_unreg
);

TRACE_EVENT_FN(poll_cq,
	       TP_PROTO(u32 dev, const struct rdt_ev_poll_cq *ev),
	       TP_ARGS(dev, ev),
	       RDT_TP_POLL_CQ_ENTRY,
	       RDT_TP_POLL_CQ_ASSIGN,
	       RDT_TP_POLL_CQ_PRINTK,
	       rdt_tp_reg, rdt_tp_unreg
);

TRACE_EVENT_FN(req_notify_cq,
	       TP_PROTO(u32 dev, const struct rdt_ev_req_notify_cq *ev),
	       TP_ARGS(dev, ev),
	       RDT_TP_REQ_NOTIFY_CQ_ENTRY,
	       RDT_TP_REQ_NOTIFY_CQ_ASSIGN,
	       RDT_TP_REQ_NOTIFY_CQ_PRINTK,
	       rdt_tp_reg, rdt_tp_unreg
);

TRACE_EVENT(qp_create,
	    TP_PROTO(u32 dev, const struct rdt_ev_qp_create *ev),
	    TP_ARGS(dev, ev),
	    RDT_TP_QP_CREATE_ENTRY,
	    RDT_TP_QP_CREATE_ASSIGN,
	    RDT_TP_QP_CREATE_PRINTK
);

TRACE_EVENT(qp_modify,
	    TP_PROTO(u32 dev, const struct rdt_ev_qp_modify *ev),
	    TP_ARGS(dev, ev),
	    RDT_TP_QP_MODIFY_ENTRY,
	    RDT_TP_QP_MODIFY_ASSIGN,
	    RDT_TP_QP_MODIFY_PRINTK
);

TRACE_EVENT(qp_destroy,
	    TP_PROTO(u32 dev, const struct rdt_ev_qp_destroy *ev),
	    TP_ARGS(dev, ev),
	    RDT_TP_QP_DESTROY_ENTRY,
	    RDT_TP_QP_DESTROY_ASSIGN,
	    RDT_TP_QP_DESTROY_PRINTK
);

DECLARE_EVENT_CLASS(rdt_cq,
		    TP_PROTO(u32 dev, const struct rdt_ev_cq *ev),
		    TP_ARGS(dev, ev),
		    RDT_TP_CQ_ENTRY,
		    RDT_TP_CQ_ASSIGN,
		    RDT_TP_CQ_PRINTK
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
		    RDT_TP_MR_ENTRY,
		    RDT_TP_MR_ASSIGN,
		    RDT_TP_MR_PRINTK
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
		    RDT_TP_PD_ENTRY,
		    RDT_TP_PD_ASSIGN,
		    RDT_TP_PD_PRINTK
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
