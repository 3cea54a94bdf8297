// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libnccl-profiler-rdmatrace.so: NCCL's profiler plugin ABI (v5 .. v1) ->
 * rdmatrace records.  Each version's startEvent turns its descriptor into
 * v5's; each NCCL event type has one mapping that copies that descriptor's
 * fields into its record; rings.c does the rest.
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
	if (!np.shm || np.retired) {
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
			c->ev_rank = rank;
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

/* ---- events: one mapping per type ---------------------------------------
 *
 * Every version's startEvent turns its descriptor into v5's (the superset:
 * v5 itself as it is) and calls start_event, which maps each type onto its
 * record; stop and state records are the same in all versions. */

/* What every start record shares: the handle's slot and the ids. */
struct np_start {
	void		**h;
	uint64_t	comm_id;
	void		*parent;
	int		rank;
};

/* Reserve @T's record for a new event, fill its ids, set *s->h. */
#define START(T, type, ntype)						\
	uint64_t id;							\
	T *e = np_reserve(type, sizeof(T), ntype, &id);		\
	*s->h = (void *)(uintptr_t)id;					\
	if (!e)								\
		return;							\
	e->ids.parent = (uint64_t)(uintptr_t)s->parent;		\
	e->ids.comm_id = s->comm_id;					\
	e->ids.rank = s->rank

static void ev_group(const struct np_start *s, unsigned int type,
		     unsigned int ntype, bool captured, int depth)
{
	START(struct rdt_ev_np_group, type, ntype);
	e->graph_captured = captured;
	e->depth = depth;
	np_commit();
}

static void ev_api(const struct np_start *s, unsigned int type,
		   unsigned int ntype, const char *func, size_t count,
		   const char *dtype, int root, void *stream, bool captured)
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

static void ev_kernel_launch(const struct np_start *s,
			     const ncclProfilerEventDescr_v5_t *d)
{
	START(struct rdt_ev_np_kernel_launch, RDT_EV_NP_KERNEL_LAUNCH,
	      RDT_NP_KERNEL_LAUNCH);
	e->stream = (uint64_t)(uintptr_t)d->kernelLaunch.stream;
	np_commit();
}

static void ev_coll(const struct np_start *s,
		    const ncclProfilerEventDescr_v5_t *d)
{
	START(struct rdt_ev_np_coll, RDT_EV_NP_COLL, RDT_NP_COLL);
	e->seq = d->coll.seqNumber;
	copy_str(e->func, sizeof(e->func), d->coll.func);
	e->send_buff = (uint64_t)(uintptr_t)d->coll.sendBuff;
	e->recv_buff = (uint64_t)(uintptr_t)d->coll.recvBuff;
	e->count = d->coll.count;
	e->root = d->coll.root;
	copy_str(e->datatype, sizeof(e->datatype), d->coll.datatype);
	e->nchannels = d->coll.nChannels;
	e->nwarps = d->coll.nWarps;
	copy_str(e->algo, sizeof(e->algo), d->coll.algo);
	copy_str(e->proto, sizeof(e->proto), d->coll.proto);
	e->parent_group = (uint64_t)(uintptr_t)d->coll.parentGroup;
	np_commit();
}

static void ev_p2p(const struct np_start *s,
		   const ncclProfilerEventDescr_v5_t *d)
{
	START(struct rdt_ev_np_p2p, RDT_EV_NP_P2P, RDT_NP_P2P);
	copy_str(e->func, sizeof(e->func), d->p2p.func);
	e->buff = (uint64_t)(uintptr_t)d->p2p.buff;
	copy_str(e->datatype, sizeof(e->datatype), d->p2p.datatype);
	e->count = d->p2p.count;
	e->peer = d->p2p.peer;
	e->nchannels = d->p2p.nChannels;
	e->parent_group = (uint64_t)(uintptr_t)d->p2p.parentGroup;
	np_commit();
}

static void ev_proxy_op(const struct np_start *s,
			const ncclProfilerEventDescr_v5_t *d)
{
	START(struct rdt_ev_np_proxy_op, RDT_EV_NP_PROXY_OP, RDT_NP_PROXY_OP);
	e->op_pid = (uint32_t)d->proxyOp.pid;
	e->channel = d->proxyOp.channelId;
	e->peer = d->proxyOp.peer;
	e->nsteps = d->proxyOp.nSteps;
	e->chunk_size = d->proxyOp.chunkSize;
	e->is_send = d->proxyOp.isSend;
	np_commit();
}

static void ev_proxy_step(const struct np_start *s,
			  const ncclProfilerEventDescr_v5_t *d)
{
	START(struct rdt_ev_np_proxy_step, RDT_EV_NP_PROXY_STEP,
	      RDT_NP_PROXY_STEP);
	e->step = d->proxyStep.step;
	np_commit();
}

static void ev_proxy_ctrl(const struct np_start *s)
{
	START(struct rdt_ev_np_proxy_ctrl, RDT_EV_NP_PROXY_CTRL,
	      RDT_NP_PROXY_CTRL);
	np_commit();
}

/* pTimer 0: no GPU stamp (v3); the clock estimate skips it. */
static void ev_kernel_ch(const struct np_start *s,
			 const ncclProfilerEventDescr_v5_t *d)
{
	START(struct rdt_ev_np_kernel_ch, RDT_EV_NP_KERNEL_CH,
	      RDT_NP_KERNEL_CH);
	e->channel = d->kernelCh.channelId;
	e->gpu_start = d->kernelCh.pTimer;
	np_commit();
}

/* Net plugin events: the IB and socket layouts NCCL's own plugins use;
 * any other kind keeps its id only. */
static void ev_net(const struct np_start *s,
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

/*
 * NCCL sets a descriptor's rank for these types only: it zero-initializes
 * every descriptor, and GroupApi, CollApi, P2pApi, KernelLaunch, Group,
 * ProxyCtrl and KernelCh keep rank 0 whatever the communicator's rank
 * (src/plugin/profiler.cc of 2.23 .. 2.28; seen as "rank: 0" on every
 * API event of rank 1 with 2.28.9 on an H100).  Their rank is the
 * context's (np_comm.ev_rank).
 */
static bool nccl_sets_rank(uint64_t type)
{
	return type == ncclProfileColl || type == ncclProfileP2p ||
	       type == ncclProfileProxyOp || type == ncclProfileProxyStep ||
	       type == ncclProfileNetPlugin;
}

/* A v5 descriptor (or one an older version's adapter made) -> its record;
 * @ctx_rank: the rank of a type NCCL gives none. */
static void start_event(void **h, uint64_t comm_id, int ctx_rank,
			const ncclProfilerEventDescr_v5_t *d)
{
	const struct np_start s = { h, comm_id, d->parentObj,
				    nccl_sets_rank(d->type) ? d->rank :
							      ctx_rank };

	switch (d->type) {
	case ncclProfileGroup:
		ev_group(&s, RDT_EV_NP_GROUP, RDT_NP_GROUP, false, 0);
		break;
	case ncclProfileGroupApi:
		ev_group(&s, RDT_EV_NP_GROUP_API, RDT_NP_GROUP_API,
			 d->groupApi.graphCaptured, d->groupApi.groupDepth);
		break;
	case ncclProfileCollApi:
		ev_api(&s, RDT_EV_NP_COLL_API, RDT_NP_COLL_API,
		       d->collApi.func, d->collApi.count, d->collApi.datatype,
		       d->collApi.root, d->collApi.stream,
		       d->collApi.graphCaptured);
		break;
	case ncclProfileP2pApi:
		ev_api(&s, RDT_EV_NP_P2P_API, RDT_NP_P2P_API, d->p2pApi.func,
		       d->p2pApi.count, d->p2pApi.datatype, -1,
		       d->p2pApi.stream, d->p2pApi.graphCaptured);
		break;
	case ncclProfileKernelLaunch:
		ev_kernel_launch(&s, d);
		break;
	case ncclProfileColl:
		ev_coll(&s, d);
		break;
	case ncclProfileP2p:
		ev_p2p(&s, d);
		break;
	case ncclProfileProxyOp:
		ev_proxy_op(&s, d);
		break;
	case ncclProfileProxyStep:
		ev_proxy_step(&s, d);
		break;
	case ncclProfileProxyCtrl:
		ev_proxy_ctrl(&s);
		break;
	case ncclProfileKernelCh:
		ev_kernel_ch(&s, d);
		break;
	case ncclProfileNetPlugin:
		ev_net(&s, &d->netPlugin);
		break;
	default:
		skip(d->type, RDT_NP_SKIP_TYPE);
		break;
	}
}

/* What every version's startEvent checks first: a slot for the handle, a
 * descriptor, a context init returned.  NULL: skipped (and counted). */
static struct np_comm *start_check(void *context, void **h, const void *d,
				   uint64_t type)
{
	struct np_comm *c;

	if (!h) {
		skip(type, RDT_NP_SKIP_NULL);
		return NULL;
	}
	*h = NULL;
	if (!d) {
		skip(0, RDT_NP_SKIP_NULL);
		return NULL;
	}
	c = comm_of(context);
	if (!c)
		skip(type, RDT_NP_SKIP_CTX);
	return c;
}

/* The descriptor of an older version, as v5's: its header; the type's
 * members are the adapter's to fill. */
static void as_v5(ncclProfilerEventDescr_v5_t *x, uint64_t type, void *parent,
		  int rank)
{
	memset(x, 0, sizeof(*x));
	x->type = type;
	x->parentObj = parent;
	x->rank = rank;
}

/* Members v1 to v4 share with v5, in the same layout. */
#define SAME_MEMBERS(x, d)						\
	case ncclProfileGroup:						\
	case ncclProfileProxyCtrl:					\
		break;							\
	case ncclProfileProxyOp:					\
		(x).proxyOp = (d)->proxyOp;				\
		break;							\
	case ncclProfileProxyStep:					\
		(x).proxyStep = (d)->proxyStep;				\
		break

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

/* @arg: transSize, appendedProxyOps or the GPU timer, as the state has;
 * @steps: a v1..v3 ProxyOp state's. */
static ncclResult_t state_record(void *handle, ncclProfilerEventState_t state,
				 uint64_t arg, int steps)
{
	uint64_t id = (uint64_t)(uintptr_t)handle;
	struct rdt_ev_np_state *e;

	if (!handle)
		return ncclSuccess;
	e = np_reserve_for(RDT_EV_NP_STATE, sizeof(*e), id);
	if (!e)
		return ncclSuccess;
	e->state = (uint32_t)state;
	e->arg = arg;
	e->steps = steps;
	np_commit();
	return ncclSuccess;
}

/* ---- v5 (NCCL 2.28) -------------------------------------------------------- */

#define V5_TYPES 0xfff
#define V4_TYPES 0xff
#define V3_TYPES 0xff	/* v3 has KernelCh (no GPU timer) and NetPlugin */
#define V2_TYPES 0x3f	/* Group .. ProxyCtrl */

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
	struct np_comm *c = start_check(context, h, d, d ? d->type : 0);

	if (c)
		start_event(h, c->comm_id, c->ev_rank, d);
	return ncclSuccess;
}

/* v4 and v5 (ncclProfilerEventStateArgs_v4_t is v5's). */
static ncclResult_t record_state(void *handle, ncclProfilerEventState_t state,
				 ncclProfilerEventStateArgs_t *a)
{
	uint64_t arg = 0;

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
	return state_record(handle, state, arg, 0);
}

NP_EXPORT const ncclProfiler_v5_t ncclProfiler_v5 = {
	.name = "rdmatrace",
	.init = init_v5,
	.startEvent = start_v5,
	.stopEvent = stop_event,
	.recordEventState = record_state,
	.finalize = finalize,
};

/* ---- v4 (NCCL 2.27) ---------------------------------------------------- */

static ncclResult_t init_v4(void **context, int *mask, const char *name,
			    uint64_t comm_hash, int nnodes, int nranks,
			    int rank, ncclDebugLogger_t logfn)
{
	return init_common(context, comm_hash, mask, name, nnodes, nranks, rank,
			   logfn, 4, V4_TYPES);
}

/* What a v1..v3 descriptor has beyond v5's: the communicator (Coll, P2p)
 * and, in v1 and v2, a Coll's fields of the np_coll_old record. */
struct np_older {
	uint64_t	hash;		/* commHash, 0: none */
	const char	*op;		/* v1's ncclRedOp_t, named */
	uint64_t	traffic_bytes;
	uint8_t		is_collnet, is_nvls;
	uint8_t		has;		/* RDT_NP_OLD_*, 0: no record */
};

/*
 * Versions before v5: a converter turns the descriptor into v5's (false:
 * a type this version has no member for) and fills *o with what it has
 * beyond it (v4: nothing; o starts zeroed).
 */
typedef bool (*to_v5_fn)(ncclProfilerEventDescr_v5_t *x, const void *d,
			 struct np_older *o);

/* v1..v3: init has no communicator id; their Coll and P2p carry the
 * commHash (NCCL 2.28, calling these versions, passes 0): the context
 * keeps the first one, for the events after it.  v4: init's id. */
static uint64_t comm_id_of(struct np_comm *c, uint64_t hash)
{
	if (!hash)
		return __atomic_load_n(&c->comm_id, __ATOMIC_RELAXED);
	if (!__atomic_load_n(&c->comm_id, __ATOMIC_RELAXED))
		__atomic_store_n(&c->comm_id, hash, __ATOMIC_RELAXED);
	return hash;
}

/* v1..v3: init has no rank either; a Coll's or P2p's descriptor has it
 * (@hash set: one of them), the events after it take it.  v4: init's. */
static int ev_rank_of(struct np_comm *c, uint64_t hash, int rank)
{
	if (hash && __atomic_load_n(&c->ev_rank, __ATOMIC_RELAXED) < 0)
		__atomic_store_n(&c->ev_rank, rank, __ATOMIC_RELAXED);
	return __atomic_load_n(&c->ev_rank, __ATOMIC_RELAXED);
}

_Static_assert(sizeof(struct rdt_ev_np_coll_old) <= RDT_NP_SLOT &&
	       sizeof(struct rdt_ev_np_coll_old) % 8 == 0, "np_coll_old size");

/* A v1, v2 Coll's np_coll_old, after its Coll record: its ids; a full
 * ring drops and counts it like any record. */
static void coll_old(uint64_t id, uint64_t comm_id,
		     const ncclProfilerEventDescr_v5_t *x,
		     const struct np_older *o)
{
	struct rdt_ev_np_coll_old *e = np_reserve_for(RDT_EV_NP_COLL_OLD,
						      sizeof(*e), id);

	if (!e)
		return;
	e->ids.parent = (uint64_t)(uintptr_t)x->parentObj;
	e->ids.comm_id = comm_id;
	e->ids.rank = x->rank;
	copy_str(e->op, sizeof(e->op), o->op);
	e->traffic_bytes = o->traffic_bytes;
	e->is_collnet = o->is_collnet;
	e->is_nvls = o->is_nvls;
	e->has = o->has;
	np_commit();
}

static ncclResult_t start_older(void *context, void **h, const void *d,
				uint8_t type, to_v5_fn to_v5)
{
	struct np_comm *c = start_check(context, h, d, type);
	ncclProfilerEventDescr_v5_t x;
	struct np_older o = { 0 };
	uint64_t comm_id;
	int rank;

	if (!c)
		return ncclSuccess;
	if (!to_v5(&x, d, &o)) {
		skip(type, RDT_NP_SKIP_TYPE);
		return ncclSuccess;
	}
	comm_id = comm_id_of(c, o.hash);
	rank = ev_rank_of(c, o.hash, x.rank);
	start_event(h, comm_id, rank, &x);
	if (o.has && *h)
		coll_old((uint64_t)(uintptr_t)*h, comm_id, &x, &o);
	return ncclSuccess;
}

/* v4 has no parentGroup: a Coll's or P2p's parent is its group. */
static bool v4_to_v5(ncclProfilerEventDescr_v5_t *x, const void *p,
		     struct np_older *o)
{
	const ncclProfilerEventDescr_v4_t *d = p;

	(void)o;
	as_v5(x, d->type, d->parentObj, d->rank);
	switch (d->type) {
	case ncclProfileColl:
		x->coll.seqNumber = d->coll.seqNumber;
		x->coll.func = d->coll.func;
		x->coll.sendBuff = d->coll.sendBuff;
		x->coll.recvBuff = d->coll.recvBuff;
		x->coll.count = d->coll.count;
		x->coll.root = d->coll.root;
		x->coll.datatype = d->coll.datatype;
		x->coll.nChannels = d->coll.nChannels;
		x->coll.nWarps = d->coll.nWarps;
		x->coll.algo = d->coll.algo;
		x->coll.proto = d->coll.proto;
		x->coll.parentGroup = d->parentObj;
		break;
	case ncclProfileP2p:
		x->p2p.func = d->p2p.func;
		x->p2p.buff = d->p2p.buff;
		x->p2p.datatype = d->p2p.datatype;
		x->p2p.count = d->p2p.count;
		x->p2p.peer = d->p2p.peer;
		x->p2p.nChannels = d->p2p.nChannels;
		x->p2p.parentGroup = d->parentObj;
		break;
	case ncclProfileKernelCh:
		x->kernelCh = d->kernelCh;
		break;
	case ncclProfileNetPlugin:
		x->netPlugin = d->netPlugin;
		break;
	SAME_MEMBERS(*x, d);
	default:
		return false;
	}
	return true;
}

static ncclResult_t start_v4(void *context, void **h,
			     ncclProfilerEventDescr_v4_t *d)
{
	return start_older(context, h, d, d ? d->type : 0, v4_to_v5);
}

NP_EXPORT const ncclProfiler_v4_t ncclProfiler_v4 = {
	.name = "rdmatrace",
	.init = init_v4,
	.startEvent = start_v4,
	.stopEvent = stop_event,
	.recordEventState = record_state,
	.finalize = finalize,
};

/* ---- v1 to v3 (NCCL 2.23 .. 2.26) ------------------------------------------
 *
 * init has no communicator: its record has comm_id 0, no name, rank -1 and
 * nnodes, nranks 0; the events carry the commHash of the first Coll or P2p
 * (comm_id_of), and the events NCCL gives no rank that Coll's or P2p's
 * rank (ev_rank_of; -1 before it).  The Coll fields v5 has no place for
 * (v1: op, trafficBytes, isCollnet, isNvls; v2: trafficBytes; v3: none) go
 * into an np_coll_old record after the Coll's; a ProxyOp state's steps into
 * the state record. */

static ncclResult_t init_v123(void **context, int *mask, unsigned int abi,
			      int types)
{
	return init_common(context, 0, mask, "", 0, 0, -1, NULL, abi, types);
}

/* v1's enum values -> the names v2 on pass. */
static const char *v1_name(const char *const *names, size_t n, uint8_t v)
{
	return v < n ? names[v] : "?";
}

static const char *const v1_funcs[] = NP_V1_FUNCS;
static const char *const v1_dtypes[] = NP_V1_DATATYPES;
static const char *const v1_algos[] = NP_V1_ALGOS;
static const char *const v1_protos[] = NP_V1_PROTOS;
static const char *const v1_ops[] = NP_V1_OPS;
#define V1_NAME(tab, v) v1_name(tab, sizeof(tab) / sizeof(tab[0]), v)
#define V1_FUNC(v)	V1_NAME(v1_funcs, v)
#define V1_DTYPE(v)	V1_NAME(v1_dtypes, v)
#define V1_ALGO(v)	V1_NAME(v1_algos, v)
#define V1_PROTO(v)	V1_NAME(v1_protos, v)
#define AS_IS(v)	(v)

/* ncclRedOp_t: nccl.h's names; beyond them, a handle of
 * ncclRedOpCreatePreMulSum (NCCL's only user-defined op). */
static const char *v1_op(uint32_t v)
{
	return v < sizeof(v1_ops) / sizeof(v1_ops[0]) ? v1_ops[v] :
	       NP_V1_OP_USER;
}

/* A Coll's fields v5 lacks, per version (OLD_COLL in V123_TO_V5). */
static void v1_old(struct np_older *o, const ncclProfilerEventDescr_v1_t *d)
{
	o->op = v1_op(d->coll.op);
	o->traffic_bytes = d->coll.trafficBytes;
	o->is_collnet = d->coll.isCollnet != 0;
	o->is_nvls = d->coll.isNvls != 0;
	o->has = RDT_NP_OLD_OP | RDT_NP_OLD_TRAFFIC | RDT_NP_OLD_COLLNET |
		 RDT_NP_OLD_NVLS;
}

static void v2_old(struct np_older *o, const ncclProfilerEventDescr_v2_t *d)
{
	o->traffic_bytes = d->coll.trafficBytes;
	o->has = RDT_NP_OLD_TRAFFIC;
}
#define V3_OLD(o, d) ((void)0)

/* v3's KernelCh (no GPU timer) and NetPlugin; v1 and v2 have neither. */
static bool v3_more(ncclProfilerEventDescr_v5_t *x,
		    const ncclProfilerEventDescr_v3_t *d)
{
	if (d->type == ncclProfileKernelCh)
		x->kernelCh.channelId = d->kernelCh.channelId;
	else if (d->type == ncclProfileNetPlugin)
		x->netPlugin = d->netPlugin;
	else
		return false;
	return true;
}
#define NO_MORE(x, d) false

/*
 * vN_to_v5 for v1..v3: Coll and P2p with the parent as their group (as in
 * v4); FN, DT, AL, PR name v1's enum values, v2 and v3 pass names as they
 * are; OLD: the Coll's fields v5 lacks (into *o); MORE: the types only
 * some of them have.
 */
#define V123_TO_V5(N, FN, DT, AL, PR, OLD, MORE)			\
static bool v##N##_to_v5(ncclProfilerEventDescr_v5_t *x, const void *p,	\
			 struct np_older *o)				\
{									\
	const ncclProfilerEventDescr_v##N##_t *d = p;			\
									\
	as_v5(x, d->type, d->parentObj, d->rank);			\
	switch (d->type) {						\
	case ncclProfileColl:						\
		x->coll.seqNumber = d->coll.seqNumber;			\
		x->coll.func = FN(d->coll.func);			\
		x->coll.sendBuff = d->coll.sendBuff;			\
		x->coll.recvBuff = d->coll.recvBuff;			\
		x->coll.count = d->coll.count;				\
		x->coll.root = d->coll.root;				\
		x->coll.datatype = DT(d->coll.datatype);		\
		x->coll.nChannels = d->coll.nMaxChannels;		\
		x->coll.nWarps = d->coll.nWarps;			\
		x->coll.algo = AL(d->coll.algo);			\
		x->coll.proto = PR(d->coll.proto);			\
		x->coll.parentGroup = d->parentObj;			\
		o->hash = d->coll.commHash;				\
		OLD(o, d);						\
		break;							\
	case ncclProfileP2p:						\
		x->p2p.func = FN(d->p2p.func);				\
		x->p2p.buff = d->p2p.buff;				\
		x->p2p.datatype = DT(d->p2p.datatype);			\
		x->p2p.count = d->p2p.count;				\
		x->p2p.peer = d->p2p.peer;				\
		x->p2p.parentGroup = d->parentObj;			\
		o->hash = d->p2p.commHash;				\
		break;							\
	SAME_MEMBERS(*x, d);						\
	default:							\
		return MORE(x, d);					\
	}								\
	return true;							\
}									\
									\
static ncclResult_t start_v##N(void *context, void **h,			\
			       ncclProfilerEventDescr_v##N##_t *d)	\
{									\
	return start_older(context, h, d, d ? d->type : 0, v##N##_to_v5); \
}
V123_TO_V5(3, AS_IS, AS_IS, AS_IS, AS_IS, V3_OLD, v3_more)
V123_TO_V5(2, AS_IS, AS_IS, AS_IS, AS_IS, v2_old, NO_MORE)
V123_TO_V5(1, V1_FUNC, V1_DTYPE, V1_ALGO, V1_PROTO, v1_old, NO_MORE)

/* v1..v3 states stop at ProxyCtrlAppendEnd (18), numbered as v5's; only
 * they send the ProxyOp states (0..7), with proxyOp.transSize and
 * steps. */
static ncclResult_t record_state_v123(void *handle,
				      ncclProfilerEventState_t state,
				      ncclProfilerEventStateArgs_v3_t *a)
{
	uint64_t arg = 0;
	int steps = 0;

	if (a && state >= ncclProfilerProxyOpSendPosted &&
	    state <= ncclProfilerProxyStepRecvGPUWait) {
		arg = a->proxyOp.transSize;
		if (state <= ncclProfilerProxyOpRecvDone)
			steps = a->proxyOp.steps;
	} else if (a && state == ncclProfilerProxyCtrlAppendEnd) {
		arg = (uint64_t)(int64_t)a->proxyCtrl.appendedProxyOps;
	}
	return state_record(handle, state, arg, steps);
}

#define NP_V123(N, TYPES)						\
static ncclResult_t init_v##N(void **context, int *mask)		\
{									\
	return init_v123(context, mask, N, TYPES);			\
}									\
NP_EXPORT const ncclProfiler_v##N##_t ncclProfiler_v##N = {		\
	.name = "rdmatrace",						\
	.init = init_v##N,						\
	.startEvent = start_v##N,					\
	.stopEvent = stop_event,					\
	.recordEventState = record_state_v123,				\
	.finalize = finalize,						\
}
NP_V123(3, V3_TYPES);
NP_V123(2, V2_TYPES);
NP_V123(1, V2_TYPES);
