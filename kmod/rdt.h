/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmatrace: internal declarations shared by the module's files and by the
 * KUnit suites in tests/kunit/.
 *
 *   main.c     module parameters, init/exit, the ib_client
 *   clock.c    the data path clock: the raw TSC or ktime_get_ns() (clock.h)
 *   wrap.c     the ops table, wrap/unwrap, per-device contexts, the wrappers
 *   emit.c     the one emit path: filter, header, relay, drop accounting
 *   encode.c   verb arguments -> record bodies (pure functions; the data
 *              path's inline in encode.h)
 *   slot.h     the data path's reservation of a record, inline
 *   debugfs.c  control files
 *   trace.c    the tracepoints of rdmatrace_trace.h
 */
#ifndef _RDT_H
#define _RDT_H

#include <linux/types.h>
#include <linux/irqflags.h>
#include <linux/list.h>
#include <linux/relay.h>
#include <linux/sched.h>
#include <linux/srcu.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <rdma/ib_verbs.h>

#include "clock.h"
#include "compat.h"
#include <rdmatrace/wire.h>

#define RDT_VERSION		"0.1.0"

/* The type of a device's ops table (not const: we write device->ops). */
#define rdt_ops_t		typeof_member(struct ib_device, ops)

/* Geometry limits of the relay channel (per CPU). */
#define RDT_SUBBUF_MIN		4096UL
#define RDT_SUBBUF_MAX		(16UL << 20)
#define RDT_NSUBBUF_MIN		2UL
#define RDT_NSUBBUF_MAX		1024UL

/*
 * Internals are exported to rdmatrace_test.ko only in kernels that have
 * KUnit; elsewhere the macro only references its argument.
 */
#if IS_ENABLED(CONFIG_KUNIT)
#define EXPORT_SYMBOL_IF_RDT_KUNIT(sym)	EXPORT_SYMBOL_NS_GPL(sym, RDT_KUNIT_NS)
/* A per-CPU variable: there is no namespaced export of one. */
#define EXPORT_PER_CPU_IF_RDT_KUNIT(sym) EXPORT_PER_CPU_SYMBOL_GPL(sym)
#else
#define EXPORT_SYMBOL_IF_RDT_KUNIT(sym)	__ADDRESSABLE(sym)
#define EXPORT_PER_CPU_IF_RDT_KUNIT(sym)
#endif

/* ---- filter (emit.c) ------------------------------------------------- */

struct rdt_filter {
	u64	evmask;		/* RDT_EVMASK() bits of kmod types */
	u32	pid;		/* thread group id, 0: any */
	u32	dev;		/* device index, RDT_NO_DEV: any */
};

bool rdt_filter_pass(const struct rdt_filter *f, u16 type, u32 dev, u32 pid,
		     bool task_ctx);

/* ---- relay channel (emit.c) ------------------------------------------- */

struct rdt_slot;

struct rdt_cpu {
	u64	dropped;	/* events refused because the buffer was full */
	u64	ts;		/* stamp of the record being reserved */
	/*
	 * A raw stamp from which this CPU writes its next RDT_EV_CLOCK
	 * (U64_MAX: stamps are not raw); 0: before its first record.
	 */
	u64	clock_due;
	/*
	 * The record being reserved: its task, for the COMM record of a
	 * sub-buffer its reservation starts (NULL: none, at relay_open()).
	 */
	const struct rdt_slot *who;
	u32	last_tid;	/* task whose COMM this sub-buffer carries */
	u32	pad;
	/*
	 * For slot.h's rdt_fast_open(), which reaches this struct through
	 * rdt_fast_cpu, not through the trace: this CPU's relay buffer and
	 * its sub-buffers' size, set when the general path arms it.
	 */
	struct rchan_buf *buf;
	size_t	subbuf_size;
};

/*
 * This CPU's struct rdt_cpu in the current trace, while its records may
 * take the fast path (slot.h's rdt_fast_open()), tagged RDT_FAST_RAW when
 * its stamps are raw: the general path has written here since tracing was
 * last switched on.  0 otherwise.  Armed by rdt_reserve_as() with
 * interrupts off; cleared for every CPU when the TSC is taken away, when
 * tracing is switched on, and before the trace is freed (emit.c's
 * rdt_fast_forget()).  One per-CPU load then stands for the trace's
 * lookup, its per-CPU area and the relay buffer's, and its tag for the
 * clock mode's test (bench/NOTES.md).
 */
#define RDT_FAST_RAW	1UL
static_assert(__alignof__(struct rdt_cpu) > RDT_FAST_RAW);
DECLARE_PER_CPU(unsigned long, rdt_fast_cpu);

struct rdt_trace {
	struct rchan		*chan;
	size_t			subbuf_size;
	size_t			n_subbufs;
	struct rdt_cpu __percpu	*cpu;
};

struct rdt_trace *rdt_trace_open(struct dentry *parent, size_t subbuf_size,
				 size_t n_subbufs);
void rdt_trace_close(struct rdt_trace *t);
void rdt_fast_forget(const struct rdt_trace *t);
u64 rdt_trace_dropped(struct rdt_trace *t, int cpu);
int rdt_trace_write(struct rdt_trace *t, void *rec, u16 type, u16 size,
		    u32 dev, u64 ts);
void rdt_fill_hdr(struct rdt_hdr *h, u16 type, u16 size, u32 dev, u64 ts,
		  u32 cpu, u32 pid, u32 tid);

/*
 * Global state used by every wrapper, set up by main.c.  rdt_srcu covers
 * the control path's wrappers (their originals sleep); rdt_cur_trace is
 * read with interrupts off (rdt_reserve()).
 */
extern struct srcu_struct rdt_srcu;
extern struct rdt_trace __rcu *rdt_cur_trace;
extern struct rdt_filter rdt_cur_filter;
extern bool rdt_enabled;
void rdt_set_enabled(bool on);

/*
 * The data path's verbs whose lean wrapper may run (wrap.c): tracing on,
 * their event in the mask, no pid or device filter, and none of the
 * data path's tracepoints probed.  One load and a test then stand for
 * all of those; anything else takes the full wrapper.  Each verb's bit
 * names the wrapper for the clock in use (raw stamps, or _KT for
 * ktime_get_ns()).  RDT_LEAN_ON is
 * rdt_enabled itself, so that the wrappers' entry loads one word for
 * both.  Recomputed by rdt_lean_update() after any of them changes.
 */
#define RDT_LEAN_ON		BIT(31)	/* rdt_enabled: any other bit too */
#define RDT_LEAN_SEND		BIT(0)
#define RDT_LEAN_RECV		BIT(1)
#define RDT_LEAN_POLL		BIT(2)
/* A lean poll's records: its completions, its summary (emit.c). */
#define RDT_LEAN_WC		BIT(3)
#define RDT_LEAN_POLL_SUM	BIT(4)
/* The lean wrappers for ktime_get_ns() stamps, in the bits' place. */
#define RDT_LEAN_SEND_KT	BIT(5)
#define RDT_LEAN_RECV_KT	BIT(6)
#define RDT_LEAN_POLL_KT	BIT(7)
extern u32 rdt_lean;
extern int rdt_tp_users;	/* data-path tracepoints probed (wrap.c) */
void rdt_lean_update(void);

/* A pid or device filter is set: records go through rdt_filter_pass(). */
static inline bool rdt_filtered(void)
{
	return READ_ONCE(rdt_cur_filter.pid) ||
	       READ_ONCE(rdt_cur_filter.dev) != RDT_NO_DEV;
}

static inline bool rdt_want(u16 type)
{
	return READ_ONCE(rdt_enabled) &&
	       (READ_ONCE(rdt_cur_filter.evmask) & RDT_EVMASK(type));
}

/*
 * The data path's wrappers in flight, where they can sleep: on PREEMPT_RT a
 * driver's spinlock_t is a sleeping lock, and RCU Tasks counts a task
 * blocked on one as quiescent, so module exit counts them instead
 * (rdt_dp_wait(), wrap.c).  Elsewhere these ops never sleep: nothing to
 * count, and the wrappers stay as they were.
 */
#ifdef CONFIG_PREEMPT_RT
DECLARE_PER_CPU(long, rdt_dp_inflight);
static __always_inline void rdt_dp_enter(void)
{
	this_cpu_inc(rdt_dp_inflight);
}

static __always_inline void rdt_dp_exit(void)
{
	this_cpu_dec(rdt_dp_inflight);
}
#else
static __always_inline void rdt_dp_enter(void) { }
static __always_inline void rdt_dp_exit(void) { }
#endif
void rdt_dp_wait(void);

/* Other modules' wrappers over ours: refuse or defer the unload (wrap.c). */
extern bool rdt_exiting;
extern unsigned int rdt_stack_check_ms;
void rdt_stack_watch_start(void);
void rdt_stack_watch_stop(void);

void rdt_emit(void *rec, u16 type, u16 size, u32 dev, u64 start,
	      u16 dur_off);

/* A task a record is written for, when that is not the current one. */
struct rdt_who {
	u32	pid;
	u32	tid;
	bool	task;			/* false: not in task context */
	char	comm[RDT_COMM_LEN];
};

static inline void rdt_who_current(struct rdt_who *w)
{
	w->task = in_task();
	w->pid = w->task ? task_tgid_nr(current) : 0;
	w->tid = w->task ? task_pid_nr(current) : 0;
	strscpy_pad(w->comm, current->comm, sizeof(w->comm));
}

void rdt_emit_as(const void *rec, u16 type, u16 size, u32 dev,
		 const struct rdt_who *who);

/*
 * A verb's record, written after its driver returned: stamped then, with
 * the time since start (the verb's entry) in its dur_ns.
 */
#define rdt_emit_verb(ev, type, dev, start)				\
	do {								\
		typeof(ev) __ev = (ev);					\
									\
		rdt_emit(__ev, type, sizeof(*__ev), dev, start,		\
			 offsetof(typeof(*__ev), dur_ns));		\
	} while (0)

/*
 * A record reserved in place: rdt_reserve(), rdt_reserve_next() for each
 * further record of the same call, then rdt_commit().
 */
struct rdt_slot {
	struct rchan_buf	*buf;
	unsigned long		flags;
	struct rdt_trace	*t;
	u64			ts;
	u32			dev;
	u32			pid;
	u32			tid;
	const char		*comm;		/* of tid, for its COMM record */
	u16			size;
	bool			task;
};

/* rdt_reserve(), rdt_reserve_next(), rdt_reserve_more(): slot.h */

/* @size more bytes of @buf, written before this, are the reader's. */
static __always_inline void rdt_buf_publish(struct rchan_buf *buf, size_t size)
{
	smp_wmb();	/* the records before the offset that publishes them */
	WRITE_ONCE(buf->offset, buf->offset + size);
}

static inline void rdt_slot_publish(struct rdt_slot *s)
{
	rdt_buf_publish(s->buf, s->size);
}

/*
 * A verb's time in its driver: from start (its entry, ktime_get_ns()) to
 * this record's stamp.  The entry may have been read on another CPU,
 * whose clock can read a little ahead of this one's: 0 then, never a
 * wrapped value.
 */
static inline u64 rdt_slot_dur(const struct rdt_slot *s, u64 start)
{
	u64 now = rdt_stamp_now_ns(s->ts);

	return now > start ? now - start : 0;
}

/* Publish a reserved record; interrupts come back on. */
static inline void rdt_commit(struct rdt_slot *s)
{
	rdt_slot_publish(s);
	local_irq_restore(s->flags);
}

/* ---- encoders (encode.c) ---------------------------------------------- */

void rdt_encode_init(void);
/* rdt_wr_id()'s per-CPU cache of hashed kernel addresses: 1 << bits slots */
#define RDT_WR_ID_CACHE_BITS	8
u64 rdt_wr_id(u64 wr_id, bool user);
u64 rdt_wr_id_hash(u64 wr_id);
void rdt_enc_send_wr(struct rdt_ev_post_send *ev, const struct ib_send_wr *wr,
		     bool user);
void rdt_enc_recv_wr(struct rdt_ev_post_recv *ev, const struct ib_recv_wr *wr,
		     bool user);
/* All but cq_id, index and poll_requested: the poll knows those. */
void rdt_enc_wc(struct rdt_ev_poll_cq_wc *ev, const struct ib_wc *wc,
		bool user);
void rdt_enc_device(struct rdt_ev_device *ev, struct ib_device *ibdev,
		    const char *name);

/* ---- ops wrapping (wrap.c) -------------------------------------------- */

struct rdt_op {
	const char	*name;
	size_t		off;		/* offsetof(struct ib_device_ops, X) */
};

extern const struct rdt_op rdt_ops[];
extern const unsigned int rdt_nr_ops;

/*
 * live: a device's ops (written); saved: the originals (written by save,
 * const afterwards); wrappers: what to install.
 */
unsigned long rdt_ops_save(rdt_ops_t *live, rdt_ops_t *saved,
			   const struct ib_device_ops *wrappers,
			   const struct rdt_op *tbl, unsigned int n);
unsigned int rdt_ops_install(rdt_ops_t *live,
			     const struct ib_device_ops *saved,
			     const struct ib_device_ops *wrappers,
			     const struct rdt_op *tbl, unsigned int n,
			     unsigned long *mask);
unsigned int rdt_ops_uninstall(rdt_ops_t *live,
			       const struct ib_device_ops *saved,
			       const struct ib_device_ops *wrappers,
			       const struct rdt_op *tbl, unsigned int n,
			       unsigned long mask, unsigned long *foreign);

struct rdt_dev;
struct rdt_dev *rdt_dev_wrap(struct ib_device *ibdev);
void rdt_dev_unwrap(struct ib_device *ibdev, struct rdt_dev *rd);
/*
 * Something traces the data path from now on / no longer: its wrappers
 * are in device->ops only between the first get and the last put.
 */
void rdt_hot_get(void);
void rdt_hot_put(void);
void rdt_dev_rename(struct ib_device *ibdev, struct rdt_dev *rd);
void rdt_dev_statedump(void);
void rdt_dev_free_all(void);

/* ---- CQ and PD ids from restrack (restrack.c) ------------------------- */

/*
 * Creations waiting for their id at one time: those of the last jiffy or
 * so.  A full table emits at once, with id 0.
 */
#define RDT_PARKED	32

struct rdt_parked {
	void		*obj;		/* the ib_cq or ib_pd; NULL: free */
	unsigned long	since;		/* jiffies at the park */
	u32		dev;
	u16		type;		/* RDT_EV_CQ_CREATE or RDT_EV_PD_ALLOC */
	struct rdt_who	who;		/* the creator */
	union {
		struct rdt_ev_cq	cq;
		struct rdt_ev_pd	pd;
	} ev;
};

bool rdt_restrack_park(void *obj, u16 type, u32 dev, const void *ev);
bool rdt_restrack_take(const void *obj, u32 dev, struct rdt_parked *p);
void rdt_restrack_exit(void);
void rdt_restrack_cq_created(struct ib_cq *cq, u32 dev, u64 entry,
			     struct rdt_ev_cq *ev);
void rdt_restrack_pd_allocated(struct ib_pd *pd, u32 dev, u64 entry,
			       struct rdt_ev_pd *ev);
void rdt_restrack_resolve(void);
void rdt_restrack_flush(const void *obj, u32 id);
void rdt_restrack_open(u32 dev);
void rdt_restrack_close(u32 dev);

/* ---- debugfs (debugfs.c) ---------------------------------------------- */

int rdt_debugfs_init(bool open_channel);
void rdt_debugfs_exit(void);
int rdt_reconfigure(size_t subbuf_size, size_t n_subbufs);
int rdt_check_geometry(size_t subbuf_size, size_t n_subbufs);

extern struct mutex rdt_ctl_mutex;
extern unsigned long rdt_param_subbuf_size;	/* main.c */
extern unsigned long rdt_param_n_subbufs;
extern struct dentry *rdt_dir;

#endif /* _RDT_H */
