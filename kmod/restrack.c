// SPDX-License-Identifier: GPL-2.0
/*
 * The ids of new CQs and PDs.  The core gives an object its restrack id
 * (res.id: what `rdma resource show` prints, and what the data path's
 * records carry) in rdma_restrack_add(), after the driver's create_cq or
 * alloc_pd has returned, so the wrappers see 0.  A successful create is
 * parked here instead, with its creator's identity and the driver's time
 * in dur_ns, and emitted once its id can be read:
 *  - by a work item, a jiffy after the park (and each jiffy while any is
 *    parked; each second once the oldest is a second old: an add that
 *    failed leaves the object without an id until it is destroyed);
 *  - before a QP's, SRQ's or MR's creation record, which names CQ and PD
 *    ids, so a reader always meets the CQ or PD first;
 *  - before its own destroy's record (the wrapped destroy takes it out);
 *  - when its device is unwrapped (with id 0 if it still has none).
 * Its record is stamped when it is emitted, like every record (in its
 * reservation: a CPU's relay stream stays in time order), a few ms at
 * most after the driver returned.
 *
 * This used to be a kretprobe on rdma_restrack_add().  Unregistering it
 * while CQs were being created jumped to address 0 at the probed
 * function's ftrace site on 6.1, twice (doc/DESIGN.md, "A return to
 * address 0"): now the module places no probe at all.
 *
 * Reading an id later needs the object alive.  A parked object is: every
 * core path frees a created CQ or PD only through the wrapped destroy,
 * which takes it out of the table under rdt_parked_lock first, and the
 * table is read under that lock.  A device is closed here while its ops
 * are still ours; once they are given back, destroys no longer pass us,
 * so nothing of it may stay parked.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/restrack.h>

#include "rdt.h"
#include "tp_fire.h"

static struct rdt_parked rdt_parked[RDT_PARKED];
static unsigned int rdt_nr_parked;
static DEFINE_SPINLOCK(rdt_parked_lock);
/* Devices whose creations may park: from wrap until close. */
static DEFINE_XARRAY(rdt_restrack_devs);
static bool rdt_restrack_stopping;

static void rdt_restrack_work_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(rdt_restrack_work, rdt_restrack_work_fn);

static u16 rdt_created_size(u16 type)
{
	return type == RDT_EV_CQ_CREATE ? sizeof(struct rdt_ev_cq) :
					  sizeof(struct rdt_ev_pd);
}

/*
 * A creation record, to the relay and to its tracepoint.  who: its
 * creator, when that is not the current task.
 */
static void rdt_created_emit(u16 type, u32 dev, void *ev,
			     const struct rdt_who *who)
{
	if (rdt_want(type)) {
		if (who)
			rdt_emit_as(ev, type, rdt_created_size(type), dev, who);
		else
			rdt_emit(ev, type, rdt_created_size(type), dev, 0, 0);
	}
	if (type == RDT_EV_CQ_CREATE)
		rdt_tp_fire(cq_create, dev, (struct rdt_ev_cq *)ev);
	else
		rdt_tp_fire(pd_alloc, dev, (struct rdt_ev_pd *)ev);
}

/* Emit slot i's creation with id and free the slot.  Under the lock. */
static void rdt_parked_emit(unsigned int i, u32 id)
{
	struct rdt_parked *p = &rdt_parked[i];

	if (p->type == RDT_EV_CQ_CREATE)
		p->ev.cq.cq_id = id;
	else
		p->ev.pd.pd_id = id;
	rdt_created_emit(p->type, p->dev, &p->ev, &p->who);
	p->obj = NULL;
	WRITE_ONCE(rdt_nr_parked, rdt_nr_parked - 1);
}

/*
 * The id restrack gave slot i's object; false while it has none.  Under
 * the lock (the object is alive).  restrack_add() sets valid after the
 * id with no barrier between them, so the id is confirmed by looking it
 * up in restrack, under the lock that stored it; a lookup that fails
 * (not added yet, a delete begun) leaves the creation parked.
 */
static bool rdt_parked_id(unsigned int i, u32 *id)
{
	struct rdt_parked *p = &rdt_parked[i];
	struct rdma_restrack_entry *res, *got;
	struct ib_device *ibdev;

	if (p->type == RDT_EV_CQ_CREATE) {
		struct ib_cq *cq = p->obj;

		res = &cq->res;
		ibdev = cq->device;
	} else {
		struct ib_pd *pd = p->obj;

		res = &pd->res;
		ibdev = pd->device;
	}
	if (!READ_ONCE(res->valid))
		return false;
	/* Tracked objects only get an id; an untracked one keeps 0. */
	if (res->no_track) {
		*id = 0;
		return true;
	}
	*id = READ_ONCE(res->id);
	got = rdma_restrack_get_byid(ibdev, res->type, *id);
	if (IS_ERR(got))
		return false;
	rdma_restrack_put(got);
	return got == res;
}

/*
 * Emit every parked creation whose id is given, under the lock; the
 * number left, and in *oldest the park time of the oldest of them.
 */
static unsigned int rdt_restrack_resolve_locked(unsigned long *oldest)
{
	unsigned int i, left = 0;
	u32 id;

	*oldest = jiffies;
	for (i = 0; i < RDT_PARKED && READ_ONCE(rdt_nr_parked); i++) {
		if (!rdt_parked[i].obj)
			continue;
		if (rdt_parked_id(i, &id)) {
			rdt_parked_emit(i, id);
			continue;
		}
		if (time_before(rdt_parked[i].since, *oldest))
			*oldest = rdt_parked[i].since;
		left++;
	}
	return left;
}

/*
 * Before a record that names CQ or PD ids (QP, SRQ, MR creations), in
 * task context: what is parked and has its id goes out first.  The
 * records are emitted under the lock, so a destroy's (which waits for
 * it) never comes before its creation's.
 */
void rdt_restrack_resolve(void)
{
	unsigned long flags, oldest;

	if (!READ_ONCE(rdt_nr_parked))
		return;
	spin_lock_irqsave(&rdt_parked_lock, flags);
	rdt_restrack_resolve_locked(&oldest);
	spin_unlock_irqrestore(&rdt_parked_lock, flags);
}
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_restrack_resolve);

static void rdt_restrack_work_fn(struct work_struct *work)
{
	unsigned long flags, oldest;
	unsigned int left;

	spin_lock_irqsave(&rdt_parked_lock, flags);
	left = rdt_restrack_resolve_locked(&oldest);
	spin_unlock_irqrestore(&rdt_parked_lock, flags);
	if (left && !READ_ONCE(rdt_restrack_stopping))
		schedule_delayed_work(&rdt_restrack_work,
				      time_after(jiffies, oldest + HZ) ? HZ : 1);
}

/* Under the lock: slot of obj (any object of dev if obj is NULL), or -1. */
static int rdt_parked_find(const void *obj, u32 dev)
{
	unsigned int i;

	for (i = 0; i < RDT_PARKED; i++) {
		if (!rdt_parked[i].obj || (obj && rdt_parked[i].obj != obj) ||
		    (!obj && rdt_parked[i].dev != dev))
			continue;
		return i;
	}
	return -1;
}

/*
 * Take obj's parked creation (any object of device dev if obj is NULL)
 * into *p without emitting it; false if none is parked.  For the tests.
 */
bool rdt_restrack_take(const void *obj, u32 dev, struct rdt_parked *p)
{
	unsigned long flags;
	int i;

	if (!READ_ONCE(rdt_nr_parked))
		return false;
	spin_lock_irqsave(&rdt_parked_lock, flags);
	i = rdt_parked_find(obj, dev);
	if (i >= 0) {
		*p = rdt_parked[i];
		rdt_parked[i].obj = NULL;
		WRITE_ONCE(rdt_nr_parked, rdt_nr_parked - 1);
	}
	spin_unlock_irqrestore(&rdt_parked_lock, flags);
	return i >= 0;
}
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_restrack_take);

/*
 * Park ev (its dur_ns set) for obj, a CQ or PD of an open device, by the
 * current task; false if it cannot be parked (emit it now, with id 0).
 */
bool rdt_restrack_park(void *obj, u16 type, u32 dev, const void *ev)
{
	unsigned long flags;
	bool parked = false;
	unsigned int i;

	spin_lock_irqsave(&rdt_parked_lock, flags);
	if (!xa_load(&rdt_restrack_devs, dev))
		goto out;
	for (i = 0; i < RDT_PARKED; i++) {
		struct rdt_parked *p = &rdt_parked[i];

		if (p->obj)
			continue;
		p->obj = obj;
		p->since = jiffies;
		p->dev = dev;
		p->type = type;
		rdt_who_current(&p->who);
		memcpy(&p->ev, ev, rdt_created_size(type));
		WRITE_ONCE(rdt_nr_parked, rdt_nr_parked + 1);
		parked = true;
		break;
	}
out:
	spin_unlock_irqrestore(&rdt_parked_lock, flags);
	if (parked)
		schedule_delayed_work(&rdt_restrack_work, 1);
	return parked;
}
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_restrack_park);

static void rdt_restrack_created(void *obj, u16 type, u32 dev, u64 entry,
				 void *ev, u64 *dur)
{
	u64 now = ktime_get_ns();

	/* The driver's time; entry may be another CPU's clock, a bit ahead. */
	*dur = now > entry ? now - entry : 0;
	if (!rdt_restrack_park(obj, type, dev, ev))
		rdt_created_emit(type, dev, ev, NULL);
}

/* A successful create_cq or alloc_pd: emitted once its id is given. */
void rdt_restrack_cq_created(struct ib_cq *cq, u32 dev, u64 entry,
			     struct rdt_ev_cq *ev)
{
	rdt_restrack_created(cq, RDT_EV_CQ_CREATE, dev, entry, ev, &ev->dur_ns);
}

void rdt_restrack_pd_allocated(struct ib_pd *pd, u32 dev, u64 entry,
			       struct rdt_ev_pd *ev)
{
	rdt_restrack_created(pd, RDT_EV_PD_ALLOC, dev, entry, ev, &ev->dur_ns);
}

/*
 * Before a destroy's driver call: obj's creation if it is still parked,
 * with id (the destroy wrapper read it; restrack keeps it until the
 * object is freed).
 */
void rdt_restrack_flush(const void *obj, u32 id)
{
	unsigned long flags;
	int i;

	if (!READ_ONCE(rdt_nr_parked))
		return;
	spin_lock_irqsave(&rdt_parked_lock, flags);
	i = rdt_parked_find(obj, 0);
	if (i >= 0)
		rdt_parked_emit(i, id);
	spin_unlock_irqrestore(&rdt_parked_lock, flags);
}

/* A device wrapped: its creations may park from now on. */
void rdt_restrack_open(u32 dev)
{
	int ret = xa_err(xa_store(&rdt_restrack_devs, dev, xa_mk_value(1),
				  GFP_KERNEL));

	if (ret)
		pr_warn("device %u: CQ_CREATE and PD_ALLOC will carry id 0 (%d)\n",
			dev, ret);
}
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_restrack_open);

/*
 * A device about to be unwrapped, its ops still ours (so its parked
 * objects are alive): nothing of it parks any more, and what is parked
 * goes out now, with its id if restrack gave one, else 0.
 */
void rdt_restrack_close(u32 dev)
{
	unsigned long flags;
	u32 id;
	int i;

	xa_erase(&rdt_restrack_devs, dev);
	spin_lock_irqsave(&rdt_parked_lock, flags);
	while ((i = rdt_parked_find(NULL, dev)) >= 0)
		rdt_parked_emit(i, rdt_parked_id(i, &id) ? id : 0);
	spin_unlock_irqrestore(&rdt_parked_lock, flags);
}
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_restrack_close);

/* After ib_unregister_client(): every device is closed, no wrapper runs. */
void rdt_restrack_exit(void)
{
	unsigned long flags;
	int i;

	WRITE_ONCE(rdt_restrack_stopping, true);
	cancel_delayed_work_sync(&rdt_restrack_work);
	/* None is expected; their objects may be gone: id 0, no lookup. */
	spin_lock_irqsave(&rdt_parked_lock, flags);
	for (i = 0; i < RDT_PARKED; i++)
		if (rdt_parked[i].obj)
			rdt_parked_emit(i, 0);
	spin_unlock_irqrestore(&rdt_parked_lock, flags);
	xa_destroy(&rdt_restrack_devs);
}
