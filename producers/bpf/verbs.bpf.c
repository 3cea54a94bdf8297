// SPDX-License-Identifier: GPL-2.0
/*
 * A userspace provider's data path, by uprobe: the functions a device
 * context's ops table names for post_send, post_recv, post_srq_recv,
 * poll_cq and req_notify_cq (what ibv_post_send() and friends, inline in verbs.h, call).  On
 * mlx5 and every provider that posts into mapped queues these never enter
 * the kernel; on rxe they enter it only as doorbells.  verbs_attach.c
 * finds the functions and the field offsets below (verbs.h's structures,
 * libibverbs' ABI), and fills the device table.
 *
 * WR records are written at the call's entry, one per WR, as the module
 * writes its own (the provider may complete a WR before it returns); a
 * failed call adds RDT_EV_VERBS_POST_FAIL at its return.  Completions are
 * written at poll_cq's return.  Every walk of user memory is bounded:
 * the lists by bpf_loop() (5.17), the short ones unrolled.  6.1's
 * verifier takes a loop whose head follows a helper call for a back-edge
 * it refuses, and clang puts the head there.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "rdt_emit.bpf.h"
#include "verbs_cookies.h"

/*
 * libbpf 1.1 (Debian 12) has no BPF_UPROBE: the kprobe forms read the
 * same pt_regs.
 */

char LICENSE[] SEC("license") = "GPL";

#define MAX_WR		64	/* WRs recorded per call; the rest counted */
#define MAX_SGE		16	/* SGEs summed per WR */
#define MAX_WC		64	/* completions recorded per poll */
#define NAME_MAX_LEN	64	/* IBV_SYSFS_NAME_MAX */

/* verbs.h's offsets and sizes, set by the loader before load. */
const volatile __u32 qp_context = 0;	/* ibv_qp.context */
const volatile __u32 qp_num = 52;		/* ibv_qp.qp_num */
const volatile __u32 srq_context = 0;	/* ibv_srq.context */
const volatile __u32 srq_handle = 24;	/* ibv_srq.handle */
const volatile __u32 cq_context = 0;	/* ibv_cq.context */
const volatile __u32 cq_handle = 24;	/* ibv_cq.handle */
const volatile __u32 ctx_device = 0;	/* ibv_context.device */
const volatile __u32 dev_name = 24;		/* ibv_device.name */
const volatile __u32 swr_next = 8, swr_sg = 16, swr_nsge = 24, swr_opcode = 28,
		     swr_flags = 32, swr_imm = 36, swr_raddr = 40, swr_rkey = 48;
const volatile __u32 rwr_next = 8, rwr_sg = 16, rwr_nsge = 24;
const volatile __u32 sge_size = 16, sge_len = 8;
const volatile __u32 qpx_wr_id = 64, qpx_wr_flags = 72;	/* ibv_qp_ex */
const volatile __u32 cqx_status = 132, cqx_wr_id = 136;	/* ibv_cq_ex */
const volatile __u32 wc_size = 48;
const volatile __u32 wc_status = 8, wc_opcode = 12, wc_vendor = 16, wc_len = 20,
		     wc_imm = 24, wc_qpn = 28, wc_srcqp = 32, wc_flags = 36;

/* Device name hash (FNV-1a over the NUL-terminated name) -> kernel index. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u64);
	__type(value, __u32);
} verbs_devs SEC(".maps");

/* (tgid, ibv_context address) -> kernel index: one name read a context. */
struct ctx_key {
	__u32 tgid;
	__u32 pad;
	__u64 ctx;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct ctx_key);
	__type(value, __u32);
} verbs_ctx SEC(".maps");

/*
 * A post or poll in flight on a thread: what its return needs, and the
 * state of the walks over its lists.  It lives in verbs_calls, keyed by
 * the thread, and every loop finds it there by the thread id: never on
 * the BPF stack.  7.2 gives a uprobe program whose frame reaches 64 bytes
 * (BPF_PRIV_STACK_MIN_SIZE) a per-CPU private stack, yet runs uprobe
 * programs preemptible (migrate_disable() only): two threads posting on
 * one CPU shared that stack, and a bpf_loop() callback read a context
 * pointer the other had overwritten (doc/DESIGN.md, "--verbs on 7.2").
 * Every program and callback here keeps its frame under 64 bytes
 * (tests/bpf/stack-depth.test checks the object), and per-CPU scratch
 * would be shared the same way.
 */
struct call {
	__u64 ts;
	__u64 list;		/* first WR, or the ibv_wc array */
	__u64 next;		/* the walk's next WR */
	__u64 bad;		/* bad_wr pointer, for a post */
	__u64 bad_wr;		/* what the provider wrote there */
	__u32 dev;
	__u32 id;		/* qpn, srq handle, cq handle */
	__u32 nr;		/* WRs in the list (bounded), num_entries */
	__u32 polled;		/* poll's return: completions to read */
	__u32 bad_index;	/* find_bad_wr(): where the walk stopped */
	__u16 type;		/* RDT_EV_VERBS_POST_SEND / _RECV, or WC */
	__u8 srq;
	__u8 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct call);
} verbs_calls SEC(".maps");

/* What a new call starts from: a map value, so no frame holds a struct call. */
static const struct call call_zero;

static __always_inline __u64 rd64(__u64 addr)
{
	__u64 v = 0;

	bpf_probe_read_user(&v, sizeof(v), (const void *)addr);
	return v;
}

static __always_inline __u32 rd32(__u64 addr)
{
	__u32 v = 0;

	bpf_probe_read_user(&v, sizeof(v), (const void *)addr);
	return v;
}

/*
 * The kernel's index of the device behind a context; RDT_NO_DEV if the
 * name is not one the loader saw.  Its own subprogram, with its own small
 * frame; the name (ibv_device.name, a char[64] inside the structure, so
 * all 64 bytes are readable) is hashed 8 bytes at a time, up to its NUL or
 * 63 bytes, as bpf_probe_read_user_str() into a 64-byte buffer would.
 */
static __noinline __u32 ctx_dev(__u64 ctx)
{
	struct ctx_key k = { .tgid = bpf_get_current_pid_tgid() >> 32, .ctx = ctx };
	__u64 h = 0xcbf29ce484222325ull;
	__u32 *v, dev = RDT_NO_DEV;
	bool end = false, ok = true;
	__u64 device;

	v = bpf_map_lookup_elem(&verbs_ctx, &k);
	if (v)
		return *v;
	device = rd64(ctx + ctx_device);
	if (!device)
		ok = false;
#pragma unroll
	for (int i = 0; i < NAME_MAX_LEN / 8; i++) {
		__u64 w = 0;

		if (!ok || end)
			break;
		if (bpf_probe_read_user(&w, sizeof(w),
					(const void *)(device + dev_name + i * 8))) {
			ok = false;
			break;
		}
#pragma unroll
		for (int j = 0; j < 8; j++) {
			__u8 b = w >> (8 * j);

			end |= !b || i * 8 + j == NAME_MAX_LEN - 1;
			if (!end)
				h = (h ^ b) * 0x100000001b3ull;
		}
	}
	if (ok && h != 0xcbf29ce484222325ull) {
		v = bpf_map_lookup_elem(&verbs_devs, &h);
		if (v)
			dev = *v;
	}
	bpf_map_update_elem(&verbs_ctx, &k, &dev, BPF_ANY);
	return dev;
}

static __noinline __u64 sge_total(__u64 sg, __u32 n)
{
	__u64 total = 0;

	__u64 stride = sge_size, at = sg + sge_len;

#pragma unroll
	for (int i = 0; i < MAX_SGE; i++) {
		if (i < n)
			total += rd32(at);
		at += stride;
	}
	return total;
}

/*
 * The calling thread's call, begun afresh (an entry its last call left,
 * with no return seen, is replaced); NULL, counted, if the map is full.
 */
static __always_inline struct call *call_begin(__u32 *tid)
{
	struct call *c;

	*tid = (__u32)bpf_get_current_pid_tgid();
	if (bpf_map_update_elem(&verbs_calls, tid, &call_zero, BPF_ANY))
		c = NULL;
	else
		c = bpf_map_lookup_elem(&verbs_calls, tid);
	if (!c)
		rdt_count_drop();
	return c;
}

/* At a return probe: the thread's call, begun at its entry; NULL if none. */
static __always_inline struct call *call_at_return(__u32 *tid)
{
	*tid = (__u32)bpf_get_current_pid_tgid();
	return bpf_map_lookup_elem(&verbs_calls, tid);
}

/* The call's device index and CQ handle, from the ibv_cq it is on. */
static __always_inline void call_on_cq(struct call *c, void *cq)
{
	c->dev = ctx_dev(rd64((__u64)cq + cq_context));
	c->id = rd32((__u64)cq + cq_handle);
}

static __always_inline void *verbs_reserve(__u32 size, __u16 type, __u64 ts, __u32 dev)
{
	struct rdt_hdr *h = rdt_reserve(size, type, ts, dev);

	if (h)
		h->source = RDT_SRC_VERBS;
	return h;
}

/*
 * One WR of a list, for bpf_loop(), whose context is the thread id (6.1's
 * bpf_loop() takes a pointer to the stack only): c->next is the next to
 * read.
 */
static int send_wr(__u32 i, __u32 *tid)
{
	struct call *c = bpf_map_lookup_elem(&verbs_calls, tid);
	struct rdt_ev_post_send *e;
	__u64 w;
	__u32 nsge;

	if (!c || !c->next)
		return 1;
	w = c->next;
	nsge = rd32(w + swr_nsge);
	e = verbs_reserve(sizeof(*e), RDT_EV_VERBS_POST_SEND, c->ts, c->dev);
	if (e) {
		e->wr_id = rd64(w);
		e->qpn = c->id;
		e->ret = 0;
		e->opcode = rd32(w + swr_opcode);
		e->bad = 0;
		e->send_flags = rd32(w + swr_flags);
		e->num_sge = nsge;
		e->index = i;
		e->imm = rd32(w + swr_imm);
		e->total_len = sge_total(rd64(w + swr_sg), nsge);
		/* RDMA write/read and atomics: wr.rdma / wr.atomic */
		if (e->opcode <= 6 && e->opcode != 2 && e->opcode != 3) {
			e->remote_addr = rd64(w + swr_raddr);
			e->rkey = rd32(w + swr_rkey);
		} else {
			e->remote_addr = 0;
			e->rkey = 0;
		}
		rdt_submit(e);
	}
	c->nr = i + 1;
	c->next = rd64(w + swr_next);
	return 0;
}

static int recv_wr(__u32 i, __u32 *tid)
{
	struct call *c = bpf_map_lookup_elem(&verbs_calls, tid);
	struct rdt_ev_post_recv *e;
	__u64 w;
	__u32 nsge;

	if (!c || !c->next)
		return 1;
	w = c->next;
	nsge = rd32(w + rwr_nsge);
	e = verbs_reserve(sizeof(*e), RDT_EV_VERBS_POST_RECV, c->ts, c->dev);
	if (e) {
		e->wr_id = rd64(w);
		e->total_len = sge_total(rd64(w + rwr_sg), nsge);
		e->qpn = c->srq ? 0 : c->id;
		e->srq_id = c->srq ? c->id : 0;
		e->ret = 0;
		e->num_sge = nsge;
		e->srq = c->srq;
		e->bad = 0;
		e->index = i;
		e->pad0 = 0;
		e->pad1 = 0;
		rdt_submit(e);
	}
	c->nr = i + 1;
	c->next = rd64(w + rwr_next);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(verbs_post_send, void *qp, void *wr, void *bad)
{
	__u64 ts = bpf_ktime_get_ns();
	struct call *c;
	__u32 tid;

	c = call_begin(&tid);
	if (!c)
		return 0;
	c->ts = ts;
	c->list = c->next = (__u64)wr;
	c->bad = (__u64)bad;
	c->type = RDT_EV_VERBS_POST_SEND;
	c->dev = ctx_dev(rd64((__u64)qp + qp_context));
	c->id = rd32((__u64)qp + qp_num);
	bpf_loop(MAX_WR, send_wr, &tid, 0);
	return 0;
}

static __always_inline int post_recv(void *obj, void *wr, void *bad, bool srq)
{
	__u64 ts = bpf_ktime_get_ns();
	struct call *c;
	__u32 tid;

	c = call_begin(&tid);
	if (!c)
		return 0;
	c->ts = ts;
	c->list = c->next = (__u64)wr;
	c->bad = (__u64)bad;
	c->type = RDT_EV_VERBS_POST_RECV;
	c->srq = srq;
	if (srq) {
		c->dev = ctx_dev(rd64((__u64)obj + srq_context));
		c->id = rd32((__u64)obj + srq_handle);
	} else {
		c->dev = ctx_dev(rd64((__u64)obj + qp_context));
		c->id = rd32((__u64)obj + qp_num);
	}
	bpf_loop(MAX_WR, recv_wr, &tid, 0);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(verbs_post_recv, void *qp, void *wr, void *bad)
{
	return post_recv(qp, wr, bad, false);
}

SEC("uprobe")
int BPF_KPROBE(verbs_post_srq_recv, void *srq, void *wr, void *bad)
{
	return post_recv(srq, wr, bad, true);
}

/* The list again, from its head, to the WR the provider named in *bad_wr. */
static int find_bad_wr(__u32 i, __u32 *tid)
{
	struct call *c = bpf_map_lookup_elem(&verbs_calls, tid);

	if (!c)
		return 1;
	c->bad_index = i;
	if (!c->next || c->next == c->bad_wr)
		return 1;
	c->next = rd64(c->next + (c->type == RDT_EV_VERBS_POST_SEND ?
				   swr_next : rwr_next));
	return 0;
}

/* A post's return: nothing unless it failed; then which WR it names. */
SEC("uretprobe")
int BPF_KRETPROBE(verbs_post_ret, int ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct rdt_ev_post_fail *e;
	struct call *c;

	c = bpf_map_lookup_elem(&verbs_calls, &tid);
	if (!c)
		return 0;
	if (!ret || c->type == RDT_EV_VERBS_WC) {
		bpf_map_delete_elem(&verbs_calls, &tid);
		return 0;
	}
	c->bad_wr = c->bad ? rd64(c->bad) : 0;
	c->next = c->list;
	c->bad_index = 0;
	bpf_loop(MAX_WR, find_bad_wr, &tid, 0);
	e = verbs_reserve(sizeof(*e), RDT_EV_VERBS_POST_FAIL, bpf_ktime_get_ns(), c->dev);
	if (e) {
		e->qpn = c->srq ? 0 : c->id;
		e->srq_id = c->srq ? c->id : 0;
		/* providers return an errno value; the module's records -errno */
		e->ret = ret > 0 ? -ret : ret;
		e->post_type = c->type;	/* VERBS_POST_SEND or _RECV here */
		e->nr_wr = c->nr;
		e->bad_index = c->bad_wr && c->next == c->bad_wr ?
			       c->bad_index : RDT_BAD_INDEX_UNKNOWN;
		e->srq = c->srq;
		e->pad0 = 0;
		e->pad1 = 0;
		rdt_submit(e);
	}
	bpf_map_delete_elem(&verbs_calls, &tid);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(verbs_poll_cq, void *cq, int num, void *wc)
{
	struct call *c;
	__u32 tid;

	c = call_begin(&tid);
	if (!c)
		return 0;
	c->list = (__u64)wc;
	c->type = RDT_EV_VERBS_WC;
	c->nr = num > 0 ? num : 0;
	call_on_cq(c, cq);
	return 0;
}

static int one_wc(__u32 i, __u32 *tid)
{
	struct call *c = bpf_map_lookup_elem(&verbs_calls, tid);
	struct rdt_ev_poll_cq_wc *e;
	__u64 w;

	if (!c || (int)i >= (int)c->polled || i >= c->nr)
		return 1;
	w = c->list + (__u64)i * wc_size;
	e = verbs_reserve(sizeof(*e), RDT_EV_VERBS_WC, c->ts, c->dev);
	if (!e)
		return 0;
	e->wr_id = rd64(w);
	e->cq_id = c->id;
	e->status = rd32(w + wc_status);
	e->opcode = rd32(w + wc_opcode);
	e->byte_len = rd32(w + wc_len);
	e->qpn = rd32(w + wc_qpn);
	e->src_qp = rd32(w + wc_srcqp);
	e->wc_flags = rd32(w + wc_flags);
	e->imm = rd32(w + wc_imm);
	e->vendor_err = rd32(w + wc_vendor);
	e->index = i;
	e->poll_requested = 0;
	rdt_submit(e);
	return 0;
}

/* Each completion the poll returned, stamped at its return. */
SEC("uretprobe")
int BPF_KRETPROBE(verbs_poll_cq_ret, int ret)
{
	__u64 ts = bpf_ktime_get_ns();
	struct call *c;
	__u32 tid;

	c = call_at_return(&tid);
	if (!c)
		return 0;
	if (c->type == RDT_EV_VERBS_WC) {
		c->ts = ts;
		c->polled = ret;
		bpf_loop(MAX_WC, one_wc, &tid, 0);
	}
	bpf_map_delete_elem(&verbs_calls, &tid);
	return 0;
}

/*
 * The new post-send API (ibv_qp_ex: verbs.h's ibv_wr_start(), ibv_wr_send(),
 * ibv_wr_set_sge(), ... ibv_wr_complete()), which never calls the ops
 * table's post_send.  One WR is an opcode call (the program's cookie is
 * its IBV_WR_* opcode), which reads qp_ex's wr_id and wr_flags, then its
 * data (wr_set_sge, wr_set_sge_list, wr_set_inline_data): written when its
 * data is set, or, if it has none, at the next opcode call or
 * wr_complete.  Stamped at the opcode call.  The thread's WR in progress
 * lives in verbs_wrx, as a call in verbs_calls (no frame holds it).
 */
struct wr_ex {
	__u64 ts;
	__u64 wr_id;
	__u64 raddr;
	__u64 len;
	__u32 dev;
	__u32 qpn;
	__u32 flags;
	__u32 imm;
	__u32 rkey;
	__u32 opcode;
	__u32 index;		/* in this wr_start .. wr_complete batch */
	__u32 nsge;
	__u32 pending;		/* an opcode call not yet written */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct wr_ex);
} verbs_wrx SEC(".maps");

static const struct wr_ex wrx_zero;


/*
 * req_notify_cq (one record at its return, as the module's: flags
 * IB_CQ_SOLICITED or IB_CQ_NEXT_COMP, dur_ns the call's time).  Where the
 * provider arms the CQ through the kernel (rxe: ibv_cmd_req_notify_cq),
 * the module sees the same call as REQ_NOTIFY_CQ by the same thread.
 */
SEC("uprobe")
int BPF_KPROBE(verbs_req_notify, void *cq, int solicited_only)
{
	struct call *c;
	__u32 tid;

	c = call_begin(&tid);
	if (!c)
		return 0;
	c->ts = bpf_ktime_get_ns();
	c->type = RDT_EV_VERBS_REQ_NOTIFY;
	c->nr = solicited_only ? 1 : 2;	/* IB_CQ_SOLICITED : IB_CQ_NEXT_COMP */
	call_on_cq(c, cq);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(verbs_req_notify_ret, int ret)
{
	__u64 ts = bpf_ktime_get_ns();
	struct rdt_ev_req_notify_cq *e;
	struct call *c;
	__u32 tid;

	c = call_at_return(&tid);
	if (!c)
		return 0;
	if (c->type == RDT_EV_VERBS_REQ_NOTIFY) {
		e = verbs_reserve(sizeof(*e), RDT_EV_VERBS_REQ_NOTIFY, ts, c->dev);
		if (e) {
			e->cq_id = c->id;
			e->flags = c->nr;
			e->ret = ret;
			e->pad = 0;
			e->dur_ns = ts > c->ts ? ts - c->ts : 0;
			rdt_submit(e);
		}
	}
	bpf_map_delete_elem(&verbs_calls, &tid);
	return 0;
}

/*
 * The thread's entry in @map, made from @zero if it has none; NULL, a
 * drop counted, if the map is full.
 */
static __always_inline void *thread_entry(void *map, __u32 *tid, const void *zero)
{
	void *x;

	*tid = (__u32)bpf_get_current_pid_tgid();
	x = bpf_map_lookup_elem(map, tid);
	if (x)
		return x;
	/* only this thread makes its entry: a failure is a full map */
	if (bpf_map_update_elem(map, tid, zero, BPF_NOEXIST)) {
		rdt_count_drop();
		return NULL;
	}
	return bpf_map_lookup_elem(map, tid);
}

/* The WR in progress, if any, as a POST_SEND record. */
static __noinline void wrx_flush(struct wr_ex *x)
{
	struct rdt_ev_post_send *e;

	if (!x->pending)
		return;
	x->pending = 0;
	e = verbs_reserve(sizeof(*e), RDT_EV_VERBS_POST_SEND, x->ts, x->dev);
	if (e) {
		e->wr_id = x->wr_id;
		e->qpn = x->qpn;
		e->ret = 0;
		e->opcode = x->opcode;
		e->bad = 0;
		e->send_flags = x->flags;
		e->num_sge = x->nsge;
		e->index = x->index;
		e->imm = x->imm;
		e->total_len = x->len;
		e->remote_addr = x->raddr;
		e->rkey = x->rkey;
		rdt_submit(e);
	}
	x->index++;
}

/* The thread's WR waiting for its data, if any. */
static __always_inline struct wr_ex *wrx_pending(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct wr_ex *x = bpf_map_lookup_elem(&verbs_wrx, &tid);

	return x && x->pending ? x : NULL;
}

SEC("uprobe")
int BPF_KPROBE(verbs_wr_start, void *qpx)
{
	struct wr_ex *x;
	__u32 tid;

	x = thread_entry(&verbs_wrx, &tid, &wrx_zero);
	if (x) {
		wrx_flush(x);	/* a batch left open: what it had */
		x->index = 0;
	}
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(verbs_wr_op, void *qpx, __u64 a1, __u64 a2, __u64 a3)
{
	__u64 ts = bpf_ktime_get_ns();
	__u32 op = (__u32)bpf_get_attach_cookie(ctx);
	struct wr_ex *x;
	__u32 tid;

	x = thread_entry(&verbs_wrx, &tid, &wrx_zero);
	if (!x)
		return 0;
	wrx_flush(x);
	x->ts = ts;
	x->wr_id = rd64((__u64)qpx + qpx_wr_id);
	x->flags = rd32((__u64)qpx + qpx_wr_flags);
	x->qpn = rd32((__u64)qpx + qp_num);
	x->dev = ctx_dev(rd64((__u64)qpx + qp_context));
	x->opcode = op;
	x->len = 0;
	x->nsge = 0;
	x->imm = 0;
	x->rkey = 0;
	x->raddr = 0;
	switch (op) {
	case 3:			/* IBV_WR_SEND_WITH_IMM (imm_data) */
		x->imm = (__u32)a1;
		break;
	case 1:			/* IBV_WR_RDMA_WRITE_WITH_IMM (rkey, addr, imm) */
		x->imm = (__u32)a3;
		/* fallthrough */
	case 0:			/* IBV_WR_RDMA_WRITE (rkey, addr) */
	case 4:			/* IBV_WR_RDMA_READ */
	case 5:			/* IBV_WR_ATOMIC_CMP_AND_SWP (rkey, addr, ...) */
	case 6:			/* IBV_WR_ATOMIC_FETCH_AND_ADD */
		x->rkey = (__u32)a1;
		x->raddr = a2;
		break;
	}
	x->pending = 1;
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(verbs_wr_sge, void *qpx, __u32 lkey, __u64 addr, __u32 length)
{
	struct wr_ex *x = wrx_pending();

	if (!x)
		return 0;
	x->len = length;
	x->nsge = 1;
	wrx_flush(x);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(verbs_wr_sge_list, void *qpx, __u64 num_sge, void *sg_list)
{
	struct wr_ex *x = wrx_pending();

	if (!x)
		return 0;
	x->nsge = (__u32)num_sge;
	x->len = sge_total((__u64)sg_list, (__u32)num_sge);
	wrx_flush(x);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(verbs_wr_inline, void *qpx, void *addr, __u64 length)
{
	struct wr_ex *x = wrx_pending();

	if (!x)
		return 0;
	x->len = length;
	x->flags |= 8;		/* IBV_SEND_INLINE: what the call means */
	wrx_flush(x);
	return 0;
}

/* The batch's end: its last WR, and the thread's entry gone with it. */
SEC("uprobe")
int BPF_KPROBE(verbs_wr_complete, void *qpx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct wr_ex *x = bpf_map_lookup_elem(&verbs_wrx, &tid);

	if (!x)
		return 0;
	wrx_flush(x);
	bpf_map_delete_elem(&verbs_wrx, &tid);
	return 0;
}

/*
 * The extended completion API (ibv_cq_ex): ibv_start_poll() or
 * ibv_next_poll() returning 0 makes one completion current, whose wr_id
 * and status are fields of the ibv_cq_ex; the application reads the rest
 * through read_* calls (ibv_wc_read_opcode(), ibv_wc_read_qp_num(), ...),
 * each probed at its return (the cookie names the field).  The completion
 * is written when the next one is made current or at ibv_end_poll(),
 * stamped when it was made current; a field the application did not read
 * is 0, and the opcode RDT_WC_OPCODE_UNREAD.
 */

struct wc_ex {
	__u64 ts;
	__u64 wr_id;
	__u64 cq;		/* the ibv_cq_ex of the poll in progress */
	__u32 dev;
	__u32 cq_id;
	__u32 status;
	__u32 opcode;
	__u32 byte_len;
	__u32 qpn;
	__u32 src_qp;
	__u32 wc_flags;
	__u32 imm;
	__u32 vendor;
	__u32 index;		/* in this start_poll .. end_poll */
	__u32 pending;		/* a current completion not yet written */
	__u32 starting;		/* in start_poll: its ENOENT ends the poll */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct wc_ex);
} verbs_wcx SEC(".maps");

static const struct wc_ex wcx_zero;

static __noinline void wcx_flush(struct wc_ex *x)
{
	struct rdt_ev_poll_cq_wc *e;

	if (!x->pending)
		return;
	x->pending = 0;
	e = verbs_reserve(sizeof(*e), RDT_EV_VERBS_WC, x->ts, x->dev);
	if (e) {
		e->wr_id = x->wr_id;
		e->cq_id = x->cq_id;
		e->status = x->status;
		e->opcode = x->opcode;
		e->byte_len = x->byte_len;
		e->qpn = x->qpn;
		e->src_qp = x->src_qp;
		e->wc_flags = x->wc_flags;
		e->imm = x->imm;
		e->vendor_err = x->vendor;
		e->index = x->index;
		e->poll_requested = 0;
		rdt_submit(e);
	}
	x->index++;
}

/* start_poll (cookie 0) and next_poll (1), at entry: the last one written. */
SEC("uprobe")
int BPF_KPROBE(verbs_cqx_poll, void *cq)
{
	__u64 start = bpf_get_attach_cookie(ctx) == 0;
	struct wc_ex *x;
	__u32 tid;

	x = thread_entry(&verbs_wcx, &tid, &wcx_zero);
	if (!x)
		return 0;
	wcx_flush(x);
	if (start)
		x->index = 0;
	x->starting = start;
	x->cq = (__u64)cq;
	return 0;
}

/* Their return: 0 made a completion current. */
SEC("uretprobe")
int BPF_KRETPROBE(verbs_cqx_poll_ret, int ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct wc_ex *x = bpf_map_lookup_elem(&verbs_wcx, &tid);
	__u64 cq;

	if (!x)
		return 0;
	if (ret) {	/* nothing current; a start_poll that found none ends */
		if (x->starting)
			bpf_map_delete_elem(&verbs_wcx, &tid);
		return 0;
	}
	cq = x->cq;
	x->ts = bpf_ktime_get_ns();
	x->wr_id = rd64(cq + cqx_wr_id);
	x->status = rd32(cq + cqx_status);
	x->cq_id = rd32(cq + cq_handle);
	x->dev = ctx_dev(rd64(cq + cq_context));
	x->opcode = RDT_WC_OPCODE_UNREAD;
	x->byte_len = 0;
	x->qpn = 0;
	x->src_qp = 0;
	x->wc_flags = 0;
	x->imm = 0;
	x->vendor = 0;
	x->pending = 1;
	return 0;
}

/* A read_* call's return: that field of the current completion. */
SEC("uretprobe")
int BPF_KRETPROBE(verbs_cqx_read, __u64 v)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct wc_ex *x = bpf_map_lookup_elem(&verbs_wcx, &tid);

	if (!x || !x->pending)
		return 0;
	switch (bpf_get_attach_cookie(ctx)) {
	case CQX_OPCODE:
		x->opcode = (__u32)v;
		break;
	case CQX_VENDOR_ERR:
		x->vendor = (__u32)v;
		break;
	case CQX_BYTE_LEN:
		x->byte_len = (__u32)v;
		break;
	case CQX_IMM:
		x->imm = (__u32)v;
		break;
	case CQX_QP_NUM:
		x->qpn = (__u32)v;
		break;
	case CQX_SRC_QP:
		x->src_qp = (__u32)v;
		break;
	case CQX_WC_FLAGS:
		x->wc_flags = (__u32)v;
		break;
	}
	return 0;
}

/* end_poll: the last completion written, the thread's entry gone. */
SEC("uprobe")
int BPF_KPROBE(verbs_cqx_end, void *cq)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct wc_ex *x = bpf_map_lookup_elem(&verbs_wcx, &tid);

	if (!x)
		return 0;
	wcx_flush(x);
	bpf_map_delete_elem(&verbs_wcx, &tid);
	return 0;
}
