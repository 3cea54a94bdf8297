/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The shared-memory rings between libnccl-profiler-rdmatrace.so (inside an
 * NCCL process) and librdmatrace's nccl-plugin source (rdmatrace-dump).
 *
 * One file per process, DIR/rdmatrace-nccl.<pid> (DIR: $RDMATRACE_NCCL_DIR,
 * default /dev/shm): a struct rdt_np_shm, then nrings rings of one
 * struct rdt_np_ring and nslots slots of RDT_NP_SLOT bytes.  A ring has one
 * producer at a time (the thread that claimed it by CAS on owner) and one
 * consumer (the reader holding flock() on the file), so head and tail are
 * plain acquire/release counters: no lock, no system call on either side.
 * A slot holds one wire record (include/rdmatrace/wire.h), hdr.size bytes.
 * A full ring drops the record and counts it in dropped; a thread that
 * found no free ring counts in noring_dropped.  The reader treats every
 * byte here as untrusted (another process wrote it).
 *
 * The process removes its file when its last communicator is finalized or
 * it exits (a reader that has the file open reads on); a file of a process
 * killed outright is removed by the next plugin init or reader on the host
 * (np_stale.h).  While a live reader watches DIR and has not yet opened a
 * process's file, that process leaves the file for it.
 */
#ifndef RDT_NP_RING_H
#define RDT_NP_RING_H

#include <stdatomic.h>
#include <stdint.h>

#define RDT_NP_SHM_MAGIC	"RDTNPRG1"
/* 2: the header says who made the file (start_time, pidns); the rings
 * are layout 1's, which a reader still takes (RDT_NP_LAYOUT_MIN).
 * 3: a ring's producer keeps wip_ts (issue 38); in layouts 1 and 2 that
 * word is padding, zero whatever the producer does, so a reader trusts it
 * from layout RDT_NP_LAYOUT_WIP on only. */
#define RDT_NP_LAYOUT		3
#define RDT_NP_LAYOUT_MIN	1
#define RDT_NP_LAYOUT_WIP	3
#define RDT_NP_SLOT		192	/* >= every plugin record */
#define RDT_NP_PREFIX		"rdmatrace-nccl."
#define RDT_NP_DIR_DEFAULT	"/dev/shm"
#define RDT_NP_DIR_ENV		"RDMATRACE_NCCL_DIR"

struct rdt_np_shm {
	char		magic[8];	/* RDT_NP_SHM_MAGIC */
	uint32_t	layout;		/* RDT_NP_LAYOUT */
	uint32_t	hdr_size;	/* bytes to the first ring */
	uint32_t	nrings;
	uint32_t	nslots;		/* per ring, a power of two */
	uint32_t	slot_size;	/* RDT_NP_SLOT */
	uint32_t	pid;		/* the NCCL process */
	uint64_t	ring_size;	/* bytes per ring, its header included */
	_Atomic uint64_t noring_dropped;
	_Atomic uint64_t skipped;	/* descriptors counted and skipped */
	_Atomic uint32_t ncomms;	/* communicators initialised, not finalized */
	_Atomic uint32_t finished;	/* 1: the last finalize ran */
	_Atomic uint32_t reader_pid;	/* last reader that attached, 0: none */
	uint32_t	pad;
	/* layout 2 on (np_stale.h), 0: not known; layout 1 has zeros here */
	uint64_t	start_time;	/* the process's /proc/PID/stat field 22 */
	uint64_t	pidns;		/* the inode of its /proc/self/ns/pid */
};

struct rdt_np_ring {
	/* producer's line */
	_Atomic uint64_t head;		/* records committed */
	_Atomic uint64_t dropped;	/* records the full ring refused */
	_Atomic uint32_t owner;		/* tid of the producer, 0: free */
	uint32_t	pad0;
	uint64_t	next_id;	/* producer's event counter */
	uint64_t	tail_seen;	/* producer's copy of tail: read anew
					 * only when the ring looks full */
	/*
	 * Layout 3: CLOCK_MONOTONIC ns, taken before the record being written
	 * is stamped; 0 once it is published, and between records.  The producer
	 * stores it (seq_cst), then stamps the record, fills it, publishes
	 * head (release), then stores 0 (release).  A reader that reads it
	 * (acquire) before head knows every record past that head has a
	 * stamp >= wip_ts, or later than the reader's clock read before
	 * wip_ts was read if it was 0 (lib/source_nccl_plugin.c,
	 * ring_hold(), gives the argument).
	 */
	_Atomic uint64_t wip_ts;
	char		pad1[16];
	/* consumer's line */
	_Atomic uint64_t tail;		/* records consumed */
	char		pad2[56];
};

_Static_assert(sizeof(struct rdt_np_ring) == 128, "two cache lines");

static inline struct rdt_np_ring *rdt_np_ring_at(struct rdt_np_shm *s,
						 uint32_t i)
{
	return (struct rdt_np_ring *)((char *)s + s->hdr_size +
				      (uint64_t)i * s->ring_size);
}

static inline void *rdt_np_slot(struct rdt_np_shm *s, struct rdt_np_ring *r,
				uint64_t n)
{
	return (char *)(r + 1) + (n & (s->nslots - 1)) * (uint64_t)RDT_NP_SLOT;
}

#endif
