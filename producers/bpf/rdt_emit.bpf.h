/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every bpf/ program shares: the one ring buffer, the exact drop
 * counter and the record header.  Each x.bpf.c declares these maps; the
 * loader (rdt_bpf.c) creates them once and hands the same fds to every
 * skeleton with bpf_map__reuse_fd, so all sources land in one stream.
 */
#ifndef RDT_EMIT_BPF_H
#define RDT_EMIT_BPF_H

#include <rdmatrace/wire.h>

#define RDT_RB_BYTES	(4 << 20)

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, RDT_RB_BYTES);
} rdt_events SEC(".maps");

/* Reserve failures per CPU: summed by rdt_bpf_dropped(), so it is exact. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} rdt_drops SEC(".maps");

/* One record lost, counted. */
static __always_inline void rdt_count_drop(void)
{
	__u32 zero = 0;
	__u64 *d = bpf_map_lookup_elem(&rdt_drops, &zero);

	if (d)	/* atomic: a uprobe program can be preempted on its CPU */
		__sync_fetch_and_add(d, 1);
}

/* Reserve a record of @size bytes and fill its header; NULL counts a drop. */
static __always_inline void *rdt_reserve(__u32 size, __u16 type, __u64 ts, __u32 dev)
{
	struct rdt_hdr *h = bpf_ringbuf_reserve(&rdt_events, size, 0);
	__u64 id;

	if (!h) {
		rdt_count_drop();
		return NULL;
	}
	id = bpf_get_current_pid_tgid();
	h->magic = RDT_REC_MAGIC;
	h->version = RDT_ABI_MAJOR;
	h->source = RDT_SRC_BPF;
	h->type = type;
	h->size = size;
	h->ts_ns = ts;
	h->pid = id >> 32;
	h->tid = (__u32)id;
	h->cpu = bpf_get_smp_processor_id();
	h->dev = dev;
	return h;
}

#define RDT_RESERVE(type_, T, ts, dev) \
	((T *)rdt_reserve(sizeof(T), (type_), (ts), (dev)))

/*
 * Commit a reserved record.  A wakeup per record (flags 0 wakes the reader
 * whenever it has caught up, i.e. nearly always) cost ~6 us per traced NCCL
 * call on a nested VM.  The reader polls with a timeout (<= 100 ms, see
 * rdt_reader_next) and drains at exit, so records need no wakeup to be read;
 * one is forced only once 1/8 of the buffer is waiting, so a burst is read
 * well before the buffer fills and drops.
 */
#define RDT_WAKE_BYTES	(RDT_RB_BYTES / 8)

static __always_inline void rdt_submit(void *rec)
{
	__u64 avail = bpf_ringbuf_query(&rdt_events, BPF_RB_AVAIL_DATA);

	bpf_ringbuf_submit(rec, avail >= RDT_WAKE_BYTES ? BPF_RB_FORCE_WAKEUP :
							  BPF_RB_NO_WAKEUP);
}

#endif
