// SPDX-License-Identifier: GPL-2.0
/*
 * NCCL API calls through uprobe + uretprobe.  One entry and one return
 * program serve every function: the loader attaches them to each function
 * address with a BPF cookie holding enum rdt_nccl_fn, so the argument
 * decoding lives in one switch here instead of 19 near-identical programs.
 *
 * x86-64 SysV: arguments 1-6 in rdi rsi rdx rcx r8 r9, the rest on the
 * stack above the return address.  ncclCommInitRank's by-value 128-byte
 * ncclUniqueId is passed in memory, so `rank` is the third register
 * argument and the id sits at sp+8 on entry.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "rdt_emit.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* The stack-argument and by-value-id layout below is x86-64 SysV only. */
#ifndef __TARGET_ARCH_x86
#error "nccl.bpf.c decodes the x86-64 SysV calling convention only"
#endif
/* libbpf 1.1 has no PT_REGS_PARM6. */
#define ARG6(ctx)	((ctx)->r9)

#define NCCL_ID_BYTES	128
#define NCCL_IN_PROGRESS 7	/* ncclInProgress: non-blocking init, comm valid */
#define MAX_INIT_ALL	16	/* communicators reported per ncclCommInitAll */

/*
 * A call in flight, in the calls map and never on the BPF stack: 7.2 gives
 * a uprobe program whose frame reaches 64 bytes a per-CPU private stack,
 * yet runs uprobe programs preemptible, so two threads on one CPU would
 * share it (doc/DESIGN.md, "--verbs on 7.2"; tests/bpf/stack-depth.test).
 */
struct call {
	__u64 ts;
	__u64 sp;		/* stack pointer at entry: tells nesting */
	__u64 a[6];		/* register arguments */
	__u64 s[2];		/* stack arguments 7 and 8 */
	__u64 id_hash;		/* InitRank*: hash of the by-value uniqueId */
	__u32 fn;
	__u32 pad;
};

/* In-flight outermost call per thread. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct call);
} calls SEC(".maps");

/*
 * Entries of `calls`: counted before one is made (and so before its
 * stamp) and after one is deleted.  The reader (rdt_bpf_inflight_min())
 * reads it in the mmapped .bss and walks the map only when it is not 0:
 * an attached, idle NCCL process cost a failing bpf() syscall on every
 * read pass.  A call the reader found 0 before was stamped after it read,
 * later than the pass's own clock, so no wait is missed.
 */
__u64 calls_live;

/* What a new call starts from: a map value, so no frame holds a struct call. */
static const struct call call_zero;

struct comm_key {
	__u32 tgid;
	__u32 pad;
	__u64 comm;
};

struct comm_state {
	__u64 hash;
	__u64 seq;
	__s32 rank;
	__s32 nranks;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, struct comm_key);
	__type(value, struct comm_state);
} comms SEC(".maps");

static __always_inline __u64 splitmix64(__u64 x)
{
	__u64 z = x + 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* hash_unique_id()'s walk, for bpf_loop(): one word of the id a step. */
struct id_walk {
	__u64 at;
	__u64 h;
	__u32 ok;
};

static int id_word(__u32 i, struct id_walk *iw)
{
	__u64 w;

	if (bpf_probe_read_user(&w, sizeof(w), (const void *)(iw->at + 8 * i))) {
		iw->ok = 0;
		return 1;
	}
	iw->h = splitmix64(iw->h ^ w);
	return 0;
}

/*
 * h = 0; for each little-endian 64-bit word w of the id: h = splitmix64(h ^ w).
 * A word at a time: no program's frame may reach 64 bytes (see struct
 * call).  0 if the id cannot be read.
 */
static __noinline __u64 hash_unique_id(__u64 uptr)
{
	struct id_walk iw = { .at = uptr, .ok = 1 };

	bpf_loop(NCCL_ID_BYTES / 8, id_word, &iw, 0);
	return iw.ok ? iw.h : 0;
}

static __always_inline __u64 read_user_u64(__u64 addr)
{
	__u64 v = 0;

	bpf_probe_read_user(&v, sizeof(v), (const void *)addr);
	return v;
}

SEC("uprobe")
int nccl_enter(struct pt_regs *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 sp = PT_REGS_SP(ctx);
	struct call *c = bpf_map_lookup_elem(&calls, &tid);

	/*
	 * A call made from inside NCCL (ncclBcast -> ncclBroadcast,
	 * ncclCommInitAll -> ncclGroupStart) runs deeper in the stack than
	 * the application's call: only the outermost one is recorded.  An
	 * entry at or above the stored sp means the stored one never returned
	 * (thread died, longjmp): replace it.
	 */
	if (c && sp < c->sp)
		return 0;
	if (!c) {
		__sync_fetch_and_add(&calls_live, 1);
		if (bpf_map_update_elem(&calls, &tid, &call_zero, BPF_ANY)) {
			__sync_fetch_and_add(&calls_live, -1);
			return 0;
		}
		c = bpf_map_lookup_elem(&calls, &tid);
		if (!c)
			return 0;
	}
	c->ts = bpf_ktime_get_ns();
	c->sp = sp;
	c->fn = (__u32)bpf_get_attach_cookie(ctx);
	c->a[0] = PT_REGS_PARM1(ctx);
	c->a[1] = PT_REGS_PARM2(ctx);
	c->a[2] = PT_REGS_PARM3(ctx);
	c->a[3] = PT_REGS_PARM4(ctx);
	c->a[4] = PT_REGS_PARM5(ctx);
	c->a[5] = ARG6(ctx);
	/* sp points at the return address; stack arguments follow it. */
	if (bpf_probe_read_user(c->s, sizeof(c->s), (const void *)(sp + 8))) {
		c->s[0] = 0;
		c->s[1] = 0;
	}
	c->id_hash = 0;
	if (c->fn == RDT_NCCL_COMM_INIT_RANK || c->fn == RDT_NCCL_COMM_INIT_RANK_CONFIG)
		c->id_hash = hash_unique_id(sp + 8);
	return 0;
}

static __noinline struct comm_state *comm_get(__u32 tgid, __u64 comm, bool create)
{
	struct comm_key k = { .tgid = tgid, .comm = comm };
	struct comm_state *s = bpf_map_lookup_elem(&comms, &k);

	if (!s && create) {
		/* A comm made before we attached: rank unknown, seq still counts. */
		struct comm_state n = { .rank = -1 };

		bpf_map_update_elem(&comms, &k, &n, BPF_NOEXIST);
		s = bpf_map_lookup_elem(&comms, &k);
	}
	return s;
}

static __noinline void comm_set(__u32 tgid, __u64 comm, __u64 hash, int rank, int nranks)
{
	struct comm_key k = { .tgid = tgid, .comm = comm };
	struct comm_state n = { .hash = hash, .rank = rank, .nranks = nranks };

	bpf_map_update_elem(&comms, &k, &n, BPF_ANY);
}

/*
 * A communicator's record, for the call c made: five arguments at most
 * to a subprogram, so rank and nranks come packed as rank << 32 | nranks.
 */
static __noinline void emit_comm(struct call *c, __u64 comm, __u64 hash,
				 __u64 rank_nranks, int ret)
{
	struct rdt_ev_nccl_comm *e = RDT_RESERVE(RDT_EV_NCCL_COMM, struct rdt_ev_nccl_comm,
						 c->ts, RDT_NO_DEV);
	if (!e)
		return;
	e->comm = comm;
	e->comm_hash = hash;
	e->rank = (int)(rank_nranks >> 32);
	e->nranks = (int)rank_nranks;
	e->fn = c->fn;
	e->ret = ret;
	rdt_submit(e);
}

#define RANKS(rank, nranks) ((__u64)(__u32)(rank) << 32 | (__u32)(nranks))

/* ncclCommInitAll's communicators: a COMM record each. */
static __noinline void init_all_comms(struct call *c, __u32 tgid, int ret)
{
	int n = (int)c->a[1];

	for (int i = 0; i < MAX_INIT_ALL; i++) {
		__u64 comm;

		if (i >= n)
			break;
		comm = read_user_u64(c->a[0] + 8 * i);
		if (ret == 0 || ret == NCCL_IN_PROGRESS)
			comm_set(tgid, comm, 0, i, n);
		emit_comm(c, comm, 0, RANKS(i, n), ret);
	}
}

static __always_inline bool is_collective(__u32 fn)
{
	switch (fn) {
	case RDT_NCCL_ALL_REDUCE: case RDT_NCCL_BROADCAST: case RDT_NCCL_BCAST:
	case RDT_NCCL_REDUCE: case RDT_NCCL_ALL_GATHER: case RDT_NCCL_REDUCE_SCATTER:
	case RDT_NCCL_ALL_TO_ALL:
		return true;
	}
	return false;
}

SEC("uretprobe")
int nccl_exit(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, tgid = id >> 32;
	__u64 now = bpf_ktime_get_ns();
	struct rdt_ev_nccl_call *e;
	struct comm_state *st = NULL;
	struct call *c;
	__u64 newcomm = 0;
	int ret;

	c = bpf_map_lookup_elem(&calls, &tid);
	/* Returns of nested calls happen below the outermost call's frame. */
	if (!c || PT_REGS_SP(ctx) <= c->sp)
		return 0;
	ret = (int)PT_REGS_RC(ctx);

	e = RDT_RESERVE(RDT_EV_NCCL_CALL, struct rdt_ev_nccl_call, c->ts, RDT_NO_DEV);
	if (!e)
		goto out;
	e->duration_ns = now - c->ts;
	e->fn = c->fn;
	e->ret = ret;
	e->count = 0;
	e->comm = 0;
	e->stream = 0;
	e->comm_hash = 0;
	e->seq = 0;
	e->datatype = -1;
	e->op = -1;
	e->root = -1;
	e->rank = -1;
	e->nranks = 0;
	e->pad = 0;

	switch (c->fn) {
	case RDT_NCCL_GET_UNIQUE_ID:
		if (ret == 0)
			e->comm_hash = hash_unique_id(c->a[0]);
		break;
	case RDT_NCCL_COMM_INIT_RANK:
	case RDT_NCCL_COMM_INIT_RANK_CONFIG:
		newcomm = read_user_u64(c->a[0]);
		e->comm = newcomm;
		e->comm_hash = c->id_hash;
		e->nranks = (int)c->a[1];
		e->rank = (int)c->a[2];
		if (ret == 0 || ret == NCCL_IN_PROGRESS)
			comm_set(tgid, newcomm, c->id_hash, e->rank, e->nranks);
		emit_comm(c, newcomm, c->id_hash, RANKS(e->rank, e->nranks), ret);
		break;
	case RDT_NCCL_COMM_INIT_ALL:
		/* One process owns every rank; NCCL makes the id internally. */
		e->nranks = (int)c->a[1];
		e->comm = read_user_u64(c->a[0]);
		init_all_comms(c, tgid, ret);
		break;
	case RDT_NCCL_COMM_SPLIT:
		/* root = color, op = key; the new comm's rank is chosen inside NCCL. */
		e->comm = c->a[0];
		e->root = (int)c->a[1];
		e->op = (int)c->a[2];
		st = comm_get(tgid, c->a[0], false);
		newcomm = read_user_u64(c->a[3]);
		e->stream = newcomm;	/* the communicator it made */
		if (st) {
			e->comm_hash = st->hash;
			e->rank = st->rank;
			e->nranks = st->nranks;
		}
		if ((ret == 0 || ret == NCCL_IN_PROGRESS) && newcomm) {
			/* Same parent and color on every rank -> same hash. */
			__u64 h = splitmix64(e->comm_hash ^ (__u32)e->root);

			comm_set(tgid, newcomm, h, -1, 0);
			emit_comm(c, newcomm, h, RANKS(-1, 0), ret);
		}
		st = NULL;
		break;
	case RDT_NCCL_COMM_FINALIZE:
	case RDT_NCCL_COMM_DESTROY:
	case RDT_NCCL_COMM_ABORT:
		e->comm = c->a[0];
		st = comm_get(tgid, e->comm, false);
		break;
	case RDT_NCCL_ALL_REDUCE:
	case RDT_NCCL_REDUCE_SCATTER:
		e->count = c->a[2];
		e->datatype = (int)c->a[3];
		e->op = (int)c->a[4];
		e->comm = c->a[5];
		e->stream = c->s[0];
		break;
	case RDT_NCCL_BROADCAST:
		e->count = c->a[2];
		e->datatype = (int)c->a[3];
		e->root = (int)c->a[4];
		e->comm = c->a[5];
		e->stream = c->s[0];
		break;
	case RDT_NCCL_REDUCE:
		e->count = c->a[2];
		e->datatype = (int)c->a[3];
		e->op = (int)c->a[4];
		e->root = (int)c->a[5];
		e->comm = c->s[0];
		e->stream = c->s[1];
		break;
	case RDT_NCCL_ALL_GATHER:
	case RDT_NCCL_ALL_TO_ALL:
		e->count = c->a[2];
		e->datatype = (int)c->a[3];
		e->comm = c->a[4];
		e->stream = c->a[5];
		break;
	case RDT_NCCL_BCAST:
	case RDT_NCCL_SEND:
	case RDT_NCCL_RECV:
		e->count = c->a[1];
		e->datatype = (int)c->a[2];
		e->root = (int)c->a[3];
		e->comm = c->a[4];
		e->stream = c->a[5];
		break;
	default:	/* GroupStart / GroupEnd: no arguments */
		break;
	}

	if (e->comm && c->fn >= RDT_NCCL_ALL_REDUCE) {
		st = comm_get(tgid, e->comm, true);
		if (st && is_collective(c->fn))
			e->seq = __sync_fetch_and_add(&st->seq, 1) + 1;
	}
	if (st) {
		e->comm_hash = st->hash;
		e->rank = st->rank;
		e->nranks = st->nranks;
	}
	rdt_submit(e);

	if ((c->fn == RDT_NCCL_COMM_DESTROY && ret == 0) || c->fn == RDT_NCCL_COMM_ABORT) {
		struct comm_key k = { .tgid = tgid, .comm = c->a[0] };

		bpf_map_delete_elem(&comms, &k);
	}
out:
	if (!bpf_map_delete_elem(&calls, &tid))
		__sync_fetch_and_add(&calls_live, -1);
	return 0;
}
