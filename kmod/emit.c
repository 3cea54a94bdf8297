// SPDX-License-Identifier: GPL-2.0
/*
 * rdmatrace: the one emit path.
 *
 * The data-path wrappers reserve their record in this CPU's relay buffer
 * (rdt_reserve(): filter, announce the task's comm when the task on this
 * CPU changes, stamp the header) and encode the body in place; the
 * control path builds a record on its stack and hands it to rdt_emit().
 * Drops are counted the blktrace way: relay calls subbuf_start once per
 * refused event while the buffer is full, so the count is exact, and every
 * sub-buffer starts with an RDT_EV_SUBBUF record carrying the running loss
 * count, so loss is visible in the stream itself.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/percpu.h>
#include <linux/relay.h>
#include <linux/sched.h>
#include <linux/security.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>

#include "rdt.h"
#include "slot.h"

DEFINE_SRCU(rdt_srcu);
struct rdt_trace __rcu *rdt_cur_trace;
DEFINE_PER_CPU(unsigned long, rdt_fast_cpu);
EXPORT_PER_CPU_IF_RDT_KUNIT(rdt_fast_cpu);
struct rdt_filter rdt_cur_filter = {
	.evmask	= RDT_EVMASK_ALL,
	.pid	= 0,
	.dev	= RDT_NO_DEV,
};
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_cur_filter);

bool rdt_enabled;
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_enabled);
u32 rdt_lean;
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_lean);
static DEFINE_SPINLOCK(rdt_lean_lock);

/*
 * Each input is written before this runs, and the mask is computed from
 * all of them under one lock, so the last update after any change sees
 * every change (the inputs are written under different locks: the
 * control files' mutex, the tracepoints' own).
 */
void rdt_lean_update(void)
{
	unsigned long flags;
	u32 m = 0;
	u64 ev;

	spin_lock_irqsave(&rdt_lean_lock, flags);
	if (READ_ONCE(rdt_enabled))
		m |= RDT_LEAN_ON;
	if (READ_ONCE(rdt_enabled) && !READ_ONCE(rdt_cur_filter.pid) &&
	    READ_ONCE(rdt_cur_filter.dev) == RDT_NO_DEV &&
	    !READ_ONCE(rdt_tp_users)) {
		ev = READ_ONCE(rdt_cur_filter.evmask);
		bool raw = READ_ONCE(rdt_clk_tsc);

		if (ev & RDT_EVMASK(RDT_EV_POST_SEND))
			m |= raw ? RDT_LEAN_SEND : RDT_LEAN_SEND_KT;
		if (ev & RDT_EVMASK(RDT_EV_POST_RECV))
			m |= raw ? RDT_LEAN_RECV : RDT_LEAN_RECV_KT;
		if (ev & RDT_EVMASK(RDT_EV_POLL_CQ_WC))
			m |= RDT_LEAN_WC;
		if (ev & RDT_EVMASK(RDT_EV_POLL_CQ))
			m |= RDT_LEAN_POLL_SUM;
		m |= raw ? RDT_LEAN_POLL : RDT_LEAN_POLL_KT;
	}
	WRITE_ONCE(rdt_lean, m);
	spin_unlock_irqrestore(&rdt_lean_lock, flags);
}
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_lean_update);

/*
 * Tracing on or off.  rdt_enabled is a plain flag that the emit path and
 * the data path's wrappers read, not a static key: flipping a key rewrites
 * the wrappers' code while user and kernel posts run through it, which
 * oopsed (issue 40; tp_fire.h).  The wrappers are in device->ops only
 * while something traces (wrap.c), so with tracing off a verb never loads
 * the flag.  On: the wrappers go in before the flag is set, so the first
 * post already sees it; off: the flag goes first, then the wrappers leave.
 * Under rdt_ctl_mutex, or at load before any wrapper is installed.
 */
void rdt_set_enabled(bool on)
{
	bool was = READ_ONCE(rdt_enabled);

	if (on) {
		if (!was)
			rdt_hot_get();
		/* The clock may have changed while tracing was off. */
		rdt_fast_forget(NULL);
		WRITE_ONCE(rdt_enabled, true);
	} else {
		WRITE_ONCE(rdt_enabled, false);
		if (was)
			rdt_hot_put();
	}
	rdt_lean_update();
}

void rdt_fill_hdr(struct rdt_hdr *h, u16 type, u16 size, u32 dev, u64 ts,
		  u32 cpu, u32 pid, u32 tid)
{
	__rdt_fill_hdr(h, type, size, dev, ts, cpu, pid, tid);
}
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_fill_hdr);

/*
 * Device events pass the pid filter (they run in kworkers); bookkeeping
 * types are never filtered.  Outside task context there is no meaningful
 * pid, so a pid filter refuses the event.
 */
bool rdt_filter_pass(const struct rdt_filter *f, u16 type, u32 dev, u32 pid,
		     bool task_ctx)
{
	bool devev;

	if (type < RDT_KMOD_TYPE_FIRST || type > RDT_KMOD_TYPE_LAST)
		return true;
	if (!(READ_ONCE(f->evmask) & RDT_EVMASK(type)))
		return false;
	if (READ_ONCE(f->dev) != RDT_NO_DEV && dev != READ_ONCE(f->dev))
		return false;
	devev = type == RDT_EV_DEVICE_ADD || type == RDT_EV_DEVICE_REMOVE ||
		type == RDT_EV_DEVICE_RENAME || type == RDT_EV_DEVICE_STATE;
	if (READ_ONCE(f->pid) && !devev &&
	    (!task_ctx || pid != READ_ONCE(f->pid)))
		return false;
	return true;
}
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_filter_pass);

/* ---- relay callbacks: they sit with the drop accounting ---------------- */

/* The RDT_EV_COMM record of @s's task at @comm. */
static void rdt_comm_fill(struct rdt_ev_comm *comm, const struct rdt_slot *s,
			  u64 ts, u32 cpu)
{
	__rdt_fill_hdr(&comm->hdr, RDT_EV_COMM, sizeof(*comm), RDT_NO_DEV, ts,
		       cpu, s->pid, s->tid);
	/* tid 0: interrupt context, whose current task is not the verb's. */
	strscpy_pad(comm->comm, s->tid ? s->comm : "", sizeof(comm->comm));
}

/*
 * A pair is the TSC read on both sides of ktime_get_ns(), its midpoint
 * kept, the narrowest of RDT_PAIR_TRIES (as librdmatrace's own pairs): a
 * vCPU stalled by its host between one TSC read and ktime_get_ns() made
 * a pair whose time was 1.3 ms late for its TSC, and the records next to
 * it as late (tests/kmod/clock on a loaded CI host, 2026-12-01).
 */
#define RDT_PAIR_TRIES	3

static void rdt_clock_pair(u64 *tsc, u64 *ns)
{
	u64 best = U64_MAX;
	int i;

	for (i = 0; i < RDT_PAIR_TRIES; i++) {
		u64 a = rdt_clk_read_tsc();
		u64 t = ktime_get_ns();
		u64 b = rdt_clk_read_tsc();

		if (b < a || b - a >= best)
			continue;
		best = b - a;
		*tsc = a + (b - a) / 2;
		*ns = t;
	}
	if (best == U64_MAX) {	/* the TSC stepped back each time */
		*tsc = rdt_clk_read_tsc();
		*ns = ktime_get_ns();
	}
}

/*
 * An RDT_EV_CLOCK record at @ev: a pair read now, stamped @ts (the record
 * it comes before: the stream stays in stamp order), and the raw stamp
 * from which this CPU owes the next.
 */
static void rdt_clock_fill(struct rdt_cpu *c, struct rdt_ev_clock *ev,
			   u64 ts, u32 cpu)
{
	u64 tsc, ns;

	__rdt_fill_hdr(&ev->hdr, RDT_EV_CLOCK, sizeof(*ev), RDT_NO_DEV, ts,
		       cpu, 0, 0);
	rdt_clock_pair(&tsc, &ns);
	ev->tsc = tsc;
	ev->mono_ns = ns;
	ev->tsc_khz = rdt_clk_khz();
	ev->pad = 0;
	c->clock_due = (ev->tsc | RDT_TS_RAW) + rdt_clk_pair_every();
}

/*
 * A sub-buffer's first records after its header, so that it reads on its
 * own (<rdmatrace/wire.h>, the relay form): a clock pair (raw stamps
 * only), and the COMM record of the task whose reservation switched to it
 * (c->who, set by rdt_slot_open() before every reservation that can
 * switch; NULL at relay_open()).  Returns their size.
 */
static size_t rdt_subbuf_intro(struct rdt_cpu *c, void *at, u64 ts, u32 cpu)
{
	const struct rdt_slot *who = c->who;
	struct rdt_ev_comm *comm;
	size_t len = 0;

	if (ts & RDT_TS_RAW) {
		rdt_clock_fill(c, at, ts, cpu);
		len += sizeof(struct rdt_ev_clock);
	}
	/*
	 * No task is what a sub-buffer starts with: interrupt context
	 * needs no COMM; at relay_open() the first record writes its own.
	 */
	c->last_tid = who ? 0 : U32_MAX;
	if (who && who->tid) {
		comm = at + len;
		rdt_comm_fill(comm, who, ts, cpu);
		c->last_tid = who->tid;
		len += sizeof(*comm);
	}
	return len;
}

/*
 * relay's read() of one CPU's buffer is not serialised against its writer.
 * Between relay_switch_subbuf() publishing the old sub-buffer's padding and
 * setting buf->data to the new one, a reader can step into the next
 * sub-buffer and take (subbuf_size - padding[next]) bytes of it: the
 * header and records of whatever it last held.  Three rules keep that from
 * costing data, and let the reader discard what it should not have seen:
 *
 * - Refuse from n_subbufs - 1 sub-buffers produced and unread, not
 *   relay_buf_full()'s n_subbufs.  relay counts a switch in
 *   subbufs_produced, then clears buf->offset, and marks the buffer full
 *   only after we refuse, once per event dropped while full.  A read()
 *   that sees produced - consumed == n_subbufs in that window takes
 *   relay_file_read_avail()'s overwrite branch and skips the oldest unread
 *   sub-buffer: loss no counter sees.
 * - The next sub-buffer, free by the rule above, gets padding of all but
 *   one RDT_EV_SUBBUF: a reader racing the next switch reads that header
 *   (the old one, or ours when we are quicker), never old records.
 * - A sub-buffer never used gets an RDT_SUBBUF_SEQ_UNUSED header in its
 *   place (relay zeroes the buffer, and zeroes are no record).
 *
 * The reader drops headers it has seen or whose seq is lower, and the
 * records relay gives it twice (see <rdmatrace/wire.h>).
 */
static int rdt_subbuf_start(struct rchan_buf *buf, void *subbuf,
			    RDT_SUBBUF_START_PREV)
{
	struct rdt_trace *t = buf->chan->private_data;
	struct rdt_cpu *c = per_cpu_ptr(t->cpu, buf->cpu);
	size_t n = buf->chan->n_subbufs, next;
	struct rdt_ev_subbuf *ev = subbuf;
	u64 ts;

	if (buf->subbufs_produced - buf->subbufs_consumed >= n - 1) {
		c->dropped++;
		return 0;
	}

	/*
	 * Stamped as the record whose reservation switched (its stream
	 * stays in order: the header comes before that record); the first
	 * sub-buffer of a channel, at relay_open(), has none.
	 */
	if (rdt_clk_check()) {
		/* Re-armed for ktime_get_ns(), and its lean wrappers named. */
		rdt_fast_forget(NULL);
		rdt_lean_update();
	}
	ts = c->ts ?: rdt_stamp();
	rdt_fill_hdr(&ev->hdr, RDT_EV_SUBBUF, sizeof(*ev), RDT_NO_DEV,
		     ts, buf->cpu, 0, 0);
	ev->lost_total = c->dropped;
	ev->seq = buf->subbufs_produced;
	subbuf_start_reserve(buf, sizeof(*ev) +
			     rdt_subbuf_intro(c, ev + 1, ts, buf->cpu));

	next = (buf->subbufs_produced + 1) % n;
	buf->padding[next] = buf->chan->subbuf_size - sizeof(*ev);
	if (buf->subbufs_produced + 1 < n) {
		ev = buf->start + next * buf->chan->subbuf_size;
		rdt_fill_hdr(&ev->hdr, RDT_EV_SUBBUF, sizeof(*ev), RDT_NO_DEV,
			     0, buf->cpu, 0, 0);
		ev->seq = RDT_SUBBUF_SEQ_UNUSED;
		ev->lost_total = 0;
	}
	return 1;
}

/*
 * relay removes the files in relay_close() and keeps a buffer alive only
 * for its open readers, without calling back into this module: an open
 * trace file does not pin the module, and reading it after rmmod is safe.
 */
static struct dentry *rdt_create_buf_file(const char *filename,
					  struct dentry *parent, umode_t mode,
					  struct rchan_buf *buf, int *is_global)
{
	struct dentry *d;

	if (!filename)		/* relay_open() without files: unsupported */
		return NULL;
	d = debugfs_create_file(filename, 0400, parent, buf,
				&relay_file_operations);
	return IS_ERR(d) ? NULL : d;
}

static int rdt_remove_buf_file(struct dentry *dentry)
{
	debugfs_remove(dentry);
	return 0;
}

static const struct rchan_callbacks rdt_relay_cb = {
	.subbuf_start		= rdt_subbuf_start,
	.create_buf_file	= rdt_create_buf_file,
	.remove_buf_file	= rdt_remove_buf_file,
};

/*
 * Open a channel of n_subbufs sub-buffers of subbuf_size bytes per CPU,
 * with its files trace<cpu> in parent.
 */
struct rdt_trace *rdt_trace_open(struct dentry *parent, size_t subbuf_size,
				 size_t n_subbufs)
{
	struct rdt_trace *t;
	int cpu;

	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		goto fail;
	t->cpu = alloc_percpu(struct rdt_cpu);
	if (!t->cpu)
		goto fail_free;
	for_each_possible_cpu(cpu)
		per_cpu_ptr(t->cpu, cpu)->last_tid = U32_MAX;
	t->subbuf_size = subbuf_size;
	t->n_subbufs = n_subbufs;

	t->chan = relay_open("trace", parent, subbuf_size, n_subbufs,
			     &rdt_relay_cb, t);
	if (t->chan)
		return t;
	free_percpu(t->cpu);
fail_free:
	kfree(t);
fail:
	/* Said here: enable's write fails with no other word of why. */
	if (security_locked_down(LOCKDOWN_DEBUGFS)) {
		pr_err("debugfs refuses relay files under kernel lockdown (Secure Boot?): cannot trace\n");
		return ERR_PTR(-EPERM);
	}
	pr_err("cannot open relay channel (%zu x %zu bytes per CPU)\n",
	       n_subbufs, subbuf_size);
	return ERR_PTR(-ENOMEM);
}
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_trace_open);

/*
 * No CPU's records take the fast path into @t (NULL: into any trace) any
 * more, once the writers that already read rdt_fast_cpu are gone (a grace
 * period: they run with interrupts off).  The general path arms it again
 * (rdt_reserve_as()).
 */
void rdt_fast_forget(const struct rdt_trace *t)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		unsigned long *fc = per_cpu_ptr(&rdt_fast_cpu, cpu);

		if (!t || (READ_ONCE(*fc) & ~RDT_FAST_RAW) ==
			  (unsigned long)per_cpu_ptr(t->cpu, cpu))
			WRITE_ONCE(*fc, 0);
	}
}
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_fast_forget);

/*
 * @t is no longer rdt_cur_trace.  The first grace period ends every
 * writer that found it there, and so could still arm rdt_fast_cpu into
 * it; the second, every writer that found it through rdt_fast_cpu.
 */
void rdt_trace_close(struct rdt_trace *t)
{
	if (!t)
		return;
	synchronize_rcu();
	rdt_fast_forget(t);
	synchronize_rcu();
	relay_close(t->chan);
	free_percpu(t->cpu);
	kfree(t);
}
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_trace_close);

u64 rdt_trace_dropped(struct rdt_trace *t, int cpu)
{
	return READ_ONCE(per_cpu_ptr(t->cpu, cpu)->dropped);
}
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_trace_dropped);

/*
 * The COMM record of a task new to this CPU (slot.h's rdt_slot_open()),
 * before its first record: interrupts off.  Out of line: the data path
 * pays for it only when the CPU's task changed.
 */
bool rdt_slot_comm(struct rdt_trace *t, struct rdt_slot *s, u64 ts, u32 cpu)
{
	struct rdt_ev_comm *comm = rdt_slot_get(t, s, sizeof(*comm));

	if (!comm)
		return false;
	rdt_comm_fill(comm, s, ts, cpu);
	rdt_slot_publish(s);
	this_cpu_ptr(t->cpu)->last_tid = s->tid;
	return true;
}

/*
 * This CPU's clock pair, when it is due (slot.h's rdt_slot_open()): the
 * reader interpolates raw stamps between pairs, and one a second keeps
 * what it must take on trust (the TSC's rate against CLOCK_MONOTONIC
 * holding steady) to a second.  Stamps of ktime_get_ns() need none.
 */
bool rdt_slot_clock(struct rdt_trace *t, struct rdt_slot *s, u64 ts)
{
	struct rdt_cpu *c = this_cpu_ptr(t->cpu);
	struct rdt_ev_clock *ev;

	if (!(ts & RDT_TS_RAW)) {
		c->clock_due = U64_MAX;
		return true;
	}
	ev = rdt_slot_get(t, s, sizeof(*ev));
	if (!ev)
		return false;
	rdt_clock_fill(c, ev, ts, smp_processor_id());
	rdt_slot_publish(s);
	return true;
}

/*
 * Copy rec's body into a record stamped in this CPU's buffer.  Returns 0
 * or -ENOSPC when the buffer was full.
 */
int rdt_trace_write(struct rdt_trace *t, void *rec, u16 type, u16 size,
		    u32 dev, u64 ts)
{
	bool task = in_task();
	struct rdt_slot s = {
		.task = task,
		.pid = task ? task_tgid_nr(current) : 0,
		.tid = task ? task_pid_nr(current) : 0,
		.comm = current->comm,
	};
	struct rdt_hdr *h;

	local_irq_save(s.flags);
	h = rdt_slot_open(t, &s, type, size, dev, ts);
	if (h) {
		memcpy(h + 1, (struct rdt_hdr *)rec + 1, size - sizeof(*h));
		rdt_slot_publish(&s);
	}
	local_irq_restore(s.flags);
	return h ? 0 : -ENOSPC;
}
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_trace_write);

/*
 * The control path: a record built on the stack, copied.  A verb's record
 * (dur_off, the offset of its dur_ns; 0 for none) is written after its
 * driver returned, possibly on another CPU than the one it entered on:
 * stamped now like every record, with the time since start in dur_ns.
 */
void rdt_emit(void *rec, u16 type, u16 size, u32 dev, u64 start,
	      u16 dur_off)
{
	struct rdt_slot s;
	struct rdt_hdr *h;
	u64 dur;

	if (!READ_ONCE(rdt_enabled))
		return;
	h = rdt_reserve(&s, type, size, dev);
	if (!h)
		return;
	memcpy(h + 1, (struct rdt_hdr *)rec + 1, size - sizeof(*h));
	if (dur_off) {
		dur = rdt_slot_dur(&s, start);
		memcpy((u8 *)h + dur_off, &dur, sizeof(dur));
	}
	rdt_commit(&s);
}

/*
 * A complete record (dur_ns included) written for a task that is not the
 * current one: a creation emitted once its id is known, from a work item
 * or another task's verb (restrack.c).  Its header, the pid filter and
 * the COMM record before it name that task, as if it had written it.
 */
void rdt_emit_as(const void *rec, u16 type, u16 size, u32 dev,
		 const struct rdt_who *who)
{
	struct rdt_slot s = {
		.task = who->task,
		.pid = who->pid,
		.tid = who->tid,
		.comm = who->comm,
	};
	struct rdt_hdr *h;

	if (!READ_ONCE(rdt_enabled))
		return;
	h = rdt_reserve_as(&s, type, size, dev);
	if (!h)
		return;
	memcpy(h + 1, (const struct rdt_hdr *)rec + 1, size - sizeof(*h));
	rdt_commit(&s);
}
