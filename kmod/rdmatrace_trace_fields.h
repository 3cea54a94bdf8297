/* SPDX-License-Identifier: GPL-2.0 */
/* made by schema/gen.py from schema/records.py: edit that, then `make schema`. */
/*
 * The fields of kmod/rdmatrace_trace.h's events, from schema/records.py's
 * TRACEPOINTS: RDT_TP_<NAME>_ENTRY, _ASSIGN and _PRINTK, one event's
 * TP_STRUCT__entry, TP_fast_assign and TP_printk each (_FMT: the
 * printk's format).
 */
#ifndef _RDMATRACE_TRACE_FIELDS_H
#define _RDMATRACE_TRACE_FIELDS_H

#define RDT_TP_POST_SEND_ENTRY						\
	TP_STRUCT__entry(__field(u32, dev)				\
			 __field(u32, qpn)				\
			 __field(u64, wr_id)				\
			 __field(u64, remote_addr)			\
			 __field(u64, total_len)			\
			 __field(u32, rkey)				\
			 __field(u32, imm)				\
			 __field(u8, opcode)				\
			 __field(u16, send_flags)			\
			 __field(u16, num_sge)				\
			 __field(u16, index))

#define RDT_TP_POST_SEND_ASSIGN						\
	TP_fast_assign(__entry->dev = dev;				\
		       __entry->qpn = ev->qpn;				\
		       __entry->wr_id = ev->wr_id;			\
		       __entry->remote_addr = ev->remote_addr;		\
		       __entry->total_len = ev->total_len;		\
		       __entry->rkey = ev->rkey;			\
		       __entry->imm = ev->imm;				\
		       __entry->opcode = ev->opcode;			\
		       __entry->send_flags = ev->send_flags;		\
		       __entry->num_sge = ev->num_sge;			\
		       __entry->index = ev->index;)

#define RDT_TP_POST_SEND_FMT						\
	"dev=%u qpn=%u index=%u wr_id=0x%llx opcode=%s send_flags=0x%x num_sge=%u total_len=%llu remote_addr=0x%llx rkey=0x%x imm=0x%x"

#define RDT_TP_POST_SEND_PRINTK						\
	TP_printk(RDT_TP_POST_SEND_FMT,					\
		  __entry->dev, __entry->qpn, __entry->index,		\
		  __entry->wr_id, rdt_show_wr_opcode(__entry->opcode),	\
		  __entry->send_flags, __entry->num_sge,		\
		  __entry->total_len, __entry->remote_addr,		\
		  __entry->rkey, __entry->imm)

#define RDT_TP_POST_RECV_ENTRY						\
	TP_STRUCT__entry(__field(u32, dev)				\
			 __field(u32, qpn)				\
			 __field(u32, srq_id)				\
			 __field(u64, wr_id)				\
			 __field(u64, total_len)			\
			 __field(u16, num_sge)				\
			 __field(u8, srq)				\
			 __field(u16, index))

#define RDT_TP_POST_RECV_ASSIGN						\
	TP_fast_assign(__entry->dev = dev;				\
		       __entry->qpn = ev->qpn;				\
		       __entry->srq_id = ev->srq_id;			\
		       __entry->wr_id = ev->wr_id;			\
		       __entry->total_len = ev->total_len;		\
		       __entry->num_sge = ev->num_sge;			\
		       __entry->srq = ev->srq;				\
		       __entry->index = ev->index;)

#define RDT_TP_POST_RECV_FMT						\
	"dev=%u qpn=%u srq=%u srq_id=%u index=%u wr_id=0x%llx num_sge=%u total_len=%llu"

#define RDT_TP_POST_RECV_PRINTK						\
	TP_printk(RDT_TP_POST_RECV_FMT,					\
		  __entry->dev, __entry->qpn, __entry->srq,		\
		  __entry->srq_id, __entry->index, __entry->wr_id,	\
		  __entry->num_sge, __entry->total_len)

#define RDT_TP_POLL_CQ_WC_ENTRY						\
	TP_STRUCT__entry(__field(u32, dev)				\
			 __field(u32, cq_id)				\
			 __field(u64, wr_id)				\
			 __field(u32, status)				\
			 __field(u32, opcode)				\
			 __field(u32, byte_len)				\
			 __field(u32, qpn)				\
			 __field(u32, src_qp)				\
			 __field(u32, wc_flags)				\
			 __field(u32, imm)				\
			 __field(u32, vendor_err)			\
			 __field(u16, index))

#define RDT_TP_POLL_CQ_WC_ASSIGN					\
	TP_fast_assign(__entry->dev = dev;				\
		       __entry->cq_id = ev->cq_id;			\
		       __entry->wr_id = ev->wr_id;			\
		       __entry->status = ev->status;			\
		       __entry->opcode = ev->opcode;			\
		       __entry->byte_len = ev->byte_len;		\
		       __entry->qpn = ev->qpn;				\
		       __entry->src_qp = ev->src_qp;			\
		       __entry->wc_flags = ev->wc_flags;		\
		       __entry->imm = ev->imm;				\
		       __entry->vendor_err = ev->vendor_err;		\
		       __entry->index = ev->index;)

#define RDT_TP_POLL_CQ_WC_FMT						\
	"dev=%u cq_id=%u index=%u wr_id=0x%llx status=%s opcode=%s byte_len=%u qpn=%u src_qp=%u wc_flags=0x%x imm=0x%x vendor_err=%u"

#define RDT_TP_POLL_CQ_WC_PRINTK					\
	TP_printk(RDT_TP_POLL_CQ_WC_FMT,				\
		  __entry->dev, __entry->cq_id, __entry->index,		\
		  __entry->wr_id, rdt_show_wc_status(__entry->status),	\
		  rdt_show_wc_opcode(__entry->opcode),			\
		  __entry->byte_len, __entry->qpn, __entry->src_qp,	\
		  __entry->wc_flags, __entry->imm,			\
		  __entry->vendor_err)

#define RDT_TP_POLL_CQ_ENTRY						\
	TP_STRUCT__entry(__field(u32, dev)				\
			 __field(u32, cq_id)				\
			 __field(int, requested)			\
			 __field(int, ret))

#define RDT_TP_POLL_CQ_ASSIGN						\
	TP_fast_assign(__entry->dev = dev;				\
		       __entry->cq_id = ev->cq_id;			\
		       __entry->requested = ev->requested;		\
		       __entry->ret = ev->ret;)

#define RDT_TP_POLL_CQ_FMT						\
	"dev=%u cq_id=%u requested=%d ret=%d"

#define RDT_TP_POLL_CQ_PRINTK						\
	TP_printk(RDT_TP_POLL_CQ_FMT,					\
		  __entry->dev, __entry->cq_id, __entry->requested,	\
		  __entry->ret)

#define RDT_TP_REQ_NOTIFY_CQ_ENTRY					\
	TP_STRUCT__entry(__field(u32, dev)				\
			 __field(u32, cq_id)				\
			 __field(u32, flags)				\
			 __field(int, ret))

#define RDT_TP_REQ_NOTIFY_CQ_ASSIGN					\
	TP_fast_assign(__entry->dev = dev;				\
		       __entry->cq_id = ev->cq_id;			\
		       __entry->flags = ev->flags;			\
		       __entry->ret = ev->ret;)

#define RDT_TP_REQ_NOTIFY_CQ_FMT					\
	"dev=%u cq_id=%u flags=0x%x ret=%d"

#define RDT_TP_REQ_NOTIFY_CQ_PRINTK					\
	TP_printk(RDT_TP_REQ_NOTIFY_CQ_FMT,				\
		  __entry->dev, __entry->cq_id, __entry->flags,		\
		  __entry->ret)

#define RDT_TP_QP_CREATE_ENTRY						\
	TP_STRUCT__entry(__field(u32, dev)				\
			 __field(u32, qpn)				\
			 __field(int, ret)				\
			 __field(u32, qp_type)				\
			 __field(u32, send_cq_id)			\
			 __field(u32, recv_cq_id)			\
			 __field(u32, srq)				\
			 __field(u32, max_send_wr)			\
			 __field(u32, max_recv_wr)			\
			 __field(u32, max_send_sge)			\
			 __field(u32, max_recv_sge)			\
			 __field(u32, max_inline_data)			\
			 __field(u32, sq_sig_type)			\
			 __field(u32, pd_id)				\
			 __field(u32, user)				\
			 __field(u32, port))

#define RDT_TP_QP_CREATE_ASSIGN						\
	TP_fast_assign(__entry->dev = dev;				\
		       __entry->qpn = ev->qpn;				\
		       __entry->ret = ev->ret;				\
		       __entry->qp_type = ev->qp_type;			\
		       __entry->send_cq_id = ev->send_cq_id;		\
		       __entry->recv_cq_id = ev->recv_cq_id;		\
		       __entry->srq = ev->srq;				\
		       __entry->max_send_wr = ev->max_send_wr;		\
		       __entry->max_recv_wr = ev->max_recv_wr;		\
		       __entry->max_send_sge = ev->max_send_sge;	\
		       __entry->max_recv_sge = ev->max_recv_sge;	\
		       __entry->max_inline_data = ev->max_inline_data;	\
		       __entry->sq_sig_type = ev->sq_sig_type;		\
		       __entry->pd_id = ev->pd_id;			\
		       __entry->user = ev->user;			\
		       __entry->port = ev->port;)

#define RDT_TP_QP_CREATE_FMT						\
	"dev=%u qpn=%u ret=%d qp_type=%u send_cq_id=%u recv_cq_id=%u srq=%u max_send_wr=%u max_recv_wr=%u max_send_sge=%u max_recv_sge=%u max_inline_data=%u sq_sig_type=%u pd_id=%u user=%u port=%u"

#define RDT_TP_QP_CREATE_PRINTK						\
	TP_printk(RDT_TP_QP_CREATE_FMT,					\
		  __entry->dev, __entry->qpn, __entry->ret,		\
		  __entry->qp_type, __entry->send_cq_id,		\
		  __entry->recv_cq_id, __entry->srq,			\
		  __entry->max_send_wr, __entry->max_recv_wr,		\
		  __entry->max_send_sge, __entry->max_recv_sge,		\
		  __entry->max_inline_data, __entry->sq_sig_type,	\
		  __entry->pd_id, __entry->user, __entry->port)

#define RDT_TP_QP_MODIFY_ENTRY						\
	TP_STRUCT__entry(__field(u32, dev)				\
			 __field(u32, qpn)				\
			 __field(int, ret)				\
			 __field(u32, attr_mask)			\
			 __field(u8, old_state)				\
			 __field(u8, new_state)				\
			 __field(u8, cur_state)				\
			 __field(u8, path_mtu)				\
			 __field(u32, dest_qpn)				\
			 __field(u32, sq_psn)				\
			 __field(u32, rq_psn)				\
			 __field(u8, timeout)				\
			 __field(u8, retry_cnt)				\
			 __field(u8, rnr_retry)				\
			 __field(u8, min_rnr_timer)			\
			 __field(u32, port)				\
			 __field(u32, qkey)				\
			 __field(u32, max_rd_atomic)			\
			 __field(u32, max_dest_rd_atomic))

#define RDT_TP_QP_MODIFY_ASSIGN						\
	TP_fast_assign(__entry->dev = dev;				\
		       __entry->qpn = ev->qpn;				\
		       __entry->ret = ev->ret;				\
		       __entry->attr_mask = ev->attr_mask;		\
		       __entry->old_state = ev->old_state;		\
		       __entry->new_state = ev->new_state;		\
		       __entry->cur_state = ev->cur_state;		\
		       __entry->path_mtu = ev->path_mtu;		\
		       __entry->dest_qpn = ev->dest_qpn;		\
		       __entry->sq_psn = ev->sq_psn;			\
		       __entry->rq_psn = ev->rq_psn;			\
		       __entry->timeout = ev->timeout;			\
		       __entry->retry_cnt = ev->retry_cnt;		\
		       __entry->rnr_retry = ev->rnr_retry;		\
		       __entry->min_rnr_timer = ev->min_rnr_timer;	\
		       __entry->port = ev->port;			\
		       __entry->qkey = ev->qkey;			\
		       __entry->max_rd_atomic = ev->max_rd_atomic;	\
		       __entry->max_dest_rd_atomic = ev->max_dest_rd_atomic;)

#define RDT_TP_QP_MODIFY_FMT						\
	"dev=%u qpn=%u ret=%d attr_mask=0x%x old_state=%s new_state=%s cur_state=%s path_mtu=%u dest_qpn=%u sq_psn=%u rq_psn=%u timeout=%u retry_cnt=%u rnr_retry=%u min_rnr_timer=%u port=%u qkey=0x%x max_rd_atomic=%u max_dest_rd_atomic=%u"

#define RDT_TP_QP_MODIFY_PRINTK						\
	TP_printk(RDT_TP_QP_MODIFY_FMT,					\
		  __entry->dev, __entry->qpn, __entry->ret,		\
		  __entry->attr_mask,					\
		  rdt_show_qp_state(__entry->old_state),		\
		  rdt_show_qp_state(__entry->new_state),		\
		  rdt_show_qp_state(__entry->cur_state),		\
		  __entry->path_mtu, __entry->dest_qpn,			\
		  __entry->sq_psn, __entry->rq_psn, __entry->timeout,	\
		  __entry->retry_cnt, __entry->rnr_retry,		\
		  __entry->min_rnr_timer, __entry->port,		\
		  __entry->qkey, __entry->max_rd_atomic,		\
		  __entry->max_dest_rd_atomic)

#define RDT_TP_QP_DESTROY_ENTRY						\
	TP_STRUCT__entry(__field(u32, dev)				\
			 __field(u32, qpn)				\
			 __field(int, ret)				\
			 __field(u32, qp_type))

#define RDT_TP_QP_DESTROY_ASSIGN					\
	TP_fast_assign(__entry->dev = dev;				\
		       __entry->qpn = ev->qpn;				\
		       __entry->ret = ev->ret;				\
		       __entry->qp_type = ev->qp_type;)

#define RDT_TP_QP_DESTROY_FMT						\
	"dev=%u qpn=%u ret=%d qp_type=%u"

#define RDT_TP_QP_DESTROY_PRINTK					\
	TP_printk(RDT_TP_QP_DESTROY_FMT,				\
		  __entry->dev, __entry->qpn, __entry->ret,		\
		  __entry->qp_type)

#define RDT_TP_CQ_ENTRY							\
	TP_STRUCT__entry(__field(u32, dev)				\
			 __field(u32, cq_id)				\
			 __field(int, ret)				\
			 __field(u32, cqe)				\
			 __field(int, comp_vector)			\
			 __field(u32, user))

#define RDT_TP_CQ_ASSIGN						\
	TP_fast_assign(__entry->dev = dev;				\
		       __entry->cq_id = ev->cq_id;			\
		       __entry->ret = ev->ret;				\
		       __entry->cqe = ev->cqe;				\
		       __entry->comp_vector = ev->comp_vector;		\
		       __entry->user = ev->user;)

#define RDT_TP_CQ_FMT							\
	"dev=%u cq_id=%u ret=%d cqe=%u comp_vector=%d user=%u"

#define RDT_TP_CQ_PRINTK						\
	TP_printk(RDT_TP_CQ_FMT,					\
		  __entry->dev, __entry->cq_id, __entry->ret,		\
		  __entry->cqe, __entry->comp_vector, __entry->user)

#define RDT_TP_MR_ENTRY							\
	TP_STRUCT__entry(__field(u32, dev)				\
			 __field(u32, lkey)				\
			 __field(u32, rkey)				\
			 __field(u64, iova)				\
			 __field(u64, length)				\
			 __field(int, ret)				\
			 __field(u32, access)				\
			 __field(u32, kind)				\
			 __field(u32, pd_id))

#define RDT_TP_MR_ASSIGN						\
	TP_fast_assign(__entry->dev = dev;				\
		       __entry->lkey = ev->lkey;			\
		       __entry->rkey = ev->rkey;			\
		       __entry->iova = ev->iova;			\
		       __entry->length = ev->length;			\
		       __entry->ret = ev->ret;				\
		       __entry->access = ev->access;			\
		       __entry->kind = ev->kind;			\
		       __entry->pd_id = ev->pd_id;)

#define RDT_TP_MR_FMT							\
	"dev=%u lkey=0x%x rkey=0x%x iova=0x%llx length=%llu ret=%d access=0x%x kind=%u pd_id=%u"

#define RDT_TP_MR_PRINTK						\
	TP_printk(RDT_TP_MR_FMT,					\
		  __entry->dev, __entry->lkey, __entry->rkey,		\
		  __entry->iova, __entry->length, __entry->ret,		\
		  __entry->access, __entry->kind, __entry->pd_id)

#define RDT_TP_PD_ENTRY							\
	TP_STRUCT__entry(__field(u32, dev)				\
			 __field(u32, pd_id)				\
			 __field(int, ret)				\
			 __field(u32, user)				\
			 __field(u32, local_dma_lkey))

#define RDT_TP_PD_ASSIGN						\
	TP_fast_assign(__entry->dev = dev;				\
		       __entry->pd_id = ev->pd_id;			\
		       __entry->ret = ev->ret;				\
		       __entry->user = ev->user;			\
		       __entry->local_dma_lkey = ev->local_dma_lkey;)

#define RDT_TP_PD_FMT							\
	"dev=%u pd_id=%u ret=%d user=%u local_dma_lkey=0x%x"

#define RDT_TP_PD_PRINTK						\
	TP_printk(RDT_TP_PD_FMT,					\
		  __entry->dev, __entry->pd_id, __entry->ret,		\
		  __entry->user, __entry->local_dma_lkey)

#endif /* _RDMATRACE_TRACE_FIELDS_H */
