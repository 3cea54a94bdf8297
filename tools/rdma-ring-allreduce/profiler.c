// SPDX-License-Identifier: GPL-2.0
/* See profiler.h. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "../../producers/nccl-profiler/nccl_profiler_abi.h"
#include "common.h"
#include "profiler.h"

struct rra_prof {
	void *dl;
	const ncclProfiler_v5_t *p;
	void *ctx;
	int rank, mask;
	void *coll, *op, *rop;	/* the collective, its send and receive op */
	void **step;		/* per ring step of the running collective */
	uint64_t *step_bytes;
	void **wr;		/* per WR of the running collective */
	size_t *wr_len;
	void **rstep;		/* the same for the receive side */
	uint64_t *rstep_bytes;
	void **rwr;
	uint32_t steps, K;
	uint64_t total, cap_total;
	uint32_t cap_steps;
	ncclProfilerNetIbDescr_v1_t ib;
};

struct rra_prof *prof_open(int rank, int nranks, const char *devname)
{
	const char *name = getenv("NCCL_PROFILER_PLUGIN");
	struct rra_prof *p;
	char lib[4096];
	uint64_t comm_id = 0x52494e4700000000ull | (uint32_t)nranks;

	if (!name || !*name)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	snprintf(lib, sizeof(lib), "libnccl-profiler-%s.so", name);
	p->dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!p->dl)
		p->dl = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	p->p = p->dl ? dlsym(p->dl, "ncclProfiler_v5") : NULL;
	if (!p->p || p->p->init(&p->ctx, comm_id, &p->mask, devname, 1, nranks,
				rank, NULL) != ncclSuccess || !p->ctx) {
		rra_err("NCCL_PROFILER_PLUGIN=%s: %s: collectives not reported",
			name, !p->dl ? dlerror() : !p->p ? "no ncclProfiler_v5" :
			"init failed");
		free(p);
		return NULL;
	}
	p->rank = rank;
	return p;
}

void prof_close(struct rra_prof *p)
{
	if (!p)
		return;
	p->p->finalize(p->ctx);
	free(p->step);
	free(p->step_bytes);
	free(p->wr);
	free(p->wr_len);
	free(p->rstep);
	free(p->rstep_bytes);
	free(p->rwr);
	free(p);
}

static void *start(struct rra_prof *p, uint64_t type, void *parent,
		   ncclProfilerEventDescr_v5_t *d)
{
	void *h = NULL;

	if (!(p->mask & (int)type))
		return NULL;
	d->type = type;
	d->parentObj = parent;
	d->rank = p->rank;
	p->p->startEvent(p->ctx, &h, d);
	return h;
}

static void stop(struct rra_prof *p, void **h)
{
	if (*h)
		p->p->stopEvent(*h);
	*h = NULL;
}

/* @a holds at least @n elements: 0, or -1 (a is unchanged) */
#define GROW(a, n) ((q = realloc((a), (n) * sizeof(*(a)))) ? ((a) = q, 0) : -1)

void prof_coll_begin(struct rra_prof *p, uint64_t seq, size_t count,
		     int peer, int left, uint32_t steps, uint32_t K,
		     uint32_t chunk_bytes)
{
	ncclProfilerEventDescr_v5_t d;
	uint64_t total = (uint64_t)steps * K;
	void *q;

	if (!p)
		return;
	if (total > p->cap_total || steps > p->cap_steps) {
		if (GROW(p->step, steps) || GROW(p->step_bytes, steps) ||
		    GROW(p->rstep, steps) || GROW(p->rstep_bytes, steps) ||
		    GROW(p->wr, total) || GROW(p->wr_len, total) ||
		    GROW(p->rwr, total))
			return;		/* this collective goes unreported */
		p->cap_total = total;
		p->cap_steps = steps;
	}
	p->steps = steps;
	p->K = K;
	p->total = total;
	memset(p->step, 0, steps * sizeof(*p->step));
	memset(p->step_bytes, 0, steps * sizeof(*p->step_bytes));
	memset(p->rstep, 0, steps * sizeof(*p->rstep));
	memset(p->rstep_bytes, 0, steps * sizeof(*p->rstep_bytes));
	memset(p->wr, 0, total * sizeof(*p->wr));
	memset(p->rwr, 0, total * sizeof(*p->rwr));
	memset(&d, 0, sizeof(d));
	d.coll.seqNumber = seq;
	d.coll.func = "AllReduce";
	d.coll.count = count;
	d.coll.root = -1;
	d.coll.datatype = "ncclFloat32";
	d.coll.nChannels = 1;
	d.coll.nWarps = 0;
	d.coll.algo = "Ring";
	d.coll.proto = "Simple";
	p->coll = start(p, ncclProfileColl, NULL, &d);
	memset(&d, 0, sizeof(d));
	d.proxyOp.pid = getpid();
	d.proxyOp.channelId = 0;
	d.proxyOp.peer = peer;
	d.proxyOp.nSteps = (int)steps;
	d.proxyOp.chunkSize = (int)chunk_bytes;
	d.proxyOp.isSend = 1;
	p->op = start(p, ncclProfileProxyOp, p->coll, &d);
	d.proxyOp.peer = left;
	d.proxyOp.isSend = 0;
	p->rop = start(p, ncclProfileProxyOp, p->coll, &d);
}

/* A net-IB QP event under step s of @op (started here if it is not). */
static void *qp_event(struct rra_prof *p, void **step, void *op, uint32_t s,
		      uint64_t wr_id, uint32_t qpn, int opcode, size_t len)
{
	ncclProfilerEventDescr_v5_t d;

	if (!step[s]) {
		memset(&d, 0, sizeof(d));
		d.proxyStep.step = (int)s;
		step[s] = start(p, ncclProfileProxyStep, op, &d);
	}
	/* NCCL's IB plugin reports what it posts: the descriptor is read
	 * during startEvent only. */
	memset(&p->ib, 0, sizeof(p->ib));
	p->ib.type = ncclProfileQp;
	p->ib.qp.device = 0;
	p->ib.qp.wr_id = wr_id;
	p->ib.qp.opcode = opcode;
	p->ib.qp.qpNum = (int)qpn;
	p->ib.qp.length = len;
	memset(&d, 0, sizeof(d));
	d.netPlugin.id = NCCL_PROFILER_NET_TYPE_IB | NCCL_PROFILER_NET_IB_VER;
	d.netPlugin.data = &p->ib;
	return start(p, ncclProfileNetPlugin, step[s], &d);
}

/* WR j's completion: its event ends; at the step's last chunk the step's
 * wait state with the step's bytes, and the step ends. */
static void qp_done(struct rra_prof *p, void **wr, void **step,
		    uint64_t *step_bytes, uint64_t j, size_t bytes, int state)
{
	ncclProfilerEventStateArgs_t a;
	uint32_t s = (uint32_t)(j / p->K);

	stop(p, &wr[j]);
	step_bytes[s] += bytes;
	if (j % p->K == p->K - 1 && step[s]) {
		a.proxyStep.transSize = step_bytes[s];
		p->p->recordEventState(step[s], state, &a);
		stop(p, &step[s]);
	}
}

void prof_wr_post(struct rra_prof *p, uint64_t j, uint64_t wr_id,
		  uint32_t qpn, size_t len)
{
	if (!p || !p->total || j >= p->total)
		return;
	p->wr[j] = qp_event(p, p->step, p->op, (uint32_t)(j / p->K), wr_id,
			    qpn, IBV_WR_RDMA_WRITE_WITH_IMM, len);
	p->wr_len[j] = len;
}

/* the step's last chunk is through: NCCL's SendWait ends */
void prof_wr_done(struct rra_prof *p, uint64_t j)
{
	if (!p || !p->total || j >= p->total)
		return;
	qp_done(p, p->wr, p->step, p->step_bytes, j, p->wr_len[j],
		ncclProfilerProxyStepSendWait);
}

/* As ncclIbIrecv: device, wr_id and QPN; NCCL sets no opcode or length. */
void prof_recv_post(struct rra_prof *p, uint64_t j, uint64_t wr_id,
		    uint32_t qpn)
{
	if (!p || !p->total || j >= p->total)
		return;
	p->rwr[j] = qp_event(p, p->rstep, p->rop, (uint32_t)(j / p->K), wr_id,
			     qpn, 0, 0);
}

/* the step's last chunk is in: NCCL's RecvWait ends */
void prof_recv_done(struct rra_prof *p, uint64_t j, size_t bytes)
{
	if (!p || !p->total || j >= p->total)
		return;
	qp_done(p, p->rwr, p->rstep, p->rstep_bytes, j, bytes,
		ncclProfilerProxyStepRecvWait);
}

void prof_coll_end(struct rra_prof *p)
{
	if (!p)
		return;
	for (uint64_t j = 0; j < p->total; j++) {
		stop(p, &p->wr[j]);
		stop(p, &p->rwr[j]);
	}
	for (uint32_t s = 0; s < p->steps; s++) {
		stop(p, &p->step[s]);
		stop(p, &p->rstep[s]);
	}
	stop(p, &p->op);
	stop(p, &p->rop);
	stop(p, &p->coll);
	p->total = 0;
}
