/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* libnccl-profiler-rdmatrace.so: prototypes shared by its files. */
#ifndef NP_LOC_H
#define NP_LOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "../../include/rdmatrace/wire.h"
#include "np_ring.h"

#define NP_HIDDEN __attribute__((visibility("hidden")))

/* The rings of this process: shared memory (live) or private memory that
 * the file writer drains (RDMATRACE_FILE). */
struct np_state {
	struct rdt_np_shm *shm;
	size_t		map_len;
	uint32_t	pid;
	unsigned int	gen;		/* bumped when the rings change (fork) */
	bool		to_file;
	/* the shm file: still in DIR (linked); removed from it at the last
	 * finalize, its mapping kept for late events (retired: the next init
	 * makes a new file, mapped in its place) */
	bool		linked, retired;
	uint64_t	dev, ino;	/* of the file made, to remove only it */
	size_t		dir_len;	/* DIR's length in path */
	char		path[4096];	/* the shm file, or RDMATRACE_FILE */
};
extern struct np_state np;

/* One communicator (the context init returns). */
struct np_comm {
	uint64_t	magic;
	uint64_t	comm_id;
	int		rank;
	int		nranks;
	unsigned int	abi;
	/* The rank of the events whose descriptor NCCL leaves without one
	 * (profiler.c: nccl_sets_rank): init's (v4, v5); v1..v3, whose init
	 * has none, learn it from the first Coll or P2p; -1 until then. */
	int		ev_rank;
};
#define NP_COMM_MAGIC 0x726474636f6d6d31ull	/* "rdtcomm1" */

/* Open the rings on the first init (or the first after a last finalize
 * removed the file: np.retired); 0 or -errno.  Serialised by the caller
 * (init/finalize lock: never taken on the event path). */
int np_rings_open(void);
/* The last finalize: flush the file, or remove the shm file (rings.c:
 * rings_unlink). */
void np_rings_close(void);

/*
 * The event path.  np_reserve returns a zeroed slot with the header filled
 * (type, size, time, ids) or NULL when the record was dropped (counted).
 * *id gets a fresh event id for @ntype (the handle NCCL keeps), also when
 * the record is dropped.  np_commit publishes the slot.
 */
void *np_reserve(unsigned int type, size_t size, unsigned int ntype,
		 uint64_t *id);
void np_commit(void);
/* A start/state/stop record whose id the caller already has. */
void *np_reserve_for(unsigned int type, size_t size, uint64_t id);
void np_count_skip(void);

/* The id of an event: the type bit's index + 1 in bits 60..63, the ring
 * index + 1 in 40..59, the ring's counter in 0..39; never 0, so it is a
 * valid non-NULL handle for NCCL. */
static inline unsigned int np_id_ntype(uint64_t id)
{
	unsigned int t = (unsigned int)(id >> 60);

	return t ? 1u << (t - 1) : 0;
}

/* RDMATRACE_FILE */
int np_file_start(const char *path);
void np_file_flush(void);
void np_file_atfork_child(void);

#endif
