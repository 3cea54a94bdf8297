/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * librdtbpf: loads bpf/'s CO-RE programs and hands their records, in the
 * wire format of include/rdmatrace/wire.h (source RDT_SRC_BPF), to the caller.
 * All sources write into one BPF ring buffer, so one pollable fd serves
 * them all.  Link: build/bpf/librdtbpf.a -lbpf -lelf -lz.  Needs root
 * (CAP_BPF + CAP_PERFMON + CAP_SYS_ADMIN for uprobes).
 */
#ifndef RDT_BPF_H
#define RDT_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rdt_bpf_opts {
	bool nccl;		/* NCCL API uprobes (RDT_EV_NCCL_CALL, _NCCL_COMM) */
	bool rxe;		/* rdma_rxe internals (RDT_EV_RXE_CQE, _RETRY) */
	bool tcp;		/* tcp:tcp_retransmit_skb (RDT_EV_TCP_RETRANSMIT) */
	bool usdt;		/* rdmatrace:coll_begin/end (RDT_EV_COLL_MARK) */
	/*
	 * A userspace provider's post_send, post_recv, post_srq_recv and
	 * poll_cq, by uprobe on what each device context's ops table names
	 * (RDT_EV_VERBS_*, source RDT_SRC_VERBS).  verbs_pid > 0: only
	 * that process.
	 */
	bool verbs;
	int verbs_pid;
	/*
	 * Library path, several paths separated by ':', or a pid as a decimal
	 * string (every ELF mapped by that process that defines NCCL's
	 * symbols, probes filtered to that pid).  NULL: every libnccl.so.2
	 * found through LD_LIBRARY_PATH, `ldconfig -p` and the CUDA dirs.
	 */
	const char *nccl_target;
	/* Binary carrying the USDT notes (tools/rdma-ring-allreduce). */
	const char *usdt_target;
	/* Ring buffer size in bytes, a power of two >= page size; 0: 4 MiB. */
	size_t ringbuf_bytes;
	/*
	 * rxe: also a record per packet (RDT_EV_RXE_XMIT, _RCV), as clock
	 * alignment across hosts needs.  Otherwise packets are counted per
	 * QP, and each RDT_EV_RXE_CQE carries its QP's counts since the last.
	 */
	bool rxe_packets;
};

struct rdt_bpf;

/*
 * Loads and attaches every requested source that can run here.  Returns
 * NULL with a message in err when the ring buffer cannot be made or none
 * of the requested sources attached (err then holds the status lines).
 */
struct rdt_bpf *rdt_bpf_open(const struct rdt_bpf_opts *opts, char *err, size_t errlen);

/* Pollable fd (epoll fd of the ring buffer): readable when records wait. */
int rdt_bpf_fd(struct rdt_bpf *b);

/*
 * Calls cb once per waiting record (rec points at a struct rdt_hdr, len is
 * hdr->size) until the buffer is empty or cb returns a negative value.
 * Returns the number of records consumed, or a negative errno (cb's value
 * if cb stopped it).  Never blocks: poll rdt_bpf_fd() first.
 */
int rdt_bpf_consume(struct rdt_bpf *b, int (*cb)(void *ctx, const void *rec, size_t len),
		    void *ctx);

/*
 * Records lost since open: to a full ring buffer (exact, per-CPU counters)
 * and to program runs the kernel skipped (each program's recursion_misses).
 */
uint64_t rdt_bpf_dropped(struct rdt_bpf *b);

/*
 * The earliest entry stamp of the NCCL calls in flight (uprobe taken, not
 * yet returned), UINT64_MAX if none: their records carry that stamp and
 * are written at the return.  Read it before rdt_bpf_consume(): a call
 * that returns in between has its record in the buffer before its entry
 * leaves the map.
 */
uint64_t rdt_bpf_inflight_min(struct rdt_bpf *b);

/*
 * One line per source, '\n'-terminated: "nccl: attached ..." or why not,
 * e.g. "nccl: libnccl.so.2 not found", "rxe: rdma_rxe not loaded".
 * Owned by b.
 */
const char *rdt_bpf_status(struct rdt_bpf *b);

void rdt_bpf_close(struct rdt_bpf *b);

/* The NCCL API name of an RDT_NCCL_* function number, "?" if none. */
const char *rdt_bpf_nccl_fn_name(unsigned int fn);

#ifdef __cplusplus
}
#endif
#endif
