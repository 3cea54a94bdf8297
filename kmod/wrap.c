// SPDX-License-Identifier: GPL-2.0
/*
 * rdmatrace: device->ops wrapping.
 *
 * Safe wrap/unwrap (see DESIGN.md):
 *  - install: publish the context with the saved originals,
 *    synchronize_rcu(), then WRITE_ONCE() the wrappers, only over non-NULL
 *    originals;
 *  - every wrapper never sleeps on its own; the control path ones run
 *    their original inside an SRCU read section (it may sleep), the data
 *    path ones (posts, polls, notifies, whose originals never sleep) need
 *    none;
 *  - the data path ones are in device->ops only while something traces
 *    them (the relay trace, or a probe on one of their tracepoints): off, a
 *    verb goes straight to the driver.  They come and go by the same
 *    cmpxchg() as remove, on contexts already published;
 *  - remove: cmpxchg() each op back to its original and retire the
 *    context; contexts stay findable until module exit, so a caller that
 *    loaded a wrapper's address before the unwrap still finds its original;
 *  - module exit (main.c): synchronize_rcu_tasks(), synchronize_rcu(),
 *    on PREEMPT_RT the data path's count in flight (rdt_dp_wait()),
 *    synchronize_srcu(), synchronize_rcu_tasks(), then free the contexts.
 *
 * Every wrapper is a thin adapter: capture what the call will free, call
 * the original, then write its records: the data path (posts, polls,
 * notifies) encodes them in place in the relay buffer (rdt_reserve()),
 * the control path builds one on its stack for rdt_emit().  The same
 * bodies feed the tracepoints (rdmatrace_trace.h), which fire whether or
 * not the relay trace is on; each costs a load while disabled, never a
 * patched site in this module's text (tp_fire.h).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/error-injection.h>
#include <linux/hashtable.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "rdt.h"
#include "slot.h"
#include "encode.h"
#include "tp_fire.h"

struct rdt_dev {
	struct hlist_node	hnode;		/* rdt_dev_hash, until exit */
	struct list_head	lnode;		/* rdt_dev_list, until exit */
	struct ib_device	*ibdev;		/* key; not used once retired */
	u32			index;
	bool			ready;		/* its ops installed once */
	bool			retired;
	unsigned long		mask;		/* bit i: rdt_ops[i] is ours */
	unsigned long		live;		/* of those, in device->ops now */
	unsigned long		stacked;	/* of those, wrapped over by others */
	unsigned int		nr_wrapped;	/* bits in mask */
	char			name[RDT_NAME_LEN];
	rdt_ops_t		orig;		/* saved originals */
	struct xarray		qp_state;	/* rdt_qp_key() -> last state */
};

static DEFINE_HASHTABLE(rdt_dev_hash, 6);
static LIST_HEAD(rdt_dev_list);
static DEFINE_MUTEX(rdt_dev_mutex);

/*
 * The data path: rdt_ops[0..4], installed while rdt_hot_users > 0 (the
 * relay trace on counts one, each tracepoint of theirs with a probe one).
 * The control path stays wrapped from add to remove: it is rare, and a
 * QP's creation must be seen whenever tracing starts later.
 */
#define RDT_HOT_OPS	GENMASK(4, 0)
static unsigned int rdt_hot_users;	/* under rdt_dev_mutex */

/*
 * The device wrapped last, while it is wrapped: on a host with one RDMA
 * device a wrapper finds its context with one compare.  Set as soon as the
 * context is published, cleared when it retires, so a reused ib_device
 * address never finds a retired context here.  Never NULL: with no device
 * it is rdt_dev_none, whose ibdev matches none.
 */
static struct rdt_dev rdt_dev_none;
static struct rdt_dev *rdt_dev_last = &rdt_dev_none;

/* Newest first, so a reused ib_device address finds its live context. */
static noinline struct rdt_dev *rdt_dev_find_slow(struct ib_device *ibdev)
{
	struct rdt_dev *rd, *found = NULL;

	rcu_read_lock();
	hash_for_each_possible_rcu(rdt_dev_hash, rd, hnode,
				   (unsigned long)ibdev)
		if (rd->ibdev == ibdev) {
			found = rd;
			break;
		}
	rcu_read_unlock();
	WARN_ONCE(!found, "rdmatrace: wrapper called for unknown device %s\n",
		  dev_name(&ibdev->dev));
	return found;
}

/*
 * Contexts are freed only at module exit (main.c), after every wrapper has
 * returned: the pointer stays valid after the lookup's RCU section.
 */
static __always_inline struct rdt_dev *rdt_dev_find(struct ib_device *ibdev)
{
	struct rdt_dev *rd = READ_ONCE(rdt_dev_last);

	return likely(rd->ibdev == ibdev) ? rd : rdt_dev_find_slow(ibdev);
}

/*
 * The same for the lean wrappers, into *rdp; false for no device.  Only
 * the slow lookup's result is tested: the last device's, which is never
 * NULL, was tested again after its load (the kernel builds with
 * -fno-delete-null-pointer-checks), two instructions a verb.
 */
static __always_inline bool rdt_dev_found(struct ib_device *ibdev,
					  struct rdt_dev **rdp)
{
	struct rdt_dev *rd = READ_ONCE(rdt_dev_last);

	if (likely(rd->ibdev == ibdev)) {
		*rdp = rd;
		return true;
	}
	*rdp = rdt_dev_find_slow(ibdev);
	return *rdp;
}

static bool rdt_uobj(const void *uobject)
{
	return uobject;
}

/* ---- data path adapters --------------------------------------------- */

/*
 * The data path encodes each record straight into its relay slot.  These
 * run only while tracing (the wrappers test rdt_enabled first),
 * out of line, so the wrappers' own frames stay small when it is off.
 *
 * A post's WRs are read before the driver runs, never after: once the
 * driver has the WRs a completion may run (inline on rxe loopback, or in
 * an interrupt on another CPU) and its ULP free them (iSER's tx_desc
 * holds its WR).  What the call returned is known only afterwards, so a
 * failed post is told by one RDT_EV_POST_FAIL after its WRs' records; the
 * WRs from *bad on were not posted, the caller still owns them and they
 * alone may be read then.
 */
/* One record per WR, in one slot section; returns the number of WRs. */
static noinline u32 rdt_rec_post_send(struct rdt_dev *rd, struct ib_qp *qp,
				      const struct ib_send_wr *wr, bool user)
{
	struct rdt_ev_post_send *ev;
	struct rdt_slot s __uninitialized;
	bool open = false;
	u32 n = 0;

	for (; wr; wr = wr->next, n++) {
		ev = rdt_reserve_more(&s, open, RDT_EV_POST_SEND, sizeof(*ev),
				      rd->index);
		open = ev;
		if (!ev)
			continue;	/* every refused WR is a counted drop */
		__rdt_enc_send_wr(ev, wr, qp->qp_num, n, user);
	}
	if (open)
		rdt_commit(&s);
	return n;
}

static noinline u32 rdt_rec_post_recv(struct rdt_dev *rd, u32 qpn,
				      u32 srq_id, bool srq,
				      const struct ib_recv_wr *wr, bool user)
{
	struct rdt_ev_post_recv *ev;
	struct rdt_slot s __uninitialized;
	bool open = false;
	u32 n = 0;

	for (; wr; wr = wr->next, n++) {
		ev = rdt_reserve_more(&s, open, RDT_EV_POST_RECV, sizeof(*ev),
				      rd->index);
		open = ev;
		if (!ev)
			continue;
		__rdt_enc_recv_wr(ev, wr, qpn, srq_id, srq, n, user);
	}
	if (open)
		rdt_commit(&s);
	return n;
}

/*
 * A post of one WR in the common case (slot.h's rdt_fast_open()); false
 * when nothing was written and rdt_rec_post_*() must.
 */
static __always_inline bool rdt_fast_post_send(struct rdt_dev *rd,
					       struct ib_qp *qp,
					       const struct ib_send_wr *wr,
					       bool user, bool raw)
{
	struct rdt_ev_post_send *ev;
	struct rdt_fast f __uninitialized;

	if (!wr || wr->next)
		return false;
	if (!rdt_fast_one(&f, RDT_EV_POST_SEND, sizeof(*ev), rd->index, raw))
		return false;
	ev = f.at;
	__rdt_enc_send_wr(ev, wr, qp->qp_num, 0, user);
	rdt_fast_commit(&f);
	return true;
}

static __always_inline bool rdt_fast_post_recv(struct rdt_dev *rd, u32 qpn,
					       u32 srq_id, bool srq,
					       const struct ib_recv_wr *wr,
					       bool user, bool raw)
{
	struct rdt_ev_post_recv *ev;
	struct rdt_fast f __uninitialized;

	if (!wr || wr->next)
		return false;
	if (!rdt_fast_one(&f, RDT_EV_POST_RECV, sizeof(*ev), rd->index, raw))
		return false;
	ev = f.at;
	__rdt_enc_recv_wr(ev, wr, qpn, srq_id, srq, 0, user);
	rdt_fast_commit(&f);
	return true;
}

static noinline void rdt_tp_post_send(struct rdt_dev *rd, struct ib_qp *qp,
				      const struct ib_send_wr *wr, bool user)
{
	u32 n;

	for (n = 0; wr && rdt_tp_on(post_send); wr = wr->next, n++) {
		struct rdt_ev_post_send ev = {
			.qpn = qp->qp_num,
			.index = n,
		};

		rdt_enc_send_wr(&ev, wr, user);
		rdt_tp_fire(post_send, rd->index, &ev);
	}
}

static noinline void rdt_tp_post_recv(struct rdt_dev *rd, u32 qpn, u32 srq_id,
				      bool srq, const struct ib_recv_wr *wr,
				      bool user)
{
	u32 n;

	for (n = 0; wr && rdt_tp_on(post_recv); wr = wr->next, n++) {
		struct rdt_ev_post_recv ev = {
			.qpn = qpn,
			.srq_id = srq_id,
			.srq = srq,
			.index = n,
		};

		rdt_enc_recv_wr(&ev, wr, user);
		rdt_tp_fire(post_recv, rd->index, &ev);
	}
}

/*
 * A post of n WRs failed; the last tail of them, from *bad_wr on, were not
 * posted (bad_known: the driver set *bad_wr).
 */
static noinline void rdt_rec_post_fail(struct rdt_dev *rd, u16 type, u32 qpn,
				       u32 srq_id, bool srq, u32 n,
				       u32 tail, bool bad_known, int ret)
{
	struct rdt_ev_post_fail *ev;
	struct rdt_slot s __uninitialized;

	if (!rdt_want(RDT_EV_POST_FAIL))
		return;
	ev = rdt_reserve(&s, RDT_EV_POST_FAIL, sizeof(*ev), rd->index);
	if (!ev)
		return;
	ev->qpn = qpn;
	ev->srq_id = srq_id;
	ev->ret = ret;
	ev->post_type = type;
	ev->nr_wr = min_t(u32, n, U16_MAX);
	ev->bad_index = bad_known && tail <= n && n - tail < U16_MAX ?
			n - tail : RDT_BAD_INDEX_UNKNOWN;
	ev->srq = srq;
	ev->pad0 = 0;
	ev->pad1 = 0;
	rdt_commit(&s);
}

/*
 * The driver's bad_wr is ours, never the caller's.  ib_post_send(),
 * ib_post_recv() and uverbs hand the driver an uninitialised pointer, and a
 * driver need not set it on every failure (rxe's destroyed-QP check returns
 * -EINVAL without it): walking the caller's after a failure could follow
 * stack garbage.  Ours starts at a sentinel no driver can write; only a
 * value the driver did write is walked and copied back, so the caller sees
 * exactly what it would untraced, and its own pointer is left alone when the
 * driver left ours.
 */
static const struct ib_send_wr rdt_send_unset;
static const struct ib_recv_wr rdt_recv_unset;

/* The first WR not posted, as the driver set it; NULL if it set none. */
static const struct ib_send_wr *rdt_bad_send(const struct ib_send_wr *b)
{
	return b == &rdt_send_unset ? NULL : b;
}

static const struct ib_recv_wr *rdt_bad_recv(const struct ib_recv_wr *b)
{
	return b == &rdt_recv_unset ? NULL : b;
}

/*
 * WRs from the first one not posted to the end: the caller's, unposted.
 * With max U32_MAX - 1, a whole list, before it is posted.
 */
static u32 rdt_send_tail(const struct ib_send_wr *bad, u32 max)
{
	u32 n = 0;

	for (; bad && n <= max; bad = bad->next)
		n++;
	return n;
}

static u32 rdt_recv_tail(const struct ib_recv_wr *bad, u32 max)
{
	u32 n = 0;

	for (; bad && n <= max; bad = bad->next)
		n++;
	return n;
}

/*
 * After the driver's post of @n WRs: the first one not posted back to the
 * caller where the driver set it (see rdt_send_unset), and a failure's
 * record.  The lean and the full wrappers end the same way.
 */
static __always_inline void rdt_send_done(struct rdt_dev *rd, u32 qpn,
					  const struct ib_send_wr *b,
					  const struct ib_send_wr **bad,
					  u32 n, int ret, bool relay)
{
	if (b != &rdt_send_unset && bad)
		*bad = b;
	if (relay && unlikely(ret))
		rdt_rec_post_fail(rd, RDT_EV_POST_SEND, qpn, 0, false, n,
				  rdt_send_tail(rdt_bad_send(b), n),
				  rdt_bad_send(b), ret);
}

static __always_inline void rdt_recv_done(struct rdt_dev *rd, u32 qpn,
					  u32 srq_id, bool srq,
					  const struct ib_recv_wr *b,
					  const struct ib_recv_wr **bad,
					  u32 n, int ret, bool relay)
{
	if (b != &rdt_recv_unset && bad)
		*bad = b;
	if (relay && unlikely(ret))
		rdt_rec_post_fail(rd, RDT_EV_POST_RECV, qpn, srq_id, srq, n,
				  rdt_recv_tail(rdt_bad_recv(b), n),
				  rdt_bad_recv(b), ret);
}

static void rdt_rec_post_send_db(struct rdt_dev *rd, struct ib_qp *qp,
				 int ret, u64 start)
{
	struct rdt_ev_post_send_db *ev;
	struct rdt_slot s __uninitialized;

	if (!rdt_want(RDT_EV_POST_SEND_DB))
		return;
	ev = rdt_reserve(&s, RDT_EV_POST_SEND_DB, sizeof(*ev), rd->index);
	if (!ev)
		return;
	ev->qpn = qp->qp_num;
	ev->ret = ret;
	ev->dur_ns = rdt_slot_dur(&s, start);
	rdt_commit(&s);
}

/*
 * A post_send while the relay trace or a post tracepoint is on: every WR
 * recorded, then the driver, then the result.  A NULL list (a uverbs
 * doorbell) has nothing to read: its one record carries ret.  @fast:
 * the common case's record may be tried (rdt_fast_post_send()); false
 * where the lean wrapper just found it cannot.
 */
static noinline int rdt_traced_post_send(struct ib_qp *qp,
					 const struct ib_send_wr *wr,
					 const struct ib_send_wr **bad,
					 bool fast)
{
	const struct ib_send_wr *b = &rdt_send_unset;
	struct rdt_dev *rd = rdt_dev_find(qp->device);
	bool relay = READ_ONCE(rdt_enabled);
	bool user = rdt_uobj(qp->uobject);
	/* A doorbell's record is written after the driver: its entry. */
	u64 entry = relay && !wr ? ktime_get_ns() : 0;
	u32 n;
	int ret;

	if (unlikely(!rd))
		return -ENODEV;
	if (relay && rdt_want(RDT_EV_POST_SEND))
		n = fast && !rdt_filtered() &&
		    rdt_fast_post_send(rd, qp, wr, user,
				       READ_ONCE(rdt_clk_tsc)) ?
		    1 : rdt_rec_post_send(rd, qp, wr, user);
	else
		n = rdt_send_tail(wr, U32_MAX - 1);
	if (rdt_tp_on(post_send))
		rdt_tp_post_send(rd, qp, wr, user);
	ret = rd->orig.post_send(qp, wr, &b);
	rdt_tp_fire(post_send_ret, rd->index, qp->qp_num, 0, n, ret);
	rdt_send_done(rd, qp->qp_num, b, bad, n, ret, relay && wr);
	if (relay && !wr)
		rdt_rec_post_send_db(rd, qp, ret, entry);
	return ret;
}

/* The same for post_recv (srq NULL) and post_srq_recv. */
static noinline int rdt_traced_post_recv(struct ib_qp *qp, struct ib_srq *srq,
					 const struct ib_recv_wr *wr,
					 const struct ib_recv_wr **bad,
					 bool fast)
{
	const struct ib_recv_wr *b = &rdt_recv_unset;
	struct rdt_dev *rd = rdt_dev_find(srq ? srq->device : qp->device);
	bool user = srq ? rdt_uobj(srq->uobject) : rdt_uobj(qp->uobject);
	bool relay = READ_ONCE(rdt_enabled);
	u32 srq_id = srq ? srq->res.id : 0;
	u32 qpn = srq ? 0 : qp->qp_num;
	u32 n;
	int ret;

	if (unlikely(!rd))
		return -ENODEV;
	if (relay && rdt_want(RDT_EV_POST_RECV))
		n = fast && !rdt_filtered() &&
		    rdt_fast_post_recv(rd, qpn, srq_id, srq, wr, user,
				       READ_ONCE(rdt_clk_tsc)) ?
		    1 : rdt_rec_post_recv(rd, qpn, srq_id, srq, wr, user);
	else
		n = rdt_recv_tail(wr, U32_MAX - 1);
	if (rdt_tp_on(post_recv))
		rdt_tp_post_recv(rd, qpn, srq_id, srq, wr, user);
	ret = srq ? rd->orig.post_srq_recv(srq, wr, &b) :
		    rd->orig.post_recv(qp, wr, &b);
	rdt_tp_fire(post_recv_ret, rd->index, qpn, srq_id, n, ret);
	rdt_recv_done(rd, qpn, srq_id, srq, b, bad, n, ret, relay);
	return ret;
}

/*
 * The lean wrappers: what a traced post of one WR or a poll costs when
 * only the relay trace watches (rdt_lean, rdt.h) and its records fit the
 * current sub-buffer (slot.h's rdt_fast_open()).  Kept apart from the full
 * wrappers so that their frames hold a few registers: the full ones,
 * with the tracepoints, doorbells and WR lists, pushed six registers and
 * spilled more (bench/NOTES.md).  Anything else is the full wrapper's, by
 * a tail call, before anything was recorded.
 *
 * rdt_lean_bad_wr: the driver's sentinel (rdt_send_unset) is written into
 * the caller's own bad_wr for the call, and the caller's value put back
 * when the driver did not replace it: what the caller sees is what the
 * driver wrote, as with a slot of ours, and its pointer is left alone
 * otherwise.  A slot of ours would be a local whose address the driver
 * gets, which costs the frame a stack protector canary and a store
 * (bench/NOTES.md).  ib_post_send(), ib_post_recv() and uverbs always pass
 * a bad_wr; a direct ops call without one takes the full wrapper.
 *
 * notrace, with the ops' entries (RDT_DP_ENTRY): ftrace's call at each
 * entry was an instruction a verb on each of them, and the driver's
 * functions under them stay traceable.
 */
static __always_inline int __rdt_lean_post_send(struct ib_qp *qp,
						const struct ib_send_wr *wr,
						const struct ib_send_wr **bad,
						bool raw)
{
	const struct ib_send_wr *was, *b;
	struct rdt_dev *rd;
	int ret;

	if (unlikely(!wr || wr->next || !bad))
		return rdt_traced_post_send(qp, wr, bad, true);
	if (unlikely(!rdt_dev_found(qp->device, &rd)))
		return -ENODEV;
	if (!rdt_fast_post_send(rd, qp, wr, rdt_uobj(qp->uobject), raw))
		return rdt_traced_post_send(qp, wr, bad, false);
	/* The sentinel in the caller's own bad_wr: rdt_lean_bad_wr. */
	was = *bad;
	*bad = &rdt_send_unset;
	ret = rd->orig.post_send(qp, wr, bad);
	b = *bad;
	if (b == &rdt_send_unset)
		*bad = was;
	rdt_send_done(rd, qp->qp_num, b, NULL, 1, ret, true);
	return ret;
}

static __always_inline int __rdt_lean_post_recv(struct ib_qp *qp,
						const struct ib_recv_wr *wr,
						const struct ib_recv_wr **bad,
						bool raw)
{
	const struct ib_recv_wr *was, *b;
	struct rdt_dev *rd;
	int ret;

	if (unlikely(!wr || wr->next || !bad))
		return rdt_traced_post_recv(qp, NULL, wr, bad, true);
	if (unlikely(!rdt_dev_found(qp->device, &rd)))
		return -ENODEV;
	if (!rdt_fast_post_recv(rd, qp->qp_num, 0, false, wr,
				rdt_uobj(qp->uobject), raw))
		return rdt_traced_post_recv(qp, NULL, wr, bad, false);
	/* The sentinel in the caller's own bad_wr: rdt_lean_bad_wr. */
	was = *bad;
	*bad = &rdt_recv_unset;
	ret = rd->orig.post_recv(qp, wr, bad);
	b = *bad;
	if (b == &rdt_recv_unset)
		*bad = was;
	rdt_recv_done(rd, qp->qp_num, 0, false, b, NULL, 1, ret, true);
	return ret;
}

/*
 * Each lean wrapper is built once for raw stamps (@raw true: rdt_lean_@op)
 * and once for ktime_get_ns()'s (rdt_lean_@op_kt), beside the ops' entries
 * below.
 */
#define RDT_LEAN(op, name, raw, params, ...)				\
static noinline notrace int name params					\
{									\
	return __rdt_lean_##op(__VA_ARGS__, raw);			\
}

/*
 * A poll's completions, then its summary.  A poll that returned completions
 * has no summary record: its last completion carries num_entries (ABI 1.8),
 * one reservation less on the path that runs per completion batch.
 */
static noinline void rdt_trace_poll_cq(struct rdt_dev *rd, struct ib_cq *cq,
				       int n, const struct ib_wc *wc, int ret)
{
	bool sum_want = rdt_want(RDT_EV_POLL_CQ);
	struct rdt_ev_poll_cq *sum;
	u32 cq_id = cq->res.id;
	struct rdt_slot s __uninitialized;
	bool open = false;
	int i;

	if (ret > 0 && rdt_want(RDT_EV_POLL_CQ_WC)) {
		u16 req = sum_want ? clamp(n, 1, U16_MAX) : 0;
		bool user = rdt_uobj(cq->uobject);

		for (i = 0; i < ret; i++) {
			struct rdt_ev_poll_cq_wc *ev;

			ev = rdt_reserve_more(&s, open, RDT_EV_POLL_CQ_WC,
					      sizeof(*ev), rd->index);
			open = ev;
			if (!ev)
				continue;
			__rdt_enc_wc(ev, &wc[i], user);
			ev->cq_id = cq_id;
			rdt_wc_index(ev, i);
			if (i == ret - 1)
				ev->poll_requested = req;
		}
		sum_want = false;
	}
	if (sum_want) {
		sum = rdt_reserve_more(&s, open, RDT_EV_POLL_CQ, sizeof(*sum),
				       rd->index);
		open = sum;
		if (sum) {
			sum->cq_id = cq_id;
			sum->requested = n;
			sum->ret = ret;
			sum->pad = 0;
		}
	}
	if (open)
		rdt_commit(&s);
}

/* A poll's records that are wanted, as rdt_lean's bits (emit.c). */
static __always_inline u32 rdt_poll_want(void)
{
	return (rdt_want(RDT_EV_POLL_CQ_WC) ? RDT_LEAN_WC : 0) |
	       (rdt_want(RDT_EV_POLL_CQ) ? RDT_LEAN_POLL_SUM : 0);
}

/*
 * The same in the common case (slot.h's rdt_fast_open()): every record of
 * the poll in the current sub-buffer, those of @want (rdt_poll_want()).
 * False when nothing was written and
 * rdt_trace_poll_cq() must.
 */
static __always_inline bool rdt_fast_poll_cq(struct rdt_dev *rd,
					     struct ib_cq *cq, int n,
					     const struct ib_wc *wc, int ret,
					     u32 want, bool raw)
{
	bool sum_want = want & RDT_LEAN_POLL_SUM;
	struct rdt_ev_poll_cq_wc *ev;
	struct rdt_fast f __uninitialized;
	struct rdt_ev_poll_cq *sum;
	int i;

	if (ret > 0 && (want & RDT_LEAN_WC)) {
		/* n >= ret > 0 here, unless the driver broke the verb's contract */
		u16 req = sum_want ? min_t(u32, n, U16_MAX) : 0;
		bool user = rdt_uobj(cq->uobject);
		u32 cq_id = cq->res.id, dev = rd->index;

		/*
		 * dev in a local: the stores into the slot may alias rd, so
		 * rd->index was loaded again for each completion.  The last
		 * one's poll_requested is set after the loop, not tested for
		 * in it (~4 instructions a completion).
		 */
		if (!rdt_fast_open(&f, (size_t)ret * sizeof(*ev), raw))
			return false;
		for (i = 0, ev = f.at; i < ret; i++, ev++) {
			rdt_fast_hdr(&f, ev, RDT_EV_POLL_CQ_WC, sizeof(*ev), dev);
			__rdt_enc_wc(ev, &wc[i], user);
			ev->cq_id = cq_id;
			rdt_wc_index(ev, i);
		}
		ev[-1].poll_requested = req;
		rdt_fast_commit(&f);
		return true;
	}
	if (!sum_want)
		return true;
	if (!rdt_fast_one(&f, RDT_EV_POLL_CQ, sizeof(*sum), rd->index, raw))
		return false;
	sum = f.at;
	sum->cq_id = cq->res.id;
	sum->requested = n;
	sum->ret = ret;
	sum->pad = 0;
	rdt_fast_commit(&f);
	return true;
}

static noinline void rdt_trace_req_notify_cq(struct rdt_dev *rd,
					     struct ib_cq *cq, u32 flags,
					     int ret, u64 start)
{
	struct rdt_ev_req_notify_cq *ev;
	struct rdt_slot s __uninitialized;

	if (!rdt_want(RDT_EV_REQ_NOTIFY_CQ))
		return;
	ev = rdt_reserve(&s, RDT_EV_REQ_NOTIFY_CQ, sizeof(*ev), rd->index);
	if (!ev)
		return;
	ev->cq_id = cq->res.id;
	ev->flags = flags;
	ev->ret = ret;
	ev->pad = 0;
	ev->dur_ns = rdt_slot_dur(&s, start);
	rdt_commit(&s);
}

/* ---- tracepoint adapters --------------------------------------------- */

static noinline void rdt_tp_poll_cq(struct rdt_dev *rd, struct ib_cq *cq,
				    int n, const struct ib_wc *wc, int ret)
{
	struct rdt_ev_poll_cq sum = {
		.cq_id = cq->res.id,
		.requested = n,
		.ret = ret,
	};
	bool user = rdt_uobj(cq->uobject);
	int i;

	for (i = 0; i < ret && rdt_tp_on(poll_cq_wc); i++) {
		struct rdt_ev_poll_cq_wc ev = { .cq_id = cq->res.id, .index = i };

		rdt_enc_wc(&ev, &wc[i], user);
		rdt_tp_fire(poll_cq_wc, rd->index, &ev);
	}
	rdt_tp_fire(poll_cq, rd->index, &sum);
}

static noinline void rdt_tp_req_notify_cq(struct rdt_dev *rd, struct ib_cq *cq,
					  u32 flags, int ret)
{
	struct rdt_ev_req_notify_cq ev = {
		.cq_id = cq->res.id,
		.flags = flags,
		.ret = ret,
	};

	rdt_tp_fire(req_notify_cq, rd->index, &ev);
}

#ifdef CONFIG_PREEMPT_RT
DEFINE_PER_CPU(long, rdt_dp_inflight);

/*
 * Module exit, after every device is unwrapped and synchronize_rcu_tasks():
 * no task can enter a data path wrapper any more (a caller that loaded one
 * and was preempted before the call was waited for), and each one inside
 * has counted itself on some CPU, visible here after the grace period.  A
 * task counts on one CPU and may uncount on another: the sum is the number
 * still inside, never 0 early (a late decrement only delays).  The last
 * instructions after the decrement are waited for by the caller's
 * synchronize_rcu_tasks() (a preempted task is no quiescent one).
 */
void rdt_dp_wait(void)
{
	unsigned long start = jiffies, said = 0;

	for (;;) {
		long n = 0;
		int cpu;

		for_each_possible_cpu(cpu)
			n += READ_ONCE(per_cpu(rdt_dp_inflight, cpu));
		if (n <= 0)
			break;
		if (time_after(jiffies, start + (said + 1) * 10 * HZ)) {
			said++;
			pr_warn("unload: %ld data path calls still inside a driver after %lu s\n",
				n, said * 10);
		}
		usleep_range(1000, 2000);
	}
	smp_mb();	/* their last loads before what exit frees */
}
#else
void rdt_dp_wait(void)
{
}
#endif

/*
 * The data path wrappers.  While nothing traces (the relay trace off and
 * their tracepoints off: a flag and key counts, loads, never patched
 * code, see tp_fire.h) they look up the original and
 * jump to it; when tracing, the out-of-line traced variants run.  Neither
 * takes an SRCU section: these ops never sleep (their callers may hold
 * spinlocks or run in softirq), module exit frees the contexts only after
 * synchronize_rcu_tasks() (every task that is, even preempted, inside
 * this module's text) and synchronize_rcu() (interrupts, on idle CPUs
 * too), and the relay trace is read with interrupts off (emit.c).  On
 * PREEMPT_RT a driver's spinlock_t sleeps, and RCU Tasks takes a task
 * blocked on one for a quiescent one: there each wrapper also counts
 * itself in flight (rdt_dp_enter(), two per-CPU adds, no barrier) and
 * exit waits for the count (rdt_dp_wait()).
 */

/*
 * A data path op's wrappers, three macros (each names a parameter of its
 * own once, so none is evaluated twice): rdt_@op, the ops table's entry,
 * counts itself in flight around __rdt_@op, which runs @lean where
 * rdt_lean has @bit (nothing but the relay trace watches the op: rdt.h),
 * @lean_kt where it has @bit_kt (the same, with ktime_get_ns() stamps),
 * @traced while anything else traces (the relay trace, or @on: the op's
 * tracepoints), else
 * jumps to the original of the last device wrapped, or of @dev's device,
 * found by the hash lookup out of line (rdt_slow_@op).  @params: the op's
 * parameters in parentheses; then their names.
 */
#define RDT_DP_SLOW(op, dev, params, ...)				\
static noinline int rdt_slow_##op params				\
{									\
	struct rdt_dev *rd = rdt_dev_find_slow(dev);			\
									\
	return rd ? rd->orig.op(__VA_ARGS__) : -ENODEV;			\
}

#define RDT_DP_FAST(op, dev, on, bit, lean, bit_kt, lean_kt, traced,	\
		    params, ...)					\
static __always_inline int __rdt_##op params				\
{									\
	u32 l = READ_ONCE(rdt_lean);	/* RDT_LEAN_ON: rdt_enabled */	\
	struct rdt_dev *rd;						\
									\
	if (l || (on)) {						\
		if (likely(l & (bit)))					\
			return lean;					\
		return l & (bit_kt) ? lean_kt : traced;			\
	}								\
	rd = READ_ONCE(rdt_dev_last);					\
	if (unlikely(rd->ibdev != (dev)))				\
		return rdt_slow_##op(__VA_ARGS__);			\
	return rd->orig.op(__VA_ARGS__);				\
}

#define RDT_DP_ENTRY(op, params, ...)					\
static notrace int rdt_##op params					\
{									\
	int ret;							\
									\
	rdt_dp_enter();							\
	ret = __rdt_##op(__VA_ARGS__);					\
	rdt_dp_exit();							\
	return ret;							\
}

#define RDT_POST_SEND_PARAMS (struct ib_qp *qp, const struct ib_send_wr *wr, \
				const struct ib_send_wr **bad)
RDT_LEAN(post_send, rdt_lean_post_send, true, RDT_POST_SEND_PARAMS, qp, wr, bad)
RDT_LEAN(post_send, rdt_lean_post_send_kt, false, RDT_POST_SEND_PARAMS, qp, wr, bad)
RDT_DP_SLOW(post_send, qp->device, RDT_POST_SEND_PARAMS, qp, wr, bad)
RDT_DP_FAST(post_send, qp->device, rdt_tp_on(post_send) || rdt_tp_on(post_send_ret),
	    RDT_LEAN_SEND, rdt_lean_post_send(qp, wr, bad),
	    RDT_LEAN_SEND_KT, rdt_lean_post_send_kt(qp, wr, bad),
	    rdt_traced_post_send(qp, wr, bad, true), RDT_POST_SEND_PARAMS, qp, wr, bad)
RDT_DP_ENTRY(post_send, RDT_POST_SEND_PARAMS, qp, wr, bad)

#define RDT_POST_RECV_PARAMS (struct ib_qp *qp, const struct ib_recv_wr *wr, \
				const struct ib_recv_wr **bad)
RDT_LEAN(post_recv, rdt_lean_post_recv, true, RDT_POST_RECV_PARAMS, qp, wr, bad)
RDT_LEAN(post_recv, rdt_lean_post_recv_kt, false, RDT_POST_RECV_PARAMS, qp, wr, bad)
RDT_DP_SLOW(post_recv, qp->device, RDT_POST_RECV_PARAMS, qp, wr, bad)
RDT_DP_FAST(post_recv, qp->device, rdt_tp_on(post_recv) || rdt_tp_on(post_recv_ret),
	    RDT_LEAN_RECV, rdt_lean_post_recv(qp, wr, bad),
	    RDT_LEAN_RECV_KT, rdt_lean_post_recv_kt(qp, wr, bad),
	    rdt_traced_post_recv(qp, NULL, wr, bad, true), RDT_POST_RECV_PARAMS, qp, wr, bad)
RDT_DP_ENTRY(post_recv, RDT_POST_RECV_PARAMS, qp, wr, bad)

#define RDT_POST_SRQ_RECV_PARAMS (struct ib_srq *srq, const struct ib_recv_wr *wr, \
				    const struct ib_recv_wr **bad)
RDT_DP_SLOW(post_srq_recv, srq->device, RDT_POST_SRQ_RECV_PARAMS, srq, wr, bad)
RDT_DP_FAST(post_srq_recv, srq->device, rdt_tp_on(post_recv) || rdt_tp_on(post_recv_ret),
	    0, rdt_traced_post_recv(NULL, srq, wr, bad, true),
	    0, rdt_traced_post_recv(NULL, srq, wr, bad, true),
	    rdt_traced_post_recv(NULL, srq, wr, bad, true), RDT_POST_SRQ_RECV_PARAMS, srq, wr, bad)
RDT_DP_ENTRY(post_srq_recv, RDT_POST_SRQ_RECV_PARAMS, srq, wr, bad)

static noinline int rdt_traced_poll_cq(struct ib_cq *cq, int n,
				       struct ib_wc *wc)
{
	struct rdt_dev *rd = rdt_dev_find(cq->device);
	int ret;

	if (unlikely(!rd))
		return -ENODEV;
	ret = rd->orig.poll_cq(cq, n, wc);
	if (rdt_tp_on(poll_cq_wc) || rdt_tp_on(poll_cq))
		rdt_tp_poll_cq(rd, cq, n, wc, ret);
	if (READ_ONCE(rdt_enabled) &&
	    (rdt_filtered() || !rdt_fast_poll_cq(rd, cq, n, wc, ret,
						 rdt_poll_want(),
						 READ_ONCE(rdt_clk_tsc))))
		rdt_trace_poll_cq(rd, cq, n, wc, ret);
	return ret;
}

static __always_inline int __rdt_lean_poll_cq(struct ib_cq *cq, int n,
					      struct ib_wc *wc, bool raw)
{
	struct rdt_dev *rd;
	u32 lean;
	int ret;

	if (unlikely(!rdt_dev_found(cq->device, &rd)))
		return -ENODEV;
	ret = rd->orig.poll_cq(cq, n, wc);
	/* What is wanted now: rdt_lean's bits stand for rdt_poll_want()'s. */
	lean = READ_ONCE(rdt_lean);
	if (unlikely(!(lean & (raw ? RDT_LEAN_POLL : RDT_LEAN_POLL_KT))) ||
	    !rdt_fast_poll_cq(rd, cq, n, wc, ret, lean, raw))
		rdt_trace_poll_cq(rd, cq, n, wc, ret);
	return ret;
}

#define RDT_POLL_CQ_PARAMS (struct ib_cq *cq, int n, struct ib_wc *wc)
RDT_LEAN(poll_cq, rdt_lean_poll_cq, true, RDT_POLL_CQ_PARAMS, cq, n, wc)
RDT_LEAN(poll_cq, rdt_lean_poll_cq_kt, false, RDT_POLL_CQ_PARAMS, cq, n, wc)
RDT_DP_SLOW(poll_cq, cq->device, RDT_POLL_CQ_PARAMS, cq, n, wc)
RDT_DP_FAST(poll_cq, cq->device, rdt_tp_on(poll_cq_wc) || rdt_tp_on(poll_cq),
	    RDT_LEAN_POLL, rdt_lean_poll_cq(cq, n, wc),
	    RDT_LEAN_POLL_KT, rdt_lean_poll_cq_kt(cq, n, wc),
	    rdt_traced_poll_cq(cq, n, wc), RDT_POLL_CQ_PARAMS, cq, n, wc)
RDT_DP_ENTRY(poll_cq, RDT_POLL_CQ_PARAMS, cq, n, wc)

static noinline int rdt_traced_req_notify_cq(struct ib_cq *cq,
					     enum ib_cq_notify_flags flags)
{
	struct rdt_dev *rd = rdt_dev_find(cq->device);
	u64 entry = READ_ONCE(rdt_enabled) ? ktime_get_ns() : 0;
	int ret;

	if (unlikely(!rd))
		return -ENODEV;
	ret = rd->orig.req_notify_cq(cq, flags);
	if (rdt_tp_on(req_notify_cq))
		rdt_tp_req_notify_cq(rd, cq, flags, ret);
	if (READ_ONCE(rdt_enabled))
		rdt_trace_req_notify_cq(rd, cq, flags, ret, entry);
	return ret;
}

#define RDT_REQ_NOTIFY_CQ_PARAMS (struct ib_cq *cq, enum ib_cq_notify_flags flags)
RDT_DP_SLOW(req_notify_cq, cq->device, RDT_REQ_NOTIFY_CQ_PARAMS, cq, flags)
RDT_DP_FAST(req_notify_cq, cq->device, rdt_tp_on(req_notify_cq),
	    0, rdt_traced_req_notify_cq(cq, flags),
	    0, rdt_traced_req_notify_cq(cq, flags),
	    rdt_traced_req_notify_cq(cq, flags), RDT_REQ_NOTIFY_CQ_PARAMS, cq, flags)
RDT_DP_ENTRY(req_notify_cq, RDT_REQ_NOTIFY_CQ_PARAMS, cq, flags)

/* ---- control path adapters ------------------------------------------- */

/*
 * The state a QP is in, without asking the driver.  A traced modify_qp
 * used to call the driver's query_qp for its old state: a firmware command
 * on mlx5, and a verb the traced program never issued.  ib_core keeps no
 * state in struct ib_qp (6.1, 6.12: nldev and ib_query_qp() ask the
 * driver too), so each device context keeps the last state it saw a QP
 * enter, keyed like restrack's QP ids (the QPN, and the port for QP0 and
 * QP1, which each port has): RESET at a create that returned 0, the new
 * state at a modify with IB_QP_STATE that returned 0, erased before the
 * driver's destroy (so a QPN reused as soon as the driver frees it is
 * never erased afterwards).  The control path stays wrapped while tracing
 * is off, so a QP created then is still known when tracing starts.
 *
 * What it cannot know: QPs that existed before the device was wrapped
 * (QP0/QP1, a program's QPs older than modprobe) until their first
 * traced modify, a QP whose entry could not be stored (GFP_NOWAIT: the
 * wrappers sleep on nothing of their own), and the transitions the device
 * makes on its own (to ERROR or SQE after a failed WR, a fatal QP event).
 * The caller's IB_QP_CUR_STATE, when given, wins over the table.
 * old_state is RDT_QPS_UNKNOWN where the table has nothing.
 */
static unsigned long rdt_qp_key(const struct ib_qp *qp)
{
	if (qp->qp_type == IB_QPT_SMI || qp->qp_type == IB_QPT_GSI)
		return qp->qp_num | (unsigned long)(qp->port & 0xff) << 24;
	return qp->qp_num;
}

/* IRQ-safe: a caller may hold a lock of its own with interrupts off. */
static void rdt_qp_state_set(struct rdt_dev *rd, const struct ib_qp *qp,
			     u8 state)
{
	unsigned long flags;

	xa_lock_irqsave(&rd->qp_state, flags);
	__xa_store(&rd->qp_state, rdt_qp_key(qp), xa_mk_value(state),
		   GFP_NOWAIT | __GFP_NOWARN);
	xa_unlock_irqrestore(&rd->qp_state, flags);
}

static void rdt_qp_state_forget(struct rdt_dev *rd, const struct ib_qp *qp)
{
	unsigned long flags;

	xa_lock_irqsave(&rd->qp_state, flags);
	__xa_erase(&rd->qp_state, rdt_qp_key(qp));
	xa_unlock_irqrestore(&rd->qp_state, flags);
}

/* The state before a modify: the caller's, else the last one seen. */
static u8 rdt_qp_state(struct rdt_dev *rd, struct ib_qp *qp,
		       const struct ib_qp_attr *a, int mask)
{
	void *v;

	if (mask & IB_QP_CUR_STATE)
		return a->cur_qp_state;
	v = xa_load(&rd->qp_state, rdt_qp_key(qp));
	return xa_is_value(v) ? xa_to_value(v) : RDT_QPS_UNKNOWN;
}

static void rdt_emit_pd(struct rdt_dev *rd, u16 type, struct ib_pd *pd,
			u32 id, bool user, int ret, u64 entry)
{
	struct rdt_ev_pd ev = {
		.pd_id = id,
		.ret = ret,
		.user = user,
		.local_dma_lkey = pd->local_dma_lkey,
	};

	if (rdt_want(type))
		rdt_emit_verb(&ev, type, rd->index, entry);
	if (type == RDT_EV_PD_ALLOC)
		rdt_tp_fire(pd_alloc, rd->index, &ev);
	else
		rdt_tp_fire(pd_dealloc, rd->index, &ev);
}

static int rdt_alloc_pd(struct ib_pd *pd, struct ib_udata *udata)
{
	int idx = srcu_read_lock(&rdt_srcu);
	struct rdt_dev *rd = rdt_dev_find(pd->device);
	u64 entry = ktime_get_ns();
	int ret = -ENODEV;

	if (rd) {
		ret = rd->orig.alloc_pd(pd, udata);
		if (ret) {
			rdt_emit_pd(rd, RDT_EV_PD_ALLOC, pd, 0, udata, ret, entry);
		} else {
			struct rdt_ev_pd ev = {
				.user = !!udata,
				.local_dma_lkey = pd->local_dma_lkey,
			};

			rdt_restrack_pd_allocated(pd, rd->index, entry, &ev);
		}
	}
	srcu_read_unlock(&rdt_srcu, idx);
	return ret;
}

static int rdt_dealloc_pd(struct ib_pd *pd, struct ib_udata *udata)
{
	int idx = srcu_read_lock(&rdt_srcu);
	struct rdt_dev *rd = rdt_dev_find(pd->device);
	u64 entry = ktime_get_ns();
	u32 id = pd->res.id;
	int ret = -ENODEV;

	if (rd) {
		struct ib_pd copy = { .local_dma_lkey = pd->local_dma_lkey };

		rdt_restrack_flush(pd, id);
		ret = rd->orig.dealloc_pd(pd, udata);
		rdt_emit_pd(rd, RDT_EV_PD_DEALLOC, &copy, id, udata, ret, entry);
	}
	srcu_read_unlock(&rdt_srcu, idx);
	return ret;
}

static int rdt_create_cq(struct ib_cq *cq, const struct ib_cq_init_attr *attr,
			 RDT_CREATE_CQ_ARG *arg)
{
	int idx = srcu_read_lock(&rdt_srcu);
	struct rdt_dev *rd = rdt_dev_find(cq->device);
	u64 entry = ktime_get_ns();
	int ret = -ENODEV;

	if (rd) {
		struct rdt_ev_cq ev = {
			.cqe = attr->cqe,
			.comp_vector = attr->comp_vector,
			.user = !!arg,
		};

		ret = rd->orig.create_cq(cq, attr, arg);
		ev.ret = ret;
		if (!ret) {
			/* Emitted once restrack gives it its id (restrack.c). */
			rdt_restrack_cq_created(cq, rd->index, entry, &ev);
		} else {
			if (rdt_want(RDT_EV_CQ_CREATE))
				rdt_emit_verb(&ev, RDT_EV_CQ_CREATE, rd->index, entry);
			rdt_tp_fire(cq_create, rd->index, &ev);
		}
	}
	srcu_read_unlock(&rdt_srcu, idx);
	return ret;
}

static int rdt_destroy_cq(struct ib_cq *cq, struct ib_udata *udata)
{
	int idx = srcu_read_lock(&rdt_srcu);
	struct rdt_dev *rd = rdt_dev_find(cq->device);
	u64 entry = ktime_get_ns();
	struct rdt_ev_cq ev = {
		.cq_id = cq->res.id,
		.cqe = cq->cqe,
		.comp_vector = cq->comp_vector,
		.user = !!udata,
	};
	int ret = -ENODEV;

	if (rd) {
		rdt_restrack_flush(cq, ev.cq_id);
		ret = rd->orig.destroy_cq(cq, udata);
		ev.ret = ret;
		if (rdt_want(RDT_EV_CQ_DESTROY))
			rdt_emit_verb(&ev, RDT_EV_CQ_DESTROY, rd->index, entry);
		rdt_tp_fire(cq_destroy, rd->index, &ev);
	}
	srcu_read_unlock(&rdt_srcu, idx);
	return ret;
}

static void rdt_trace_create_qp(struct rdt_dev *rd, struct ib_qp *qp,
				const struct ib_qp_init_attr *ia, bool user,
				int ret, u64 entry)
{
	struct rdt_ev_qp_create ev;

	/* Its CQs' and PD's creations first, with the ids it names. */
	rdt_restrack_resolve();
	ev = (struct rdt_ev_qp_create){
		.qpn = ret ? 0 : qp->qp_num,
		.ret = ret,
		.qp_type = ia->qp_type,
		.send_cq_id = ia->send_cq ? ia->send_cq->res.id : 0,
		.recv_cq_id = ia->recv_cq ? ia->recv_cq->res.id : 0,
		.srq = !!ia->srq,
		.max_send_wr = ia->cap.max_send_wr,
		.max_recv_wr = ia->cap.max_recv_wr,
		.max_send_sge = ia->cap.max_send_sge,
		.max_recv_sge = ia->cap.max_recv_sge,
		.max_inline_data = ia->cap.max_inline_data,
		.sq_sig_type = ia->sq_sig_type,
		.pd_id = qp->pd ? qp->pd->res.id : 0,
		.user = user,
		.port = ia->port_num,
	};

	if (rdt_want(RDT_EV_QP_CREATE))
		rdt_emit_verb(&ev, RDT_EV_QP_CREATE, rd->index, entry);
	rdt_tp_fire(qp_create, rd->index, &ev);
}

static int rdt_create_qp(struct ib_qp *qp, struct ib_qp_init_attr *ia,
			 struct ib_udata *udata)
{
	int idx = srcu_read_lock(&rdt_srcu);
	struct rdt_dev *rd = rdt_dev_find(qp->device);
	u64 entry = ktime_get_ns();
	int ret = -ENODEV;

	if (rd) {
		ret = rd->orig.create_qp(qp, ia, udata);
		if (!ret)
			rdt_qp_state_set(rd, qp, IB_QPS_RESET);
		rdt_trace_create_qp(rd, qp, ia, udata, ret, entry);
	}
	srcu_read_unlock(&rdt_srcu, idx);
	return ret;
}

/* Only fields named by the mask are read: the rest may be garbage. */
static void rdt_enc_modify(struct rdt_ev_qp_modify *ev,
			   const struct ib_qp_attr *a, int mask)
{
	ev->attr_mask = mask;
	if (mask & IB_QP_STATE)
		ev->new_state = a->qp_state;
	if (mask & IB_QP_PATH_MTU)
		ev->path_mtu = a->path_mtu;
	if (mask & IB_QP_DEST_QPN)
		ev->dest_qpn = a->dest_qp_num;
	if (mask & IB_QP_SQ_PSN)
		ev->sq_psn = a->sq_psn;
	if (mask & IB_QP_RQ_PSN)
		ev->rq_psn = a->rq_psn;
	if (mask & IB_QP_TIMEOUT)
		ev->timeout = a->timeout;
	if (mask & IB_QP_RETRY_CNT)
		ev->retry_cnt = a->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		ev->rnr_retry = a->rnr_retry;
	if (mask & IB_QP_MIN_RNR_TIMER)
		ev->min_rnr_timer = a->min_rnr_timer;
	if (mask & IB_QP_PORT)
		ev->port = a->port_num;
	if (mask & IB_QP_QKEY)
		ev->qkey = a->qkey;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		ev->max_rd_atomic = a->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		ev->max_dest_rd_atomic = a->max_dest_rd_atomic;
	/*
	 * The GIDs tell a QP's peer where QPNs repeat (every host numbers
	 * its own).  ib_modify_qp() resolved sgid_attr before the driver
	 * runs, and holds it across the call.
	 */
	if ((mask & IB_QP_AV) &&
	    (rdma_ah_get_ah_flags(&a->ah_attr) & IB_AH_GRH)) {
		const struct ib_global_route *grh = rdma_ah_read_grh(&a->ah_attr);

		memcpy(ev->dgid, grh->dgid.raw, sizeof(ev->dgid));
		ev->gids = RDT_QP_DGID;
		if (grh->sgid_attr) {
			memcpy(ev->sgid, grh->sgid_attr->gid.raw,
			       sizeof(ev->sgid));
			ev->gids |= RDT_QP_SGID;
		}
	}
}

static int rdt_modify_qp(struct ib_qp *qp, struct ib_qp_attr *a, int mask,
			 struct ib_udata *udata)
{
	int idx = srcu_read_lock(&rdt_srcu);
	struct rdt_dev *rd = rdt_dev_find(qp->device);
	struct rdt_ev_qp_modify ev = { .qpn = qp->qp_num };
	bool want = rdt_want(RDT_EV_QP_MODIFY);
	bool tp = rdt_tp_on(qp_modify);
	u64 entry = ktime_get_ns();
	int ret = -ENODEV;

	if (rd) {
		u8 new_state = mask & IB_QP_STATE ? a->qp_state : 0;

		if (want || tp) {
			rdt_enc_modify(&ev, a, mask);
			ev.old_state = rdt_qp_state(rd, qp, a, mask);
		}
		ret = rd->orig.modify_qp(qp, a, mask, udata);
		if (!ret && (mask & IB_QP_STATE))
			rdt_qp_state_set(rd, qp, new_state);
		ev.ret = ret;
		ev.cur_state = !ret && (mask & IB_QP_STATE) ?
			       ev.new_state : ev.old_state;
		if (want)
			rdt_emit_verb(&ev, RDT_EV_QP_MODIFY, rd->index, entry);
		if (tp)
			rdt_tp_fire(qp_modify, rd->index, &ev);
	}
	srcu_read_unlock(&rdt_srcu, idx);
	return ret;
}

static int rdt_destroy_qp(struct ib_qp *qp, struct ib_udata *udata)
{
	int idx = srcu_read_lock(&rdt_srcu);
	struct rdt_dev *rd = rdt_dev_find(qp->device);
	struct rdt_ev_qp_destroy ev = {
		.qpn = qp->qp_num,
		.qp_type = qp->qp_type,
	};
	u64 entry = ktime_get_ns();
	int ret = -ENODEV;

	if (rd) {
		/* A failed destroy leaves its QP's state unknown. */
		rdt_qp_state_forget(rd, qp);
		ret = rd->orig.destroy_qp(qp, udata);
		ev.ret = ret;
		if (rdt_want(RDT_EV_QP_DESTROY))
			rdt_emit_verb(&ev, RDT_EV_QP_DESTROY, rd->index, entry);
		rdt_tp_fire(qp_destroy, rd->index, &ev);
	}
	srcu_read_unlock(&rdt_srcu, idx);
	return ret;
}

static void rdt_trace_mr(struct rdt_dev *rd, u16 type, struct ib_mr *mr,
			 struct ib_pd *pd, u32 kind, u64 iova, u64 len,
			 int access, u64 entry)
{
	struct rdt_ev_mr ev;

	/* Its PD's creation first, with the id it names. */
	rdt_restrack_resolve();
	ev = (struct rdt_ev_mr){
		.iova = rdt_wr_id(iova, kind == RDT_MR_USER),
		.length = len,
		.access = access,
		.kind = kind,
		.pd_id = pd ? pd->res.id : 0,
	};

	if (IS_ERR_OR_NULL(mr)) {
		ev.ret = mr ? PTR_ERR(mr) : -ENOMEM;
	} else {
		ev.lkey = mr->lkey;
		ev.rkey = mr->rkey;
	}
	if (rdt_want(type))
		rdt_emit_verb(&ev, type, rd->index, entry);
	rdt_tp_fire(mr_reg, rd->index, &ev);
}

static struct ib_mr *rdt_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
				     u64 virt_addr, int access,
				     RDT_REG_USER_MR_DMAH
				     struct ib_udata *udata)
{
	int idx = srcu_read_lock(&rdt_srcu);
	struct rdt_dev *rd = rdt_dev_find(pd->device);
	struct ib_mr *mr = ERR_PTR(-ENODEV);
	u64 entry = ktime_get_ns();

	if (rd) {
		mr = rd->orig.reg_user_mr(pd, start, length, virt_addr, access,
					  RDT_REG_USER_MR_DMAH_ARG udata);
		rdt_trace_mr(rd, RDT_EV_MR_REG, mr, pd, RDT_MR_USER, virt_addr,
			     length, access, entry);
	}
	srcu_read_unlock(&rdt_srcu, idx);
	return mr;
}

static struct ib_mr *rdt_get_dma_mr(struct ib_pd *pd, int access)
{
	int idx = srcu_read_lock(&rdt_srcu);
	struct rdt_dev *rd = rdt_dev_find(pd->device);
	struct ib_mr *mr = ERR_PTR(-ENODEV);
	u64 entry = ktime_get_ns();

	if (rd) {
		mr = rd->orig.get_dma_mr(pd, access);
		rdt_trace_mr(rd, RDT_EV_MR_REG, mr, pd, RDT_MR_DMA, 0, 0,
			     access, entry);
	}
	srcu_read_unlock(&rdt_srcu, idx);
	return mr;
}

static struct ib_mr *rdt_alloc_mr(struct ib_pd *pd, enum ib_mr_type type,
				  u32 max_num_sg)
{
	int idx = srcu_read_lock(&rdt_srcu);
	struct rdt_dev *rd = rdt_dev_find(pd->device);
	struct ib_mr *mr = ERR_PTR(-ENODEV);
	u64 entry = ktime_get_ns();

	if (rd) {
		mr = rd->orig.alloc_mr(pd, type, max_num_sg);
		rdt_trace_mr(rd, RDT_EV_MR_REG, mr, pd, RDT_MR_ALLOC, 0, 0, 0,
			     entry);
	}
	srcu_read_unlock(&rdt_srcu, idx);
	return mr;
}

static int rdt_dereg_mr(struct ib_mr *mr, struct ib_udata *udata)
{
	int idx = srcu_read_lock(&rdt_srcu);
	struct rdt_dev *rd = rdt_dev_find(mr->device);
	struct rdt_ev_mr ev = {
		.lkey = mr->lkey,
		.rkey = mr->rkey,
		.iova = rdt_wr_id(mr->iova, udata || rdt_uobj(mr->uobject)),
		.length = mr->length,
		.pd_id = mr->pd ? mr->pd->res.id : 0,
		.kind = udata ? RDT_MR_USER : 0,
	};
	u64 entry = ktime_get_ns();
	int ret = -ENODEV;

	if (rd) {
		ret = rd->orig.dereg_mr(mr, udata);
		ev.ret = ret;
		if (rdt_want(RDT_EV_MR_DEREG))
			rdt_emit_verb(&ev, RDT_EV_MR_DEREG, rd->index, entry);
		rdt_tp_fire(mr_dereg, rd->index, &ev);
	}
	srcu_read_unlock(&rdt_srcu, idx);
	return ret;
}

/* ---- the ops table --------------------------------------------------- */

/* Typed, so the compiler checks every wrapper against the op it replaces. */
static const struct ib_device_ops rdt_wrappers = {
	.post_send	= rdt_post_send,
	.post_recv	= rdt_post_recv,
	.post_srq_recv	= rdt_post_srq_recv,
	.poll_cq	= rdt_poll_cq,
	.req_notify_cq	= rdt_req_notify_cq,
	.alloc_pd	= rdt_alloc_pd,
	.dealloc_pd	= rdt_dealloc_pd,
	.create_cq	= rdt_create_cq,
	.destroy_cq	= rdt_destroy_cq,
	.create_qp	= rdt_create_qp,
	.modify_qp	= rdt_modify_qp,
	.destroy_qp	= rdt_destroy_qp,
	.reg_user_mr	= rdt_reg_user_mr,
	.get_dma_mr	= rdt_get_dma_mr,
	.alloc_mr	= rdt_alloc_mr,
	.dereg_mr	= rdt_dereg_mr,
};

#define RDT_OP(x)	{ .name = #x, .off = offsetof(rdt_ops_t, x) }

/* The data path first: RDT_HOT_OPS. */
const struct rdt_op rdt_ops[] = {
	RDT_OP(post_send),
	RDT_OP(post_recv),
	RDT_OP(post_srq_recv),
	RDT_OP(poll_cq),
	RDT_OP(req_notify_cq),
	RDT_OP(alloc_pd),
	RDT_OP(dealloc_pd),
	RDT_OP(create_cq),
	RDT_OP(destroy_cq),
	RDT_OP(create_qp),
	RDT_OP(modify_qp),
	RDT_OP(destroy_qp),
	RDT_OP(reg_user_mr),
	RDT_OP(get_dma_mr),
	RDT_OP(alloc_mr),
	RDT_OP(dereg_mr),
};
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_ops);

const unsigned int rdt_nr_ops = ARRAY_SIZE(rdt_ops);
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_nr_ops);

static void **rdt_slot(const struct ib_device_ops *ops, const struct rdt_op *op)
{
	return (void **)((char *)ops + op->off);
}

/*
 * Save the originals that will be wrapped: non-NULL ones that are not
 * already our wrapper (a second wrap must never save a wrapper as the
 * original, which would recurse).  Returns the mask of ops to install.
 */
unsigned long rdt_ops_save(rdt_ops_t *live, rdt_ops_t *saved,
			   const struct ib_device_ops *wrappers,
			   const struct rdt_op *tbl, unsigned int n)
{
	unsigned long mask = 0;
	unsigned int i;

	BUILD_BUG_ON(ARRAY_SIZE(rdt_ops) > BITS_PER_LONG);
	for (i = 0; i < n; i++) {
		void *orig = READ_ONCE(*rdt_slot(live, &tbl[i]));
		void *w = *rdt_slot(wrappers, &tbl[i]);

		if (!orig || !w || orig == w)
			continue;
		*rdt_slot(saved, &tbl[i]) = orig;
		mask |= BIT(i);
	}
	return mask;
}
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_ops_save);

/*
 * Put our wrappers where the saved originals still sit, as uninstall does
 * the reverse: an op someone else changed since it was saved is left
 * alone and its bit cleared from *mask (nothing of ours to undo there).
 */
unsigned int rdt_ops_install(rdt_ops_t *live,
			     const struct ib_device_ops *saved,
			     const struct ib_device_ops *wrappers,
			     const struct rdt_op *tbl, unsigned int n,
			     unsigned long *mask)
{
	unsigned int i, nr = 0;

	for (i = 0; i < n; i++) {
		void *orig = *rdt_slot(saved, &tbl[i]);
		void *w = *rdt_slot(wrappers, &tbl[i]);

		if (!(*mask & BIT(i)))
			continue;
		if (cmpxchg(rdt_slot(live, &tbl[i]), orig, w) == orig)
			nr++;
		else
			*mask &= ~BIT(i);
	}
	return nr;
}
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_ops_install);

/*
 * Put the originals back where our wrapper still sits.  An op someone else
 * changed meanwhile is left alone, and its bit set in *foreign: it still
 * runs our wrapper, beneath theirs.
 */
unsigned int rdt_ops_uninstall(rdt_ops_t *live,
			       const struct ib_device_ops *saved,
			       const struct ib_device_ops *wrappers,
			       const struct rdt_op *tbl, unsigned int n,
			       unsigned long mask, unsigned long *foreign)
{
	unsigned int i, nr = 0;

	*foreign = 0;
	for (i = 0; i < n; i++) {
		void *w = *rdt_slot(wrappers, &tbl[i]);
		void *orig = *rdt_slot(saved, &tbl[i]);

		if (!(mask & BIT(i)))
			continue;
		if (cmpxchg(rdt_slot(live, &tbl[i]), w, orig) == w)
			nr++;
		else
			*foreign |= BIT(i);
	}
	return nr;
}
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_ops_uninstall);

/* ---- per-device lifecycle -------------------------------------------- */

static void rdt_emit_device(struct rdt_dev *rd, struct ib_device *ibdev,
			    u16 type, unsigned int nr, const char *old)
{
	struct rdt_ev_device ev = { .nr_wrapped = nr };
	int idx;

	if (!rdt_want(type))
		return;
	rdt_enc_device(&ev, ibdev, rd->name);
	if (old)
		strscpy_pad(ev.old_name, old, sizeof(ev.old_name));
	idx = srcu_read_lock(&rdt_srcu);
	rdt_emit(&ev, type, sizeof(ev), rd->index, 0, 0);
	srcu_read_unlock(&rdt_srcu, idx);
}

/* Under rdt_dev_mutex: @want of rd's ops into device->ops. */
static void rdt_dev_install(struct rdt_dev *rd, unsigned long want)
{
	unsigned long got = want & ~rd->live;

	rdt_ops_install(&rd->ibdev->ops, &rd->orig, &rdt_wrappers, rdt_ops,
			rdt_nr_ops, &got);
	rd->live |= got;
	want &= ~rd->live;
	if (want) {
		/* Someone else's since we saved it: not ours to wrap. */
		pr_warn("%s: %lu ops changed by someone else since saved: not wrapped\n",
			rd->name, hweight_long(want));
		rd->mask &= ~want;
		WRITE_ONCE(rd->nr_wrapped, hweight_long(rd->mask));
	}
}

/* Under rdt_dev_mutex: rd's data path in or out, as rdt_hot_users says. */
static void rdt_dev_hot(struct rdt_dev *rd)
{
	unsigned long hot = rd->live & RDT_HOT_OPS;
	unsigned long foreign;

	if (!rd->ready || rd->retired)
		return;
	if (rdt_hot_users) {
		rdt_dev_install(rd, rd->mask & RDT_HOT_OPS);
		return;
	}
	rdt_ops_uninstall(&rd->ibdev->ops, &rd->orig, &rdt_wrappers, rdt_ops,
			  rdt_nr_ops, hot, &foreign);
	/* An op someone else wrapped over ours stays live, and ours in it. */
	rd->live &= ~hot | foreign;
}

static void rdt_hot_set(int delta)
{
	struct rdt_dev *rd;
	bool was;

	mutex_lock(&rdt_dev_mutex);
	was = rdt_hot_users;
	if (WARN_ON_ONCE(delta < 0 && !rdt_hot_users))
		delta = 0;
	rdt_hot_users += delta;
	if (was != !!rdt_hot_users)
		list_for_each_entry(rd, &rdt_dev_list, lnode)
			rdt_dev_hot(rd);
	mutex_unlock(&rdt_dev_mutex);
}

/* Something starts tracing the data path (may sleep; not in a wrapper). */
void rdt_hot_get(void)
{
	rdt_hot_set(1);
}

void rdt_hot_put(void)
{
	rdt_hot_set(-1);
}

/* The data-path tracepoints' first probe and last one (TRACE_EVENT_FN). */
int rdt_tp_users;
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_tp_users);

/* Under tracepoints_mutex: before the tracepoint's key goes on. */
int rdt_tp_reg(void)
{
	rdt_hot_get();
	WRITE_ONCE(rdt_tp_users, rdt_tp_users + 1);
	rdt_lean_update();
	return 0;
}

/* After the key went off. */
void rdt_tp_unreg(void)
{
	WRITE_ONCE(rdt_tp_users, rdt_tp_users - 1);
	rdt_lean_update();
	rdt_hot_put();
}

/* ---- wrappers stacked over ours ---------------------------------------- */

/*
 * Another module may wrap an op over ours: save our wrapper as its
 * original and put its own in device->ops.  Its wrapper then calls ours for
 * as long as it stays there, so this module's text must stay too: an
 * unload would free code that the other module still calls.  A check every
 * second finds such ops; while any exists the module holds a reference on
 * itself, so `rmmod rdmatrace` fails ("in use"), and the log names the
 * device, the op and the function over ours (stack_check_ms: how often;
 * 0, never).  An unload that begins before
 * the check saw one waits in exit until that wrapper is undone
 * (rdt_dev_unwrap(), rdt_exiting).
 */
bool rdt_exiting;
unsigned int rdt_stack_check_ms = 1000;
static bool rdt_pinned;
static void rdt_stack_check(struct work_struct *work);
static DECLARE_DELAYED_WORK(rdt_stack_work, rdt_stack_check);

/* Under rdt_dev_mutex: rd's ops in device->ops that no longer hold ours. */
static unsigned long rdt_dev_stacked(struct rdt_dev *rd)
{
	unsigned long stacked = 0;
	unsigned int i;

	for (i = 0; i < rdt_nr_ops; i++)
		if ((rd->live & BIT(i)) &&
		    READ_ONCE(*rdt_slot(&rd->ibdev->ops, &rdt_ops[i])) !=
		    *rdt_slot(&rdt_wrappers, &rdt_ops[i]))
			stacked |= BIT(i);
	return stacked;
}

static void rdt_say_stacked(struct rdt_dev *rd, unsigned long ops,
			    const char *what)
{
	unsigned int i;

	for_each_set_bit(i, &ops, rdt_nr_ops)
		pr_warn("%s: %s is wrapped over rdmatrace's by %ps: %s\n",
			rd->name, rdt_ops[i].name,
			READ_ONCE(*rdt_slot(&rd->ibdev->ops, &rdt_ops[i])),
			what);
}

static void rdt_stack_check(struct work_struct *work)
{
	bool any = false;
	struct rdt_dev *rd;

	mutex_lock(&rdt_dev_mutex);
	list_for_each_entry(rd, &rdt_dev_list, lnode) {
		unsigned long now;

		if (!rd->ready || rd->retired)
			continue;
		now = rdt_dev_stacked(rd);
		if (now & ~rd->stacked)
			rdt_say_stacked(rd, now & ~rd->stacked,
					"rdmatrace stays loaded (in use) until that is undone");
		rd->stacked = now;
		any |= !!now;
	}
	if (any && !rdt_pinned) {
		__module_get(THIS_MODULE);
		rdt_pinned = true;
	} else if (!any && rdt_pinned) {
		pr_info("no wrapper over rdmatrace's any more: it can be unloaded\n");
		module_put(THIS_MODULE);
		rdt_pinned = false;
	}
	mutex_unlock(&rdt_dev_mutex);
	if (!READ_ONCE(rdt_exiting))
		schedule_delayed_work(&rdt_stack_work,
				      msecs_to_jiffies(rdt_stack_check_ms));
}

void rdt_stack_watch_start(void)
{
	if (rdt_stack_check_ms)
		schedule_delayed_work(&rdt_stack_work,
				      msecs_to_jiffies(rdt_stack_check_ms));
}

/* Exit: no reference held (exit would not run), none taken any more. */
void rdt_stack_watch_stop(void)
{
	WRITE_ONCE(rdt_exiting, true);
	cancel_delayed_work_sync(&rdt_stack_work);
}

/*
 * Open to fail_function: fail-nth cannot aim at its kzalloc among a device
 * add's ~15000 allocation sites (tests/stress/faults.test).
 */
struct rdt_dev *rdt_dev_wrap(struct ib_device *ibdev)
{
	struct rdt_dev *rd;
	unsigned int nr;

	rd = kzalloc(sizeof(*rd), GFP_KERNEL);
	if (!rd)
		return ERR_PTR(-ENOMEM);
	rd->ibdev = ibdev;
	rd->index = ibdev->index;
	xa_init_flags(&rd->qp_state, XA_FLAGS_LOCK_IRQ);
	strscpy(rd->name, dev_name(&ibdev->dev), sizeof(rd->name));
	rd->mask = rdt_ops_save(&ibdev->ops, &rd->orig, &rdt_wrappers,
				rdt_ops, rdt_nr_ops);
	rd->nr_wrapped = hweight_long(rd->mask);

	rdt_restrack_open(rd->index);
	mutex_lock(&rdt_dev_mutex);
	hash_add_rcu(rdt_dev_hash, &rd->hnode, (unsigned long)ibdev);
	list_add_tail(&rd->lnode, &rdt_dev_list);
	WRITE_ONCE(rdt_dev_last, rd);
	mutex_unlock(&rdt_dev_mutex);

	/* Every CPU sees the context before any can enter a wrapper. */
	synchronize_rcu();
	mutex_lock(&rdt_dev_mutex);
	rdt_dev_install(rd, rd->mask & (rdt_hot_users ? ~0ul : ~RDT_HOT_OPS));
	rd->ready = true;
	nr = rd->nr_wrapped;
	mutex_unlock(&rdt_dev_mutex);
	pr_info("%s: wrapped %u ops (the data path's %lu while traced)\n",
		rd->name, nr, hweight_long(rd->mask & RDT_HOT_OPS));
	rdt_emit_device(rd, ibdev, RDT_EV_DEVICE_ADD, nr, NULL);
	return rd;
}

ALLOW_ERROR_INJECTION(rdt_dev_wrap, ERRNO);

/*
 * Module exit with another module's wrapper over ours (put there after the
 * last check, or an unload forced past the reference): our text must
 * outlive its calls, so wait until it is undone (its module puts ours
 * back), putting each original back as soon as ours is there again.
 */
static unsigned int rdt_dev_unstack(struct rdt_dev *rd, unsigned long foreign)
{
	unsigned long start = jiffies, said = 0, left;
	unsigned int nr = 0;

	rdt_say_stacked(rd, foreign,
			"rdmatrace's unload waits until that is undone");
	while (foreign) {
		mutex_unlock(&rdt_dev_mutex);
		msleep(100);
		mutex_lock(&rdt_dev_mutex);
		nr += rdt_ops_uninstall(&rd->ibdev->ops, &rd->orig,
					&rdt_wrappers, rdt_ops, rdt_nr_ops,
					foreign, &left);
		foreign = left;
		if (foreign && time_after(jiffies, start + (said + 1) * 30 * HZ)) {
			said++;
			rdt_say_stacked(rd, foreign, "still waiting");
		}
	}
	pr_info("%s: the wrappers over rdmatrace's are gone: unloading\n",
		rd->name);
	return nr;
}

void rdt_dev_unwrap(struct ib_device *ibdev, struct rdt_dev *rd)
{
	unsigned long foreign;
	unsigned int nr;

	/* While its destroys still pass us (restrack.c). */
	rdt_restrack_close(rd->index);
	mutex_lock(&rdt_dev_mutex);
	nr = rdt_ops_uninstall(&ibdev->ops, &rd->orig, &rdt_wrappers, rdt_ops,
			       rdt_nr_ops, rd->live, &foreign);
	/*
	 * A device going away may keep a wrapper over ours (this context
	 * stays findable until exit, and the device is not called after its
	 * removal); exit may not.
	 */
	if (foreign && READ_ONCE(rdt_exiting)) {
		nr += rdt_dev_unstack(rd, foreign);
		foreign = 0;
	}
	/* The data path's, when untraced, are back already. */
	nr += hweight_long(rd->mask & ~rd->live);
	rd->live = 0;
	rd->retired = true;
	if (rdt_dev_last == rd)
		WRITE_ONCE(rdt_dev_last, &rdt_dev_none);
	mutex_unlock(&rdt_dev_mutex);
	if (foreign)
		pr_warn("%s: removed with %lu ops wrapped over rdmatrace's: left in place\n",
			rd->name, hweight_long(foreign));
	/* Its QPs are gone; a wrapper still running may add one back. */
	xa_destroy(&rd->qp_state);
	rdt_emit_device(rd, ibdev, RDT_EV_DEVICE_REMOVE, nr, NULL);
	pr_info("%s: unwrapped %u ops\n", rd->name, nr);
}

void rdt_dev_rename(struct ib_device *ibdev, struct rdt_dev *rd)
{
	char old[RDT_NAME_LEN];

	mutex_lock(&rdt_dev_mutex);
	strscpy(old, rd->name, sizeof(old));
	strscpy(rd->name, dev_name(&ibdev->dev), sizeof(rd->name));
	mutex_unlock(&rdt_dev_mutex);
	rdt_emit_device(rd, ibdev, RDT_EV_DEVICE_RENAME, 0, old);
}

/*
 * Tracing just went on: name every device wrapped before, as a trace that
 * starts after `modprobe` (the usual case) never saw their DEVICE_ADD.
 * A device whose removal is under way is left out; its REMOVE follows.
 */
void rdt_dev_statedump(void)
{
	struct rdt_dev *rd;

	mutex_lock(&rdt_dev_mutex);
	list_for_each_entry(rd, &rdt_dev_list, lnode)
		if (!rd->retired)
			rdt_emit_device(rd, rd->ibdev, RDT_EV_DEVICE_STATE,
					READ_ONCE(rd->nr_wrapped), NULL);
	mutex_unlock(&rdt_dev_mutex);
}

/* Only after every wrapper has returned for good (see main.c exit). */
void rdt_dev_free_all(void)
{
	struct rdt_dev *rd, *tmp;

	mutex_lock(&rdt_dev_mutex);
	WRITE_ONCE(rdt_dev_last, &rdt_dev_none);
	list_for_each_entry_safe(rd, tmp, &rdt_dev_list, lnode) {
		hash_del_rcu(&rd->hnode);
		list_del(&rd->lnode);
		xa_destroy(&rd->qp_state);
		kfree(rd);
	}
	mutex_unlock(&rdt_dev_mutex);
}
