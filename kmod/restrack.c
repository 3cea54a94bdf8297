// SPDX-License-Identifier: GPL-2.0
/*
 * The ids of new CQs and PDs.  The core gives an object its restrack id
 * (res.id: what `rdma resource show` prints, and what the data path's
 * records carry) in rdma_restrack_add(), after the driver's create_cq or
 * alloc_pd has returned, so the wrappers see 0.  A successful create is
 * parked here instead of emitted, and a kretprobe on rdma_restrack_add()
 * emits it once the id is given, with the wrapper's fields.  It is stamped
 * then, like every record (in its reservation: a CPU's relay stream stays
 * in time order), its dur_ns counted from the wrapper's entry.
 * Every core path (uverbs, ib_alloc_cq, ib_alloc_pd, ib_create_cq) calls
 * rdma_restrack_add() after a successful create, or destroys the object
 * through the wrapped destroy, which emits what is still parked: no
 * creation record is lost if the probe missed one.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kprobes.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>
#include <rdma/restrack.h>

#include "rdt.h"
#include "tp_fire.h"

static struct rdt_parked rdt_parked[RDT_PARKED];
static unsigned int rdt_nr_parked;
static DEFINE_SPINLOCK(rdt_parked_lock);
static bool rdt_restrack_on;

/* A creation record, to the relay and to its tracepoint. */
static void rdt_created_emit(u16 type, u32 dev, u64 entry, void *ev)
{
	if (type == RDT_EV_CQ_CREATE) {
		if (rdt_want(type))
			rdt_emit_verb((struct rdt_ev_cq *)ev, type, dev, entry);
		rdt_tp_fire(cq_create, dev, ev);
	} else {
		if (rdt_want(type))
			rdt_emit_verb((struct rdt_ev_pd *)ev, type, dev, entry);
		rdt_tp_fire(pd_alloc, dev, ev);
	}
}

static void rdt_parked_emit(struct rdt_parked *p, u32 id)
{
	if (p->type == RDT_EV_CQ_CREATE)
		p->ev.cq.cq_id = id;
	else
		p->ev.pd.pd_id = id;
	rdt_created_emit(p->type, p->dev, p->start, &p->ev);
}

/*
 * Take obj's parked creation (any object of device dev if obj is NULL)
 * into *p; false if none is parked.
 */
bool rdt_restrack_take(const void *obj, u32 dev, struct rdt_parked *p)
{
	unsigned long flags;
	bool found = false;
	unsigned int i;

	if (!READ_ONCE(rdt_nr_parked))
		return false;
	spin_lock_irqsave(&rdt_parked_lock, flags);
	for (i = 0; i < RDT_PARKED; i++) {
		if (!rdt_parked[i].obj || (obj && rdt_parked[i].obj != obj) ||
		    (!obj && rdt_parked[i].dev != dev))
			continue;
		*p = rdt_parked[i];
		rdt_parked[i].obj = NULL;
		WRITE_ONCE(rdt_nr_parked, rdt_nr_parked - 1);
		found = true;
		break;
	}
	spin_unlock_irqrestore(&rdt_parked_lock, flags);
	return found;
}
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_restrack_take);

bool rdt_restrack_park(const void *obj, u16 type, u32 dev, u64 start,
		       const void *ev, size_t size)
{
	unsigned long flags;
	bool parked = false;
	unsigned int i;

	if (!READ_ONCE(rdt_restrack_on))
		return false;
	spin_lock_irqsave(&rdt_parked_lock, flags);
	for (i = 0; i < RDT_PARKED; i++) {
		struct rdt_parked *p = &rdt_parked[i];

		if (p->obj)
			continue;
		p->obj = obj;
		p->start = start;
		p->dev = dev;
		p->type = type;
		memcpy(&p->ev, ev, size);
		WRITE_ONCE(rdt_nr_parked, rdt_nr_parked + 1);
		parked = true;
		break;
	}
	spin_unlock_irqrestore(&rdt_parked_lock, flags);
	return parked;
}
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_restrack_park);

/*
 * A successful create_cq or alloc_pd: emitted once restrack gives the
 * object its id, or now (at ts, id 0) if it cannot be parked.
 */
void rdt_restrack_cq_created(struct ib_cq *cq, u32 dev, u64 entry,
			     struct rdt_ev_cq *ev)
{
	if (!rdt_restrack_park(cq, RDT_EV_CQ_CREATE, dev, entry, ev,
			       sizeof(*ev)))
		rdt_created_emit(RDT_EV_CQ_CREATE, dev, entry, ev);
}

void rdt_restrack_pd_allocated(struct ib_pd *pd, u32 dev, u64 entry,
			       struct rdt_ev_pd *ev)
{
	if (!rdt_restrack_park(pd, RDT_EV_PD_ALLOC, dev, entry, ev,
			       sizeof(*ev)))
		rdt_created_emit(RDT_EV_PD_ALLOC, dev, entry, ev);
}

/*
 * Before a destroy: the creation of obj if it is still parked (the probe
 * missed it, or the core destroyed it before adding it), with id.
 */
void rdt_restrack_flush(const void *obj, u32 id)
{
	struct rdt_parked p;

	if (rdt_restrack_take(obj, 0, &p))
		rdt_parked_emit(&p, id);
}

/*
 * A device unwrapped: what it still has parked is emitted now, with id 0
 * (the objects may be gone; their pointers must not match a new one).
 */
void rdt_restrack_forget(u32 dev)
{
	struct rdt_parked p;

	while (rdt_restrack_take(NULL, dev, &p))
		rdt_parked_emit(&p, 0);
}

struct rdt_restrack_call {
	struct rdma_restrack_entry *res;
};

static int rdt_restrack_enter(struct kretprobe_instance *ri,
			      struct pt_regs *regs)
{
	struct rdt_restrack_call *c = (void *)ri->data;

	/* Non-zero: no return handler (QPs, MRs, ..., or nothing parked). */
	if (!READ_ONCE(rdt_nr_parked))
		return 1;
	c->res = (void *)regs_get_kernel_argument(regs, 0);
	return c->res->type != RDMA_RESTRACK_CQ &&
	       c->res->type != RDMA_RESTRACK_PD;
}

static int rdt_restrack_return(struct kretprobe_instance *ri,
			       struct pt_regs *regs)
{
	struct rdma_restrack_entry *res =
		((struct rdt_restrack_call *)ri->data)->res;
	const void *obj;
	struct rdt_parked p;

	if (res->type == RDMA_RESTRACK_CQ)
		obj = container_of(res, struct ib_cq, res);
	else
		obj = container_of(res, struct ib_pd, res);
	/* Not valid: restrack could not store it, and the id stays 0. */
	if (rdt_restrack_take(obj, 0, &p))
		rdt_parked_emit(&p, res->valid ? res->id : 0);
	return 0;
}

static struct kretprobe rdt_restrack_probe = {
	.kp.symbol_name	= "rdma_restrack_add",
	.entry_handler	= rdt_restrack_enter,
	.handler	= rdt_restrack_return,
	.data_size	= sizeof(struct rdt_restrack_call),
	/* Held only across a CQ's or PD's add (it may sleep): plenty. */
	.maxactive	= 64,
};

/*
 * Before ib_register_client(): no wrapper parks anything until the probe
 * is in.  Failure is not fatal: creations are then emitted with id 0.
 */
void rdt_restrack_init(void)
{
	int ret = register_kretprobe(&rdt_restrack_probe);

	if (ret) {
		pr_warn("no kretprobe on rdma_restrack_add (%d): CQ_CREATE and PD_ALLOC carry id 0\n",
			ret);
		return;
	}
	WRITE_ONCE(rdt_restrack_on, true);
}

/* After ib_unregister_client(): no wrapper runs any more. */
void rdt_restrack_exit(void)
{
	unsigned int i;

	if (!rdt_restrack_on)
		return;
	unregister_kretprobe(&rdt_restrack_probe);
	if (rdt_restrack_probe.nmissed)
		pr_info("restrack probe missed %d adds (their creations were emitted at destroy)\n",
			rdt_restrack_probe.nmissed);
	WRITE_ONCE(rdt_restrack_on, false);
	for (i = 0; i < RDT_PARKED; i++)
		rdt_restrack_forget(rdt_parked[i].dev);
}
