// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Record validation and the names of wire-format enums. */
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

/* Every type's name and sizes, from schema/records.py. */
const struct rdt_type_info rdt_types[RDT_EV_MAX + 1] = {
#include "types.inc"
};

uint16_t rdt_keep_size[RDT_EV_MAX + 1];

/* Before main (and before any reader): the library's own table, derived
 * from rdt_types[] and rdt_is_bookkeeping(), so that it cannot disagree
 * with them. */
static __attribute__((constructor)) void keep_size_init(void)
{
	for (unsigned int t = 0; t <= RDT_EV_MAX; t++)
		rdt_keep_size[t] = rdt_is_bookkeeping(t) ? 0 :
				   (uint16_t)rdt_types[t].size;
}

RDT_EXPORT size_t rdt_record_size(unsigned int type)
{
	return type <= RDT_EV_MAX ? rdt_types[type].size : 0;
}

RDT_EXPORT const char *rdt_type_name(unsigned int type)
{
	return type <= RDT_EV_MAX ? rdt_types[type].name : NULL;
}

RDT_EXPORT int rdt_type_from_name(const char *name)
{
	for (unsigned int i = 0; i <= RDT_EV_MAX; i++)
		if (rdt_types[i].name && !strcasecmp(rdt_types[i].name, name))
			return (int)i;
	return -1;
}

RDT_EXPORT enum rdt_decode_result rdt_decode(const void *buf, size_t len,
				  union rdt_record *out, size_t *consumed,
				  const char **why)
{
	const char *reason;
	struct rdt_hdr h;
	size_t want;
	enum rdt_decode_result ret = rdt_decode_check(buf, len, &h, &want,
						      &reason);

	if (why)
		*why = reason;
	if (ret != RDT_DEC_OK && ret != RDT_DEC_UNKNOWN)
		return ret;
	*consumed = h.size;
	if (ret == RDT_DEC_OK) {
		memset(out, 0, sizeof(*out));
		memcpy(out, buf, want);
	}
	return ret;
}

RDT_EXPORT const char *rdt_source_name(unsigned int source)
{
	switch (source) {
	case RDT_SRC_KMOD: return "kmod";
	case RDT_SRC_BPF: return "bpf";
	case RDT_SRC_USER: return "user";
	case RDT_SRC_NCCL_PLUGIN: return "nccl-plugin";
	case RDT_SRC_VERBS: return "verbs";
	}
	return "?";
}

RDT_EXPORT const char *rdt_np_type_name(unsigned int ntype)
{
	switch (ntype) {
	case RDT_NP_GROUP: return "Group";
	case RDT_NP_COLL: return "Coll";
	case RDT_NP_P2P: return "P2p";
	case RDT_NP_PROXY_OP: return "ProxyOp";
	case RDT_NP_PROXY_STEP: return "ProxyStep";
	case RDT_NP_PROXY_CTRL: return "ProxyCtrl";
	case RDT_NP_KERNEL_CH: return "KernelCh";
	case RDT_NP_NET_PLUGIN: return "NetPlugin";
	case RDT_NP_GROUP_API: return "GroupApi";
	case RDT_NP_COLL_API: return "CollApi";
	case RDT_NP_P2P_API: return "P2pApi";
	case RDT_NP_KERNEL_LAUNCH: return "KernelLaunch";
	case 0: return "Comm";
	}
	return "?";
}

/* NCCL's ncclProfilerEventState_v5_t names, without the common prefix. */
RDT_EXPORT const char *rdt_np_state_name(unsigned int state)
{
	static const char *const n[] = {
		"ProxyOpSendPosted", "ProxyOpSendRemFifoWait",
		"ProxyOpSendTransmitted", "ProxyOpSendDone",
		"ProxyOpRecvPosted", "ProxyOpRecvReceived",
		"ProxyOpRecvTransmitted", "ProxyOpRecvDone",
		"ProxyStepSendGPUWait", "ProxyStepSendWait",
		"ProxyStepRecvWait", "ProxyStepRecvFlushWait",
		"ProxyStepRecvGPUWait", "ProxyCtrlIdle", "ProxyCtrlActive",
		"ProxyCtrlSleep", "ProxyCtrlWakeup", "ProxyCtrlAppend",
		"ProxyCtrlAppendEnd", "ProxyOpInProgress",
		"ProxyStepSendPeerWait", "NetPluginUpdate", "KernelChStop",
		"GroupStartApiStop", "EndGroupApiStart",
	};

	return state < sizeof(n) / sizeof(n[0]) ? n[state] : "?";
}

RDT_EXPORT const char *rdt_qp_state_name(unsigned int s)
{
	static const char *const n[] = { "RESET", "INIT", "RTR", "RTS", "SQD",
					 "SQE", "ERR" };
	return s < sizeof(n) / sizeof(n[0]) ? n[s] : "?";
}

RDT_EXPORT const char *rdt_wr_opcode_name(unsigned int op)
{
	/* enum ib_wr_opcode (ib_verbs.h), equal to IB_UVERBS_WR_* below 0x0e */
	static const char *const n[] = {
		"RDMA_WRITE", "RDMA_WRITE_IMM", "SEND", "SEND_IMM", "RDMA_READ",
		"ATOMIC_CMP_SWP", "ATOMIC_FETCH_ADD", "LOCAL_INV", "BIND_MW",
		"SEND_INV", "TSO", "RDMA_READ_INV", "MASKED_ATOMIC_CMP_SWP",
		"MASKED_ATOMIC_FETCH_ADD", "FLUSH", "ATOMIC_WRITE",
	};
	if (op < sizeof(n) / sizeof(n[0]))
		return n[op];
	if (op == 0x20)
		return "REG_MR";
	return "?";
}

RDT_EXPORT const char *rdt_wc_opcode_name(unsigned int op)
{
	switch (op) {
	case 0: return "SEND";
	case 1: return "RDMA_WRITE";
	case 2: return "RDMA_READ";
	case 3: return "COMP_SWAP";
	case 4: return "FETCH_ADD";
	case 5: return "BIND_MW";
	case 6: return "LOCAL_INV";
	case 7: return "LSO";
	case 8: return "FLUSH";
	case 9: return "ATOMIC_WRITE";
	case 10: return "REG_MR";
	case 11: return "MASKED_COMP_SWAP";
	case 12: return "MASKED_FETCH_ADD";
	case 128: return "RECV";
	case 129: return "RECV_RDMA_WITH_IMM";
	case RDT_WC_OPCODE_UNREAD: return "UNREAD";
	}
	return "?";
}

const char *rdt_rxe_retry_kind_name(unsigned int kind)
{
	return kind == RDT_RXE_RETRANSMIT ? "retransmit" :
	       kind == RDT_RXE_RNR ? "rnr" :
	       kind == RDT_RXE_NAK_SEQ ? "nak_seq" : "?";
}

const char *rdt_ctr_kind_name(unsigned int kind)
{
	return kind == RDT_CTR_HW_COUNTERS ? "hw_counters" : "counters";
}

const char *rdt_post_type_name(unsigned int type)
{
	return type == RDT_EV_POST_SEND || type == RDT_EV_VERBS_POST_SEND ?
	       "send" : "recv";
}

const char *rdt_coll_phase_name(unsigned int phase)
{
	return phase ? "end" : "begin";
}

RDT_EXPORT const char *rdt_wc_status_name(unsigned int s)
{
	static const char *const n[] = {
		"SUCCESS", "LOC_LEN_ERR", "LOC_QP_OP_ERR", "LOC_EEC_OP_ERR",
		"LOC_PROT_ERR", "WR_FLUSH_ERR", "MW_BIND_ERR", "BAD_RESP_ERR",
		"LOC_ACCESS_ERR", "REM_INV_REQ_ERR", "REM_ACCESS_ERR",
		"REM_OP_ERR", "RETRY_EXC_ERR", "RNR_RETRY_EXC_ERR",
		"LOC_RDD_VIOL_ERR", "REM_INV_RD_REQ_ERR", "REM_ABORT_ERR",
		"INV_EECN_ERR", "INV_EEC_STATE_ERR", "FATAL_ERR",
		"RESP_TIMEOUT_ERR", "GENERAL_ERR",
	};
	return s < sizeof(n) / sizeof(n[0]) ? n[s] : "?";
}

RDT_EXPORT const char *rdt_nccl_fn_name(unsigned int fn)
{
	static const char *const n[RDT_NCCL_FN_MAX] = {
		[RDT_NCCL_GET_UNIQUE_ID]	= "ncclGetUniqueId",
		[RDT_NCCL_COMM_INIT_RANK]	= "ncclCommInitRank",
		[RDT_NCCL_COMM_INIT_RANK_CONFIG] = "ncclCommInitRankConfig",
		[RDT_NCCL_COMM_INIT_ALL]	= "ncclCommInitAll",
		[RDT_NCCL_COMM_SPLIT]		= "ncclCommSplit",
		[RDT_NCCL_COMM_FINALIZE]	= "ncclCommFinalize",
		[RDT_NCCL_COMM_DESTROY]		= "ncclCommDestroy",
		[RDT_NCCL_COMM_ABORT]		= "ncclCommAbort",
		[RDT_NCCL_ALL_REDUCE]		= "ncclAllReduce",
		[RDT_NCCL_BROADCAST]		= "ncclBroadcast",
		[RDT_NCCL_BCAST]		= "ncclBcast",
		[RDT_NCCL_REDUCE]		= "ncclReduce",
		[RDT_NCCL_ALL_GATHER]		= "ncclAllGather",
		[RDT_NCCL_REDUCE_SCATTER]	= "ncclReduceScatter",
		[RDT_NCCL_ALL_TO_ALL]		= "ncclAlltoAll",
		[RDT_NCCL_SEND]			= "ncclSend",
		[RDT_NCCL_RECV]			= "ncclRecv",
		[RDT_NCCL_GROUP_START]		= "ncclGroupStart",
		[RDT_NCCL_GROUP_END]		= "ncclGroupEnd",
	};
	return fn < RDT_NCCL_FN_MAX && n[fn] ? n[fn] : "?";
}

RDT_EXPORT int rdt_nccl_type_size(int dt)
{
	/* ncclDataType_t of nccl.h 2.19+: int8 uint8 int32 uint32 int64 uint64
	 * half float double bfloat16 fp8e4m3 fp8e5m2 */
	static const int sz[] = { 1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1 };
	return dt >= 0 && dt < (int)(sizeof(sz) / sizeof(sz[0])) ? sz[dt] : 0;
}

RDT_EXPORT bool rdt_record_qpn(const union rdt_record *rec, uint32_t *qpn)
{
	switch (rec->hdr.type) {
	case RDT_EV_QP_CREATE: *qpn = rec->qp_create.qpn; return true;
	case RDT_EV_QP_MODIFY: *qpn = rec->qp_modify.qpn; return true;
	case RDT_EV_QP_DESTROY: *qpn = rec->qp_destroy.qpn; return true;
	case RDT_EV_POST_SEND:
	case RDT_EV_VERBS_POST_SEND: *qpn = rec->post_send.qpn; return true;
	case RDT_EV_POST_SEND_DB: *qpn = rec->post_send_db.qpn; return true;
	case RDT_EV_POST_RECV:
	case RDT_EV_VERBS_POST_RECV: *qpn = rec->post_recv.qpn; return true;
	case RDT_EV_POST_FAIL:
	case RDT_EV_VERBS_POST_FAIL: *qpn = rec->post_fail.qpn; return true;
	case RDT_EV_POLL_CQ_WC:
	case RDT_EV_VERBS_WC: *qpn = rec->wc.qpn; return true;
	case RDT_EV_RXE_CQE: *qpn = rec->rxe_cqe.qpn; return true;
	case RDT_EV_RXE_RCV: *qpn = rec->rxe_rcv.qpn; return true;
	case RDT_EV_RXE_XMIT: *qpn = rec->rxe_xmit.src_qpn; return true;
	case RDT_EV_RXE_RETRY: *qpn = rec->rxe_retry.qpn; return true;
	}
	return false;
}

RDT_EXPORT uint64_t rdt_record_dur(const union rdt_record *rec)
{
	switch (rec->hdr.type) {
	case RDT_EV_PD_ALLOC: case RDT_EV_PD_DEALLOC: return rec->pd.dur_ns;
	case RDT_EV_CQ_CREATE: case RDT_EV_CQ_DESTROY: return rec->cq.dur_ns;
	case RDT_EV_QP_CREATE: return rec->qp_create.dur_ns;
	case RDT_EV_QP_MODIFY: return rec->qp_modify.dur_ns;
	case RDT_EV_QP_DESTROY: return rec->qp_destroy.dur_ns;
	case RDT_EV_MR_REG: case RDT_EV_MR_DEREG: return rec->mr.dur_ns;
	case RDT_EV_POST_SEND_DB: return rec->post_send_db.dur_ns;
	case RDT_EV_REQ_NOTIFY_CQ: case RDT_EV_VERBS_REQ_NOTIFY: return rec->req_notify.dur_ns;
	}
	return 0;
}

_Static_assert(RDT_EV_COMM == RDT_EV_SUBBUF + 1 && RDT_EV_LOST == RDT_EV_SUBBUF + 2 &&
	       RDT_EV_DEVICE_REMOVE == RDT_EV_DEVICE_ADD + 1 &&
	       RDT_EV_DEVICE_RENAME == RDT_EV_DEVICE_ADD + 2,
	       "rdt_is_bookkeeping() tests ranges of these");

bool rdt_is_completion(const union rdt_record *rec)
{
	return rec->hdr.type == RDT_EV_POLL_CQ_WC ||
	       rec->hdr.type == RDT_EV_RXE_CQE ||
	       rec->hdr.type == RDT_EV_VERBS_WC;
}
