// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The rings and the one emit path every profiler callback funnels into
 * (blktrace's __blk_add_trace): a thread claims a ring once, by CAS, and
 * from then on writes records into it with plain loads and one release
 * store.  No lock, no system call (clock_gettime and sched_getcpu are
 * vDSO/rseq reads), no allocation, no waiting: a full ring drops the
 * record and counts it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "np_loc.h"
#include "np_stale.h"

NP_HIDDEN struct np_state np;

/* The producer's copies of the layout: the shared header is writable by
 * the reader, so the event path never trusts it for an address. */
static uint64_t np_mask;
static uint32_t np_nrings;
static pthread_key_t np_key;
static bool np_key_made;

struct np_tls {
	unsigned int	gen;		/* np.gen this was set up for */
	uint32_t	tid;
	uint32_t	idx;		/* ring index + 1, 0: none */
	struct rdt_np_ring *ring;
	uint64_t	head;		/* of the slot reserved, not committed */
};
static __thread struct np_tls tls;

static inline uint64_t now_mono(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* The last tick's CLOCK_MONOTONIC: never later than now_mono() after it. */
static inline uint64_t now_coarse(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static unsigned long env_ulong(const char *name, unsigned long def,
			       unsigned long min, unsigned long max)
{
	const char *v = getenv(name);
	char *end;
	unsigned long n;

	if (!v || !*v)
		return def;
	n = strtoul(v, &end, 0);
	if (*end || n < min || n > max)
		return def;
	return n;
}

/* Thread exit: the ring goes back to the pool, its counters kept. */
static void ring_release(void *p)
{
	char *base = (char *)np.shm;
	struct rdt_np_ring *r = p;

	if (base && (char *)r >= base && (char *)r < base + np.map_len)
		atomic_store_explicit(&r->owner, 0, memory_order_release);
}

static inline void *fill(struct rdt_np_ring *r, unsigned int type,
			 size_t size, uint64_t id, unsigned int ntype);

/* The thread's name first, as the module does for a task, so that every
 * sink names it even after the process is gone. */
static void announce_thread(struct rdt_np_ring *r)
{
	struct rdt_ev_comm *c = fill(r, RDT_EV_COMM, sizeof(*c), 0, 0);

	if (!c)
		return;
	if (prctl(PR_GET_NAME, c->comm) < 0)
		c->comm[0] = 0;
	c->comm[sizeof(c->comm) - 1] = 0;
	np_commit();
}

/* The slow path, once per thread (and after a fork). */
static struct rdt_np_ring *claim_ring(void)
{
	struct rdt_np_shm *s = np.shm;

	tls.gen = np.gen;
	tls.ring = NULL;
	tls.idx = 0;
	if (!tls.tid)
		tls.tid = (uint32_t)syscall(SYS_gettid);
	if (!s)
		return NULL;
	for (uint32_t i = 0; i < np_nrings; i++) {
		struct rdt_np_ring *r = rdt_np_ring_at(s, i);
		uint32_t free_owner = 0;

		if (atomic_load_explicit(&r->owner, memory_order_relaxed))
			continue;
		if (atomic_compare_exchange_strong_explicit(&r->owner,
				&free_owner, tls.tid, memory_order_acquire,
				memory_order_relaxed)) {
			tls.ring = r;
			tls.idx = i + 1;
			pthread_setspecific(np_key, r);
			announce_thread(r);
			break;
		}
	}
	return tls.ring;
}

static inline struct rdt_np_ring *my_ring(void)
{
	if (__builtin_expect(tls.gen == np.gen, 1))
		return tls.ring;
	return claim_ring();
}

static inline void *fill(struct rdt_np_ring *r, unsigned int type,
			 size_t size, uint64_t id, unsigned int ntype)
{
	struct rdt_np_ids *ids;
	struct rdt_hdr *h;
	uint64_t head, tail;
	int cpu;

	if (!r) {
		if (np.shm)
			atomic_fetch_add_explicit(&np.shm->noring_dropped, 1,
						  memory_order_relaxed);
		return NULL;
	}
	head = atomic_load_explicit(&r->head, memory_order_relaxed);
	/* The reader's line is read only when the ring looks full: one
	 * cache miss per ring's worth, not one per record. */
	tail = r->tail_seen;
	if (head - tail > np_mask)
		tail = r->tail_seen = atomic_load_explicit(&r->tail,
							   memory_order_acquire);
	if (head - tail > np_mask) {
		atomic_store_explicit(&r->dropped,
			atomic_load_explicit(&r->dropped, memory_order_relaxed) + 1,
			memory_order_relaxed);
		return NULL;
	}
	h = (struct rdt_hdr *)((char *)(r + 1) + (head & np_mask) * RDT_NP_SLOT);
	/*
	 * The live reader's horizon (issue 38): the record is announced
	 * before it is stamped, so that a reader that finds the ring drained
	 * and wip_ts 0 knows this record's stamp will be later than its own
	 * clock read, and one that finds wip_ts set holds its output back to
	 * it.  seq_cst: the store must be visible before the clock is read
	 * for the stamp (a store-load order, which release does not give).
	 * The value need only be no later than the stamp: the coarse clock
	 * (the last tick's CLOCK_MONOTONIC, a vDSO read without rdtsc) is,
	 * and costs a third of a second precise read (bench:
	 * nccl.plugin.event_pair_ns).
	 */
	atomic_store_explicit(&r->wip_ts, now_coarse(), memory_order_seq_cst);
	memset(h, 0, size);
	h->magic = RDT_REC_MAGIC;
	h->version = RDT_ABI_MAJOR;
	h->source = RDT_SRC_NCCL_PLUGIN;
	h->type = (__u16)type;
	h->size = (__u16)size;
	h->ts_ns = now_mono();
	h->pid = np.pid;
	h->tid = tls.tid;
	cpu = sched_getcpu();
	h->cpu = cpu < 0 ? 0 : (__u32)cpu;
	h->dev = RDT_NO_DEV;
	if (size >= sizeof(*h) + sizeof(*ids)) {
		ids = (struct rdt_np_ids *)(h + 1);
		ids->id = id;
		ids->rank = -1;
		ids->ntype = ntype;
	}
	tls.head = head;
	return h;
}

void *np_reserve(unsigned int type, size_t size, unsigned int ntype,
		 uint64_t *id)
{
	struct rdt_np_ring *r = my_ring();
	uint64_t seq = 0;

	if (r)
		seq = ++r->next_id & ((1ull << 40) - 1);
	*id = (ntype ? (uint64_t)(__builtin_ctz(ntype) + 1) << 60 : 0) |
	      (uint64_t)tls.idx << 40 | seq;
	/* A dropped or ringless event still gets a non-NULL handle: its
	 * stop is then dropped and counted too. */
	if (!*id)
		*id = 1;
	return fill(r, type, size, *id, ntype);
}

void *np_reserve_for(unsigned int type, size_t size, uint64_t id)
{
	return fill(my_ring(), type, size, id, np_id_ntype(id));
}

void np_commit(void)
{
	atomic_store_explicit(&tls.ring->head, tls.head + 1,
			      memory_order_release);
	/* After head: a reader that sees 0 here (acquire) sees this head. */
	atomic_store_explicit(&tls.ring->wip_ts, 0, memory_order_release);
}

void np_count_skip(void)
{
	if (np.shm)
		atomic_fetch_add_explicit(&np.shm->skipped, 1,
					  memory_order_relaxed);
}

/* A forked child must not write into its parent's rings: it starts with
 * none, and its first init makes its own. */
static void atfork_child(void)
{
	np.shm = NULL;
	np.map_len = 0;
	np.pid = (uint32_t)getpid();
	np.gen++;
	tls.tid = 0;
	/* the parent's file is the parent's to remove */
	np.linked = false;
	np.retired = false;
	np_file_atfork_child();
}

/*
 * The shm file leaves DIR (the last finalize, exit): no reader looks for
 * it any more, and its memory goes with the last mapping and descriptor.
 * A reader that has it open reads on to its end (an open file is not
 * taken from it); a live reader that watches DIR but has not opened it
 * yet (it scans every 200 ms) gets it left, to drain and remove once the
 * process is gone.  @release (the last finalize, the process going on):
 * anonymous memory takes the mapping's place at once (MAP_FIXED: never a
 * hole), untouched but by a late event of some NCCL thread, so the file's
 * 12 MiB are not held until exit.
 */
static void rings_unlink(bool release)
{
	const struct stat made = { .st_dev = (dev_t)np.dev,
				   .st_ino = (ino_t)np.ino };
	char dir[sizeof(np.path)];

	if (np.to_file || !np.linked || np.pid != (uint32_t)getpid())
		return;
	snprintf(dir, sizeof(dir), "%.*s", (int)np.dir_len, np.path);
	if (!atomic_load(&np.shm->reader_pid) && rdt_np_watched(dir))
		return;
	rdt_np_unlink_same(AT_FDCWD, np.path, &made);
	np.linked = false;
	np.retired = true;
	if (release)
		mmap(np.shm, np.map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE |
		     MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
}

/* exit() without a finalize, as many jobs end; not _exit() or a signal:
 * the next init or reader removes that file (np_stale.h). */
__attribute__((destructor)) static void rings_exit(void)
{
	if (np.shm)
		rings_unlink(false);
}

/* The file DIR/rdmatrace-nccl.<pid>, whole (fallocate: a tmpfs full later
 * would be SIGBUS in NCCL's threads, here it is an error init reports),
 * mapped at @at (the retired file's place: MAP_FIXED swaps the mappings
 * at once, so a late event never meets a hole) or anywhere; its header
 * says who made it before anything else is written. */
static int shm_create(const char *dir, size_t len, void *at, void **mp)
{
	struct rdt_np_shm who = {
		.layout = RDT_NP_LAYOUT,
		.pid = np.pid,
		.start_time = rdt_np_start_time(np.pid),
		.pidns = rdt_np_pidns(),
	};
	struct stat st;
	void *m;
	int fd, err;

	snprintf(np.path, sizeof(np.path), "%s/" RDT_NP_PREFIX "%u", dir,
		 np.pid);
	np.dir_len = strlen(dir);
	/* Files of processes killed outright; while a reader watches DIR
	 * they are its, to drain first. */
	if (!rdt_np_watched(dir))
		rdt_np_sweep(dir, 0);
	/* A file with our pid that the sweep left (another user's, an old
	 * layout's, a reader's): a reader that has it open keeps its copy. */
	unlink(np.path);
	fd = open(np.path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 ||
	    pwrite(fd, &who, sizeof(who), 0) != (ssize_t)sizeof(who)) {
		err = errno ? errno : EIO;
		goto fail;
	}
	err = posix_fallocate(fd, 0, (off_t)len);
	if (err)
		goto fail;
	/* Populated: no page fault on the event path either. */
	m = mmap(at, len, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_POPULATE | (at ? MAP_FIXED : 0), fd, 0);
	err = errno;
	if (m == MAP_FAILED) {
		/* A failed MAP_FIXED may have unmapped the old range: memory
		 * again, for the late events. */
		if (at)
			mmap(at, len, PROT_READ | PROT_WRITE, MAP_PRIVATE |
			     MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
		goto fail;
	}
	close(fd);
	np.dev = (uint64_t)st.st_dev;
	np.ino = (uint64_t)st.st_ino;
	np.linked = true;
	*mp = m;
	return 0;
fail:
	close(fd);
	unlink(np.path);
	return -err;
}

int np_rings_open(void)
{
	unsigned long nrings = env_ulong("RDMATRACE_NCCL_RINGS", 16, 1, 4096);
	unsigned long nslots = env_ulong("RDMATRACE_NCCL_SLOTS", 4096, 2,
					 1ul << 22);
	void *at = NULL;
	const char *file = getenv("RDMATRACE_FILE");
	static bool atfork_done;
	struct rdt_np_shm *s;
	size_t ring_size, hdr_size = 4096, len;
	void *m = NULL;
	int err;

	while (nslots & (nslots - 1))
		nslots &= nslots - 1;	/* down to a power of two */
	/* After a last finalize: the first file's sizes, in its place. */
	if (np.retired) {
		nrings = np_nrings;
		nslots = np_mask + 1;
		at = np.shm;
	}
	ring_size = sizeof(struct rdt_np_ring) + nslots * RDT_NP_SLOT;
	len = hdr_size + nrings * ring_size;
	np.pid = (uint32_t)getpid();
	if (!np_key_made) {
		if (pthread_key_create(&np_key, ring_release))
			return -EAGAIN;
		np_key_made = true;
	}
	if (!atfork_done) {
		pthread_atfork(NULL, NULL, atfork_child);
		atfork_done = true;
	}
	if (file && *file) {
		np.to_file = true;
		m = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (m == MAP_FAILED)
			return -errno;
	} else {
		const char *dir = getenv(RDT_NP_DIR_ENV);

		np.to_file = false;
		/* On failure a retired mapping stays (late events land in
		 * it) and the next init tries again. */
		err = shm_create(dir && *dir ? dir : RDT_NP_DIR_DEFAULT, len,
				 at, &m);
		if (err < 0)
			return err;
		np.retired = false;
	}
	s = m;
	s->layout = RDT_NP_LAYOUT;
	s->hdr_size = (uint32_t)hdr_size;
	s->nrings = (uint32_t)nrings;
	s->nslots = (uint32_t)nslots;
	s->slot_size = RDT_NP_SLOT;
	s->pid = np.pid;
	s->ring_size = ring_size;
	np_mask = nslots - 1;
	np_nrings = (uint32_t)nrings;
	/* The magic last: a reader takes the file only once it is whole. */
	atomic_thread_fence(memory_order_release);
	memcpy(s->magic, RDT_NP_SHM_MAGIC, sizeof(s->magic));
	np.map_len = len;
	np.shm = s;
	np.gen++;
	if (np.to_file) {
		char path[sizeof(np.path)];

		const char *pp = strstr(file, "%p");

		/* PATH with %p: one file per process (ranks of one job);
		 * a forked child writes beside its parent's file. */
		if (pp)
			snprintf(path, sizeof(path), "%.*s%u%s", (int)(pp - file),
				 file, np.pid, pp + 2);
		else if (np.path[0])
			snprintf(path, sizeof(path), "%s.%u", file, np.pid);
		else
			snprintf(path, sizeof(path), "%s", file);
		err = np_file_start(path);
		if (err < 0) {
			np.shm = NULL;
			np.gen++;
			munmap(m, len);
			return err;
		}
		snprintf(np.path, sizeof(np.path), "%s", path);
	}
	return 0;
}

void np_rings_close(void)
{
	if (!np.shm)
		return;
	if (np.to_file) {
		np_file_flush();
		return;
	}
	atomic_store_explicit(&np.shm->finished, 1, memory_order_release);
	rings_unlink(true);
}
