/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmatrace: a record's slot in this CPU's relay buffer, reserved inline.
 *
 * Each data-path wrapper reserves one slot per record.  As calls into
 * emit.c that was a frame, the arguments moved into struct rdt_slot and
 * read back, and the return: about a quarter of a reservation
 * (bench/NOTES.md, "Where a wrapped verb's instructions go").  Inline, the
 * header's constant fields are known at each site and its stores merge.
 * What is rare stays out of line in emit.c: the pid and device filter,
 * the COMM record of a task new to this CPU, and relay's switch to the
 * next sub-buffer.
 *
 * The protocol (a slot section with interrupts off from the reservation
 * to rdt_commit(), an offset published only after its record) is emit.c's,
 * described there.  A wrapper's struct rdt_slot is __uninitialized: every
 * field is written here before it is read (buf and size when a slot is
 * taken, and only then is it published), and Debian's kernels would
 * otherwise zero its 64 bytes on every call (CONFIG_INIT_STACK_ALL_ZERO,
 * a "rep stos").
 */
#ifndef _RDT_SLOT_H
#define _RDT_SLOT_H

#include <linux/percpu.h>
#include <linux/relay.h>
#include <linux/sched.h>
#include <linux/timekeeping.h>

#include "clock.h"
#include "rdt.h"

/* emit.c: a COMM record for s's task, false when the buffer was full. */
bool rdt_slot_comm(struct rdt_trace *t, struct rdt_slot *s, u64 ts, u32 cpu);
/* emit.c: this CPU's RDT_EV_CLOCK record, false when the buffer was full. */
bool rdt_slot_clock(struct rdt_trace *t, struct rdt_slot *s, u64 ts);

/*
 * A header in the relay form (<rdmatrace/wire.h>): pid, tid and cpu left
 * as the slot held them, the stream says them.
 */
static __always_inline void __rdt_form_hdr(struct rdt_hdr *h, u16 type,
					   u16 size, u32 dev, u64 ts)
{
#ifdef __LITTLE_ENDIAN
	/*
	 * magic, version, source, type and size as one word: in a poll's
	 * loop of completions the compiler stored them one by one, from
	 * registers it then had to keep (bench/NOTES.md).
	 */
	static_assert(offsetof(struct rdt_hdr, size) == 6 &&
		      sizeof(h->size) == 2);
	*(u64 *)h = RDT_REC_MAGIC | (u64)RDT_RELAY_FORM << 16 |
		    (u64)RDT_SRC_KMOD << 24 | (u64)type << 32 |
		    (u64)size << 48;
#else
	h->magic = RDT_REC_MAGIC;
	h->version = RDT_RELAY_FORM;
	h->source = RDT_SRC_KMOD;
	h->type = type;
	h->size = size;
#endif
	h->ts_ns = ts;
	h->dev = dev;
}

static __always_inline void __rdt_fill_hdr(struct rdt_hdr *h, u16 type,
					   u16 size, u32 dev, u64 ts, u32 cpu,
					   u32 pid, u32 tid)
{
	__rdt_form_hdr(h, type, size, dev, ts);
	h->pid = pid;
	h->tid = tid;
	h->cpu = cpu;
}

/*
 * A slot of @size bytes in this CPU's buffer, interrupts off.  relay's
 * read() of the current sub-buffer returns everything up to buf->offset,
 * so the offset moves only in rdt_slot_publish() (rdt.h), after the record
 * is written: a reader on another CPU never sees a reserved record that is
 * not written yet (rdmatrace-dump -f failed on "bad record magic" under
 * load).
 */
static __always_inline void *rdt_slot_get(struct rdt_trace *t,
					  struct rdt_slot *s, u16 size)
{
	struct rchan_buf *buf = *this_cpu_ptr(t->chan->buf);

	if (unlikely(buf->offset + size > t->chan->subbuf_size) &&
	    !relay_switch_subbuf(buf, size))
		return NULL;
	s->buf = buf;
	s->size = size;
	return buf->data + buf->offset;
}

/*
 * Interrupts off: an RDT_EV_COMM record first when this CPU's task
 * changed (tid 0: interrupt context, whose records name no task), then a
 * slot for the record.  Its header names s's task and this CPU too, which
 * the relay form does not need (<rdmatrace/wire.h>) but costs nothing
 * here, off the common case.  NULL when the buffer is full (the drop is
 * counted by emit.c's rdt_subbuf_start()).
 */
static __always_inline struct rdt_hdr *
rdt_slot_open(struct rdt_trace *t, struct rdt_slot *s, u16 type, u16 size,
	      u32 dev, u64 ts)
{
	struct rdt_cpu *c = this_cpu_ptr(t->cpu);
	u32 cpu = smp_processor_id();
	struct rdt_hdr *h;

	/* For the sub-buffer's first records, if this reservation switches. */
	c->ts = ts;
	c->who = s;
	if (unlikely(c->last_tid != s->tid) &&
	    !rdt_slot_comm(t, s, ts, cpu))
		return NULL;
	if (unlikely(ts >= c->clock_due) && !rdt_slot_clock(t, s, ts))
		return NULL;
	h = rdt_slot_get(t, s, size);
	if (h)
		__rdt_fill_hdr(h, type, size, dev, ts, cpu, s->pid, s->tid);
	return h;
}

/*
 * This CPU's records may take the fast path (rdt_fast_cpu, rdt.h): @t is
 * the current trace (read with interrupts off, as now), and @raw says
 * whether its stamps are.
 */
static __always_inline void rdt_fast_arm(struct rdt_trace *t,
					 struct rchan_buf *buf, bool raw)
{
	struct rdt_cpu *c = this_cpu_ptr(t->cpu);

	c->buf = buf;
	c->subbuf_size = t->chan->subbuf_size;
	this_cpu_write(rdt_fast_cpu,
		       (unsigned long)c | (raw ? RDT_FAST_RAW : 0));
}

/*
 * The data path writes records in place: no copy of a stack record.
 * Called after rdt_want() (so the event mask is checked): with no pid or
 * device filter set, nothing else is left to filter.
 *
 * The trace is looked up with interrupts off, and every writer of it
 * stays so until rdt_commit(): a disabled-interrupts region is an RCU
 * read-side section, so synchronize_rcu() waits for every writer before
 * the channel is closed (emit.c's rdt_trace_close(), which also retires
 * the fast path's way in, rdt_fast_cpu).  The data path's wrappers need
 * no SRCU section of their own for it.
 */
static __always_inline void *
rdt_reserve_as(struct rdt_slot *s, u16 type, u16 size, u32 dev)
{
	struct rdt_hdr *h;

	if (unlikely(rdt_filtered()) &&
	    !rdt_filter_pass(&rdt_cur_filter, type, dev, s->pid, s->task))
		return NULL;
	s->dev = dev;
	local_irq_save(s->flags);
	s->t = rcu_dereference_sched(rdt_cur_trace);
	if (unlikely(!s->t))
		goto none;
	/*
	 * Stamped here, on the CPU whose buffer takes the record and with
	 * interrupts off until it is published: no other record of this
	 * CPU's stream can come between the stamp and the slot, so the
	 * stream is in time order (the reader merges the CPUs on it).
	 */
	s->ts = rdt_stamp();
	h = rdt_slot_open(s->t, s, type, size, dev, s->ts);
	if (h) {
		rdt_fast_arm(s->t, s->buf, s->ts & RDT_TS_RAW);
		return h;
	}
none:
	local_irq_restore(s->flags);
	return NULL;
}

/* The current task's record: its header, or NULL (dropped or refused). */
static __always_inline void *rdt_reserve(struct rdt_slot *s, u16 type,
					 u16 size, u32 dev)
{
	s->task = in_task();
	s->pid = s->task ? task_tgid_nr(current) : 0;
	s->tid = s->task ? task_pid_nr(current) : 0;
	s->comm = current->comm;
	return rdt_reserve_as(s, type, size, dev);
}

/*
 * The common case, written without the general path's cases: records of
 * one call that fit in this CPU's current sub-buffer, and a sub-buffer
 * that already names the task (its COMM record written; tid 0 for
 * interrupt context).  The header in the relay form: no task, no CPU, a
 * raw stamp (<rdmatrace/wire.h>).  The caller has
 * found no pid or device filter set (rdt_filtered(), or rdt_lean), and
 * this CPU owes no clock pair.  Nothing here calls out of line, so the
 * wrapper keeps its few values in registers: the
 * general path's out-of-line calls take the struct rdt_slot's address,
 * which kept every field of it in memory (bench/NOTES.md).  NULL: nothing
 * was written and interrupts are as they were; the caller then takes the
 * general path (rdt_reserve()), which handles every case, this one too,
 * and arms this CPU's fast path again (rdt_fast_cpu, rdt.h): unarmed, the
 * stamps are not raw or the trace is not this CPU's to reach this way.
 * The protocol is the general path's: interrupts off from the stamp to
 * the publication of the offset, after the records.
 */
struct rdt_fast {
	struct rchan_buf	*buf;
	void			*at;	/* the first record's header */
	size_t			end;	/* buf->offset after the records */
	unsigned long		flags;
	u64			ts;
};

/*
 * The slot is f->at.  A bool, not the pointer: the callers tested the
 * pointer for NULL again, which this never returns on success.
 */
static __always_inline bool __rdt_fast_open(struct rdt_fast *f, size_t total,
					    struct rdt_cpu *c, u32 tid,
					    bool raw)
{
	struct rchan_buf *buf;

	if (unlikely(c->last_tid != tid))
		return false;
	buf = c->buf;
	f->end = buf->offset + total;
	if (unlikely(f->end > c->subbuf_size))
		return false;
	f->buf = buf;
	if (raw) {
		f->ts = rdt_clk_read_tsc() | RDT_TS_RAW;
		/* This CPU's clock pair is due: the general path writes it. */
		if (unlikely(f->ts >= c->clock_due))
			return false;
	} else {
		f->ts = ktime_get_ns();
	}
	f->at = buf->data + buf->offset;
	return true;
}

/*
 * @raw: a raw stamp, where rdt_fast_cpu is tagged RDT_FAST_RAW; else
 * ktime_get_ns(), where it is not.  The lean wrappers are built once for
 * each (wrap.c), and rdt_lean names the clock's, so that the common case
 * tests its tag where it tested for NULL, and nothing more.
 */
static __always_inline bool rdt_fast_open(struct rdt_fast *f, size_t total,
					  bool raw)
{
	u32 tid = likely(in_task()) ? task_pid_nr(current) : 0;
	unsigned long p;

	local_irq_save(f->flags);
	p = this_cpu_read(rdt_fast_cpu);
	if (raw ? likely(p & RDT_FAST_RAW) : likely(p && !(p & RDT_FAST_RAW)))
		/* p - RDT_FAST_RAW: into the fields' offsets, no "and" */
		if (__rdt_fast_open(f, total, (struct rdt_cpu *)
				    (raw ? p - RDT_FAST_RAW : p), tid, raw))
			return true;
	local_irq_restore(f->flags);
	return false;
}

/* The header of a record in the area rdt_fast_open() returned. */
static __always_inline void rdt_fast_hdr(const struct rdt_fast *f, void *h,
					 u16 type, u16 size, u32 dev)
{
	__rdt_form_hdr(h, type, size, dev, f->ts);
}

/* One record of @size at f->at: rdt_fast_open() and its header. */
static __always_inline bool rdt_fast_one(struct rdt_fast *f, u16 type,
					 u16 size, u32 dev, bool raw)
{
	if (!rdt_fast_open(f, size, raw))
		return false;
	rdt_fast_hdr(f, f->at, type, size, dev);
	return true;
}

/*
 * Publish the records (rdt_buf_publish(): up to f->end, computed before
 * their stores, which the compiler could not move buf->offset's load
 * across); interrupts come back on.
 */
static __always_inline void rdt_fast_commit(struct rdt_fast *f)
{
	smp_wmb();	/* the records before the offset that publishes them */
	WRITE_ONCE(f->buf->offset, f->end);
	local_irq_restore(f->flags);
}

/*
 * Publish the record reserved last and reserve the next one of the same
 * call (a poll's completions and its summary, a post's WRs), in the same
 * interrupts-off section: same stamp, task and device, no second filter
 * or trace lookup.  NULL when the buffer is full (a counted drop); the
 * section is closed then.
 */
static __always_inline void *rdt_reserve_next(struct rdt_slot *s, u16 type,
					      u16 size)
{
	struct rdt_hdr *h;

	rdt_slot_publish(s);
	h = rdt_slot_open(s->t, s, type, size, s->dev, s->ts);
	if (!h)
		local_irq_restore(s->flags);
	return h;
}

/* The first record of a call, or the next one while a slot is open. */
static __always_inline void *rdt_reserve_more(struct rdt_slot *s, bool open,
					      u16 type, u16 size, u32 dev)
{
	return open ? rdt_reserve_next(s, type, size) :
		      rdt_reserve(s, type, size, dev);
}

#endif /* _RDT_SLOT_H */
