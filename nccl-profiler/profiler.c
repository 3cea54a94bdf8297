// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libnccl-profiler-rdmatrace.so: NCCL's profiler plugin ABI (v5, v4) ->
 * rdmatrace records.  Each NCCL event type has one thin adapter that
 * copies its descriptor's fields into its record; rings.c does the rest.
 * The handle returned to NCCL is the event id (np_loc.h), never a pointer
 * to memory: NCCL gives it back as the parentObj of the children, so a
 * record's parent is that value as it is, and nothing NCCL passes is ever
 * dereferenced beyond the descriptor itself.  Nothing here may crash,
 * abort or block NCCL: bad input is counted (RDT_EV_NP_SKIP) and skipped.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_profiler_abi.h"
#include "np_loc.h"

#define NP_EXPORT __attribute__((visibility("default")))
#define NP_MAX_COMMS 4096
#define NCCL_LOG_WARN 2
#define NCCL_LOG_INFO 3
#define NCCL_INIT_FLAG 1

/* Contexts are slots of this array, so a context NCCL passes back is
 * checked by address before it is read. */
static struct np_comm comms[NP_MAX_COMMS];
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int ncomms;

/* A forked child starts with no communicator: the parent's are not its. */
static void atfork_child(void)
{
	pthread_mutex_init(&init_lock, NULL);
	memset(comms, 0, sizeof(comms));
	ncomms = 0;
}

__attribute__((constructor)) static void np_atfork(void)
{
	pthread_atfork(NULL, NULL, atfork_child);
}

static struct np_comm *comm_of(void *ctx)
{
	uintptr_t p = (uintptr_t)ctx, b = (uintptr_t)comms;

	if (p < b || p >= (uintptr_t)(comms + NP_MAX_COMMS) ||
	    (p - b) % sizeof(comms[0]))
		return NULL;
	return ((struct np_comm *)ctx)->magic == NP_COMM_MAGIC ? ctx : NULL;
}

static void copy_str(char *dst, size_t len, const char *src)
{
	size_t i = 0;

	if (src)
		for (; i + 1 < len && src[i]; i++)
			dst[i] = src[i];
	dst[i] = 0;
}

static void skip(uint64_t raw_type, unsigned int why)
{
	uint64_t id;
	struct rdt_ev_np_skip *e = np_reserve(RDT_EV_NP_SKIP, sizeof(*e), 0,
					      &id);

	np_count_skip();
	if (!e)
		return;
	e->ids.id = 0;
	e->raw_type = raw_type;
	e->why = why;
	np_commit();
}

/* ---- lifecycle -------------------------------------------------------- */

static void comm_record(unsigned int type, const struct np_comm *c,
			const char *name, int nnodes)
{
	uint64_t id;
	struct rdt_ev_np_comm *e = np_reserve(type, sizeof(*e), 0, &id);

	if (!e)
		return;
	e->ids.id = 0;
	e->ids.comm_id = c->comm_id;
	e->ids.rank = c->rank;
	copy_str(e->name, sizeof(e->name), name);
	e->nnodes = nnodes;
	e->nranks = c->nranks;
	e->abi = c->abi;
	np_commit();
}

static ncclResult_t init_common(void **context, uint64_t comm_id,
				int *mask, const char *name, int nnodes,
				int nranks, int rank, ncclDebugLogger_t logfn,
				unsigned int abi, int all_types)
{
	struct np_comm *c = NULL;
	const char *m = getenv("RDMATRACE_NCCL_MASK");
	int err = 0;

	if (!context || !mask)
		return ncclInvalidArgument;
	*context = NULL;
	*mask = 0;
	pthread_mutex_lock(&init_lock);
	if (!np.shm) {
		err = np_rings_open();
		if (err < 0) {
			pthread_mutex_unlock(&init_lock);
			if (logfn)
				logfn(NCCL_LOG_WARN, NCCL_INIT_FLAG, __FILE__,
				      __LINE__, "rdmatrace: profiler off: %s: %s",
				      np.path, strerror(-err));
			/* NCCL runs on, untraced: no event type is on. */
			return ncclSuccess;
		}
		if (logfn)
			logfn(NCCL_LOG_INFO, NCCL_INIT_FLAG, __FILE__, __LINE__,
			      "rdmatrace: profiler v%u events to %s", abi,
			      np.path);
	}
	for (unsigned int i = 0; i < NP_MAX_COMMS; i++)
		if (comms[i].magic != NP_COMM_MAGIC) {
			c = &comms[i];
			c->comm_id = comm_id;
			c->rank = rank;
			c->nranks = nranks;
			c->abi = abi;
			c->magic = NP_COMM_MAGIC;
			ncomms++;
			break;
		}
	if (c) {
		atomic_store(&np.shm->ncomms, ncomms);
		atomic_store(&np.shm->finished, 0);
	}
	pthread_mutex_unlock(&init_lock);
	if (!c) {
		if (logfn)
			logfn(NCCL_LOG_WARN, NCCL_INIT_FLAG, __FILE__, __LINE__,
			      "rdmatrace: more than %d communicators: comm "
			      "%lx untraced", NP_MAX_COMMS,
			      (unsigned long)comm_id);
		return ncclSuccess;
	}
	comm_record(RDT_EV_NP_COMM_INIT, c, name, nnodes);
	*context = c;
	*mask = m && *m ? (int)strtol(m, NULL, 0) & all_types : all_types;
	return ncclSuccess;
}

static ncclResult_t finalize(void *context)
{
	struct np_comm *c = comm_of(context);

	if (!c) {
		skip(0, RDT_NP_SKIP_CTX);
		return ncclSuccess;
	}
	comm_record(RDT_EV_NP_COMM_FINI, c, "", 0);
	pthread_mutex_lock(&init_lock);
	c->magic = 0;
	if (ncomms)
		ncomms--;
	if (np.shm)
		atomic_store(&np.shm->ncomms, ncomms);
	if (!ncomms)
		np_rings_close();
	pthread_mutex_unlock(&init_lock);
	return ncclSuccess;
}

/* ---- events: one adapter per type --------------------------------------- */

/* Reserve @T's record for a new event, fill its ids, set *eHandle. */
#define START(T, type, ntype)						\
	uint64_t id;							\
	T *e = np_reserve(type, sizeof(T), ntype, &id);		\
	*h = (void *)(uintptr_t)id;					\
	if (!e)								\
		return;							\
	e->ids.parent = (uint64_t)(uintptr_t)parent;			\
	e->ids.comm_id = c->comm_id;					\
	e->ids.rank = rank

static void ev_group(void **h, const struct np_comm *c, void *parent,
		     int rank, unsigned int type, unsigned int ntype,
		     bool captured, int depth)
{
	START(struct rdt_ev_np_group, type, ntype);
	e->graph_captured = captured;
	e->depth = depth;
	np_commit();
}

static void ev_api(void **h, const struct np_comm *c, void *parent, int rank,
		   unsigned int type, unsigned int ntype, const char *func,
		   size_t count, const char *dtype, int root, void *stream,
		   bool captured)
{
	START(struct rdt_ev_np_api, type, ntype);
	copy_str(e->func, sizeof(e->func), func);
	e->count = count;
	copy_str(e->datatype, sizeof(e->datatype), dtype);
	e->root = root;
	e->stream = (uint64_t)(uintptr_t)stream;
	e->graph_captured = captured;
	np_commit();
}

static void ev_kernel_launch(void **h, const struct np_comm *c, void *parent,
			     int rank, void *stream)
{
	START(struct rdt_ev_np_kernel_launch, RDT_EV_NP_KERNEL_LAUNCH,
	      RDT_NP_KERNEL_LAUNCH);
	e->stream = (uint64_t)(uintptr_t)stream;
	np_commit();
}

static void ev_coll(void **h, const struct np_comm *c, void *parent, int rank,
		    uint64_t seq, const char *func, const void *sendbuf,
		    void *recvbuf, size_t count, int root, const char *dtype,
		    uint8_t nch, uint8_t nwarps, const char *algo,
		    const char *proto, void *group)
{
	START(struct rdt_ev_np_coll, RDT_EV_NP_COLL, RDT_NP_COLL);
	e->seq = seq;
	copy_str(e->func, sizeof(e->func), func);
	e->send_buff = (uint64_t)(uintptr_t)sendbuf;
	e->recv_buff = (uint64_t)(uintptr_t)recvbuf;
	e->count = count;
	e->root = root;
	copy_str(e->datatype, sizeof(e->datatype), dtype);
	e->nchannels = nch;
	e->nwarps = nwarps;
	copy_str(e->algo, sizeof(e->algo), algo);
	copy_str(e->proto, sizeof(e->proto), proto);
	e->parent_group = (uint64_t)(uintptr_t)group;
	np_commit();
}

static void ev_p2p(void **h, const struct np_comm *c, void *parent, int rank,
		   const char *func, void *buf, const char *dtype,
		   size_t count, int peer, uint8_t nch, void *group)
{
	START(struct rdt_ev_np_p2p, RDT_EV_NP_P2P, RDT_NP_P2P);
	copy_str(e->func, sizeof(e->func), func);
	e->buff = (uint64_t)(uintptr_t)buf;
	copy_str(e->datatype, sizeof(e->datatype), dtype);
	e->count = count;
	e->peer = peer;
	e->nchannels = nch;
	e->parent_group = (uint64_t)(uintptr_t)group;
	np_commit();
}

static void ev_proxy_op(void **h, const struct np_comm *c, void *parent,
			int rank, const struct ncclProfilerProxyOpDescr *d)
{
	START(struct rdt_ev_np_proxy_op, RDT_EV_NP_PROXY_OP, RDT_NP_PROXY_OP);
	e->op_pid = (uint32_t)d->pid;
	e->channel = d->channelId;
	e->peer = d->peer;
	e->nsteps = d->nSteps;
	e->chunk_size = d->chunkSize;
	e->is_send = d->isSend;
	np_commit();
}

static void ev_proxy_step(void **h, const struct np_comm *c, void *parent,
			  int rank, int step)
{
	START(struct rdt_ev_np_proxy_step, RDT_EV_NP_PROXY_STEP,
	      RDT_NP_PROXY_STEP);
	e->step = step;
	np_commit();
}

static void ev_proxy_ctrl(void **h, const struct np_comm *c, void *parent,
			  int rank)
{
	START(struct rdt_ev_np_proxy_ctrl, RDT_EV_NP_PROXY_CTRL,
	      RDT_NP_PROXY_CTRL);
	np_commit();
}

static void ev_kernel_ch(void **h, const struct np_comm *c, void *parent,
			 int rank, uint8_t channel, uint64_t ptimer)
{
	START(struct rdt_ev_np_kernel_ch, RDT_EV_NP_KERNEL_CH,
	      RDT_NP_KERNEL_CH);
	e->channel = channel;
	e->gpu_start = ptimer;
	np_commit();
}

/* Net plugin events: the IB and socket layouts NCCL's own plugins use;
 * any other kind keeps its id only. */
static void ev_net(void **h, const struct np_comm *c, void *parent, int rank,
		   const struct ncclProfilerNetPluginDescr *d)
{
	int64_t kind = d->id & ~(int64_t)NCCL_PROFILER_NET_VER_MASK;
	int ver = (int)(d->id & NCCL_PROFILER_NET_VER_MASK);

	if (kind == NCCL_PROFILER_NET_TYPE_IB && ver == NCCL_PROFILER_NET_IB_VER &&
	    d->data) {
		const ncclProfilerNetIbDescr_v1_t *ib = d->data;
		START(struct rdt_ev_np_net_ib, RDT_EV_NP_NET_IB,
		      RDT_NP_NET_PLUGIN);
		e->ib_type = ib->type;
		if (ib->type == ncclProfileQp) {
			e->device = ib->qp.device;
			e->wr_id = ib->qp.wr_id;
			e->opcode = ib->qp.opcode;
			e->qpn = (uint32_t)ib->qp.qpNum;
			e->length = ib->qp.length;
		}
		np_commit();
	} else if (kind == NCCL_PROFILER_NET_TYPE_SOCK &&
		   ver == NCCL_PROFILER_NET_SOCK_VER && d->data) {
		const ncclProfilerNetSockDescr_v1_t *so = d->data;
		START(struct rdt_ev_np_net_sock, RDT_EV_NP_NET_SOCK,
		      RDT_NP_NET_PLUGIN);
		if (so->type == ncclProfileSocket) {
			e->fd = so->sock.fd;
			e->op = so->sock.op;
			e->length = so->sock.length;
		}
		np_commit();
	} else {
		START(struct rdt_ev_np_net, RDT_EV_NP_NET, RDT_NP_NET_PLUGIN);
		e->plugin_id = d->id;
		np_commit();
	}
}

/* ---- v5 ------------------------------------------------------------------ */

#define V5_TYPES 0xfff
#define V4_TYPES 0xff

static ncclResult_t init_v5(void **context, uint64_t comm_id, int *mask,
			    const char *name, int nnodes, int nranks,
			    int rank, ncclDebugLogger_t logfn)
{
	return init_common(context, comm_id, mask, name, nnodes, nranks, rank,
			   logfn, 5, V5_TYPES);
}

static ncclResult_t start_v5(void *context, void **h,
			     ncclProfilerEventDescr_v5_t *d)
{
	struct np_comm *c = comm_of(context);
	void *parent;
	int rank;

	if (!h) {
		skip(d ? d->type : 0, RDT_NP_SKIP_NULL);
		return ncclSuccess;
	}
	*h = NULL;
	if (!d) {
		skip(0, RDT_NP_SKIP_NULL);
		return ncclSuccess;
	}
	if (!c) {
		skip(d->type, RDT_NP_SKIP_CTX);
		return ncclSuccess;
	}
	parent = d->parentObj;
	rank = d->rank;
	switch (d->type) {
	case ncclProfileGroup:
		ev_group(h, c, parent, rank, RDT_EV_NP_GROUP, RDT_NP_GROUP,
			 false, 0);
		break;
	case ncclProfileGroupApi:
		ev_group(h, c, parent, rank, RDT_EV_NP_GROUP_API,
			 RDT_NP_GROUP_API, d->groupApi.graphCaptured,
			 d->groupApi.groupDepth);
		break;
	case ncclProfileCollApi:
		ev_api(h, c, parent, rank, RDT_EV_NP_COLL_API, RDT_NP_COLL_API,
		       d->collApi.func, d->collApi.count, d->collApi.datatype,
		       d->collApi.root, d->collApi.stream,
		       d->collApi.graphCaptured);
		break;
	case ncclProfileP2pApi:
		ev_api(h, c, parent, rank, RDT_EV_NP_P2P_API, RDT_NP_P2P_API,
		       d->p2pApi.func, d->p2pApi.count, d->p2pApi.datatype, -1,
		       d->p2pApi.stream, d->p2pApi.graphCaptured);
		break;
	case ncclProfileKernelLaunch:
		ev_kernel_launch(h, c, parent, rank, d->kernelLaunch.stream);
		break;
	case ncclProfileColl:
		ev_coll(h, c, parent, rank, d->coll.seqNumber, d->coll.func,
			d->coll.sendBuff, d->coll.recvBuff, d->coll.count,
			d->coll.root, d->coll.datatype, d->coll.nChannels,
			d->coll.nWarps, d->coll.algo, d->coll.proto,
			d->coll.parentGroup);
		break;
	case ncclProfileP2p:
		ev_p2p(h, c, parent, rank, d->p2p.func, d->p2p.buff,
		       d->p2p.datatype, d->p2p.count, d->p2p.peer,
		       d->p2p.nChannels, d->p2p.parentGroup);
		break;
	case ncclProfileProxyOp:
		ev_proxy_op(h, c, parent, rank, &d->proxyOp);
		break;
	case ncclProfileProxyStep:
		ev_proxy_step(h, c, parent, rank, d->proxyStep.step);
		break;
	case ncclProfileProxyCtrl:
		ev_proxy_ctrl(h, c, parent, rank);
		break;
	case ncclProfileKernelCh:
		ev_kernel_ch(h, c, parent, rank, d->kernelCh.channelId,
			     d->kernelCh.pTimer);
		break;
	case ncclProfileNetPlugin:
		ev_net(h, c, parent, rank, &d->netPlugin);
		break;
	default:
		skip(d->type, RDT_NP_SKIP_TYPE);
		break;
	}
	return ncclSuccess;
}

static ncclResult_t stop_event(void *handle)
{
	uint64_t id = (uint64_t)(uintptr_t)handle;
	struct rdt_ev_np_stop *e;

	if (!handle)
		return ncclSuccess;
	e = np_reserve_for(RDT_EV_NP_STOP, sizeof(*e), id);
	if (e)
		np_commit();
	return ncclSuccess;
}

static ncclResult_t record_state(void *handle, ncclProfilerEventState_t state,
				 ncclProfilerEventStateArgs_t *a)
{
	uint64_t id = (uint64_t)(uintptr_t)handle;
	struct rdt_ev_np_state *e;
	uint64_t arg = 0;

	if (!handle)
		return ncclSuccess;
	if (a) {
		switch (state) {
		case ncclProfilerProxyStepSendGPUWait:
		case ncclProfilerProxyStepSendPeerWait_v4:
		case ncclProfilerProxyStepSendWait:
		case ncclProfilerProxyStepRecvWait:
		case ncclProfilerProxyStepRecvFlushWait:
		case ncclProfilerProxyStepRecvGPUWait:
			arg = a->proxyStep.transSize;
			break;
		case ncclProfilerProxyCtrlAppendEnd:
			arg = (uint64_t)(int64_t)a->proxyCtrl.appendedProxyOps;
			break;
		case ncclProfilerKernelChStop:
			arg = a->kernelCh.pTimer;
			break;
		}
	}
	e = np_reserve_for(RDT_EV_NP_STATE, sizeof(*e), id);
	if (!e)
		return ncclSuccess;
	e->state = (uint32_t)state;
	e->arg = arg;
	np_commit();
	return ncclSuccess;
}

NP_EXPORT const ncclProfiler_v5_t ncclProfiler_v5 = {
	.name = "rdmatrace",
	.init = init_v5,
	.startEvent = start_v5,
	.stopEvent = stop_event,
	.recordEventState = record_state,
	.finalize = finalize,
};

/* ---- v4 (NCCL 2.25 .. 2.27) ---------------------------------------------- */

static ncclResult_t init_v4(void **context, int *mask, const char *name,
			    uint64_t comm_hash, int nnodes, int nranks,
			    int rank, ncclDebugLogger_t logfn)
{
	return init_common(context, comm_hash, mask, name, nnodes, nranks, rank,
			   logfn, 4, V4_TYPES);
}

static ncclResult_t start_v4(void *context, void **h,
			     ncclProfilerEventDescr_v4_t *d)
{
	struct np_comm *c = comm_of(context);
	void *parent;
	int rank;

	if (!h || !d) {
		if (h)
			*h = NULL;
		skip(d ? d->type : 0, RDT_NP_SKIP_NULL);
		return ncclSuccess;
	}
	*h = NULL;
	if (!c) {
		skip(d->type, RDT_NP_SKIP_CTX);
		return ncclSuccess;
	}
	parent = d->parentObj;
	rank = d->rank;
	switch (d->type) {
	case ncclProfileGroup:
		ev_group(h, c, parent, rank, RDT_EV_NP_GROUP, RDT_NP_GROUP,
			 false, 0);
		break;
	case ncclProfileColl:
		/* v4 has no parentGroup: the parent is the group. */
		ev_coll(h, c, parent, rank, d->coll.seqNumber, d->coll.func,
			d->coll.sendBuff, d->coll.recvBuff, d->coll.count,
			d->coll.root, d->coll.datatype, d->coll.nChannels,
			d->coll.nWarps, d->coll.algo, d->coll.proto, parent);
		break;
	case ncclProfileP2p:
		ev_p2p(h, c, parent, rank, d->p2p.func, d->p2p.buff,
		       d->p2p.datatype, d->p2p.count, d->p2p.peer,
		       d->p2p.nChannels, parent);
		break;
	case ncclProfileProxyOp:
		ev_proxy_op(h, c, parent, rank, &d->proxyOp);
		break;
	case ncclProfileProxyStep:
		ev_proxy_step(h, c, parent, rank, d->proxyStep.step);
		break;
	case ncclProfileProxyCtrl:
		ev_proxy_ctrl(h, c, parent, rank);
		break;
	case ncclProfileKernelCh:
		ev_kernel_ch(h, c, parent, rank, d->kernelCh.channelId,
			     d->kernelCh.pTimer);
		break;
	case ncclProfileNetPlugin:
		ev_net(h, c, parent, rank, &d->netPlugin);
		break;
	default:
		skip(d->type, RDT_NP_SKIP_TYPE);
		break;
	}
	return ncclSuccess;
}

NP_EXPORT const ncclProfiler_v4_t ncclProfiler_v4 = {
	.name = "rdmatrace",
	.init = init_v4,
	.startEvent = start_v4,
	.stopEvent = stop_event,
	.recordEventState = record_state,
	.finalize = finalize,
};
