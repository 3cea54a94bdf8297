// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * RDMATRACE_FILE=PATH: a background thread is the rings' consumer and
 * writes a trace file (include/rdmatrace/wire.h: rdt_file_hdr, metadata,
 * records) that rdmatrace-dump -i reads.  A file is one ordered stream, so
 * records are held back for a window and written in timestamp order; a
 * record committed later than the window is written late (out of order),
 * never lost.  Ring drops become in-stream RDT_EV_LOST records.  The file
 * is flushed every period, so a killed job's file ends on a whole record.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "np_loc.h"

/* A record in progress (wip_ts) is waited for this long at most. */
#define STALL_NS	(1000 * 1000000ull)
#define PERIOD_NS	(10 * 1000000ull)	/* drain period */
#define PENDING_MAX	(1u << 16)		/* records held at most */

struct rec {
	uint64_t ts;
	uint64_t seq;		/* arrival order: a stable sort */
	unsigned char b[RDT_NP_SLOT];
};

static struct {
	pthread_mutex_t	lock;	/* the consumer side: thread vs finalize */
	pthread_t	thread;
	bool		running;
	FILE		*f;
	char		path[4096];
	struct rec	*pend;
	size_t		npend;
	uint64_t	seq;
	uint64_t	*seen_dropped;	/* per ring, already written as LOST */
	uint64_t	seen_noring;
	/* after a drain: no record still to come is earlier */
	uint64_t	hold;
	bool		failed;
} fw = { .lock = PTHREAD_MUTEX_INITIALIZER };

static uint64_t mono(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

/* The same header librdmatrace writes for a live capture of this host, so
 * that -i merges the file with one (same boot id: no clock translation). */
static int write_header(FILE *f)
{
	extern char **environ;
	struct rdt_file_hdr h;
	struct timespec rt, mo, rt2;
	struct utsname u;
	char meta[8192];
	size_t mlen = 0, pad;
	static const char zeros[8];

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, RDT_FILE_MAGIC, sizeof(h.magic));
	h.abi_major = RDT_ABI_MAJOR;
	h.abi_minor = RDT_ABI_MINOR;
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mo);
	clock_gettime(CLOCK_REALTIME, &rt2);
	h.realtime_offset_ns =
		((int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec +
		 (int64_t)rt2.tv_sec * 1000000000 + rt2.tv_nsec) / 2 -
		((int64_t)mo.tv_sec * 1000000000 + mo.tv_nsec);
	h.ncpus = (uint32_t)sysconf(_SC_NPROCESSORS_CONF);
	if (!uname(&u)) {
		memcpy(h.host, u.nodename, strnlen(u.nodename, sizeof(h.host) - 1));
		memcpy(h.kernel, u.release, strnlen(u.release, sizeof(h.kernel) - 1));
	}
	read_line("/sys/module/rdmatrace/version", h.module_version,
		  sizeof(h.module_version));
	read_line("/proc/sys/kernel/random/boot_id", h.boot_id,
		  sizeof(h.boot_id));
	/* The traced process's NCCL_* settings, as rdmatrace-dump keeps
	 * them for --nccl=PID. */
	mlen = (size_t)snprintf(meta, sizeof(meta),
				"producer=libnccl-profiler-rdmatrace.so\n");
	for (char **e = environ; e && *e; e++) {
		if (strncmp(*e, "NCCL_", 5))
			continue;
		int n = snprintf(meta + mlen, sizeof(meta) - mlen, "pid%u.%s\n",
				 np.pid, *e);

		if (n < 0 || (size_t)n >= sizeof(meta) - mlen)
			break;
		mlen += (size_t)n;
	}
	pad = (8 - mlen % 8) % 8;
	h.hdr_size = (__u32)(sizeof(h) + mlen + pad);
	if (fwrite(&h, sizeof(h), 1, f) != 1 || fwrite(meta, mlen, 1, f) != 1 ||
	    (pad && fwrite(zeros, pad, 1, f) != 1))
		return -EIO;
	return 0;
}

static int cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void add_lost(uint64_t count, uint64_t ts)
{
	struct rec *p;
	struct rdt_ev_lost *l;

	if (fw.npend == PENDING_MAX)
		return;
	p = &fw.pend[fw.npend++];
	memset(p, 0, sizeof(*p));
	l = (struct rdt_ev_lost *)p->b;
	l->hdr.magic = RDT_REC_MAGIC;
	l->hdr.version = RDT_ABI_MAJOR;
	l->hdr.source = RDT_SRC_NCCL_PLUGIN;
	l->hdr.type = RDT_EV_LOST;
	l->hdr.size = sizeof(*l);
	l->hdr.ts_ns = ts;
	l->hdr.pid = np.pid;
	l->hdr.cpu = RDT_ANY_CPU;
	l->hdr.dev = RDT_NO_DEV;
	l->count = count;
	l->lost_source = RDT_SRC_NCCL_PLUGIN;
	l->lost_cpu = RDT_ANY_CPU;
	p->ts = ts;
	p->seq = fw.seq++;
}

/* What ring @r, read to @tail of @head after its wip_ts was @wip, can
 * still hand over lowers fw.hold: the live reader's argument
 * (lib/source_nccl_plugin.c, ring_hold()), in process. */
static void ring_hold(struct rdt_np_shm *s, struct rdt_np_ring *r,
		      uint64_t now, uint64_t wip, uint64_t tail, uint64_t head)
{
	uint64_t h = now;

	if (wip && wip < h && h - wip <= STALL_NS)
		h = wip;
	/* stopped short of head (the pending buffer is full): what is
	 * left starts at that record's stamp */
	if (tail != head) {
		uint64_t ts = ((const struct rdt_hdr *)rdt_np_slot(s, r, tail))->ts_ns;

		if (ts < h)
			h = ts;
	}
	if (h < fw.hold)
		fw.hold = h;
}

/* Move what the rings hold into the pending buffer. */
static void drain(void)
{
	struct rdt_np_shm *s = np.shm;
	uint64_t now = mono(), d;

	/* the clock before any wip_ts is read (ring_hold()) */
	atomic_thread_fence(memory_order_seq_cst);
	fw.hold = now;
	for (uint32_t i = 0; s && i < s->nrings; i++) {
		struct rdt_np_ring *r = rdt_np_ring_at(s, i);
		uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
		uint64_t wip = atomic_load_explicit(&r->wip_ts, memory_order_acquire);
		uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);

		for (; tail != head && fw.npend < PENDING_MAX - 2; tail++) {
			const struct rdt_hdr *h = rdt_np_slot(s, r, tail);
			struct rec *p = &fw.pend[fw.npend++];

			memcpy(p->b, h, h->size <= RDT_NP_SLOT ? h->size : RDT_NP_SLOT);
			p->ts = h->ts_ns;
			p->seq = fw.seq++;
		}
		ring_hold(s, r, now, wip, tail, head);
		atomic_store_explicit(&r->tail, tail, memory_order_release);
		d = atomic_load_explicit(&r->dropped, memory_order_relaxed);
		if (d > fw.seen_dropped[i]) {
			add_lost(d - fw.seen_dropped[i], now);
			fw.seen_dropped[i] = d;
		}
	}
	if (s) {
		d = atomic_load_explicit(&s->noring_dropped, memory_order_relaxed);
		if (d > fw.seen_noring) {
			add_lost(d - fw.seen_noring, now);
			fw.seen_noring = d;
		}
	}
}

/* Write the pending records older than @upto, in order. */
static void write_upto(uint64_t upto)
{
	size_t n = 0;

	qsort(fw.pend, fw.npend, sizeof(*fw.pend), cmp_rec);
	while (n < fw.npend && (fw.pend[n].ts < upto || fw.npend == PENDING_MAX)) {
		const struct rdt_hdr *h = (const void *)fw.pend[n].b;

		if (!fw.failed && fwrite(h, h->size, 1, fw.f) != 1)
			fw.failed = true;
		n++;
	}
	memmove(fw.pend, fw.pend + n, (fw.npend - n) * sizeof(*fw.pend));
	fw.npend -= n;
}

static void *writer(void *arg)
{
	struct timespec p = { 0, (long)PERIOD_NS };

	(void)arg;
	for (;;) {
		nanosleep(&p, NULL);
		pthread_mutex_lock(&fw.lock);
		if (!fw.running) {
			pthread_mutex_unlock(&fw.lock);
			break;
		}
		drain();
		/* In order: nothing a thread is still writing is earlier
		 * (issue 38; a fixed 50 ms window before). */
		write_upto(fw.hold);
		/* Whole records in the file at every period: a job killed
		 * (a hang's usual end, and the trace then matters most) leaves
		 * a file that decodes, missing only the last period. */
		if (fflush(fw.f))
			fw.failed = true;
		pthread_mutex_unlock(&fw.lock);
	}
	return NULL;
}

int np_file_start(const char *path)
{
	pthread_attr_t a;
	sigset_t all, old;
	int err;

	snprintf(fw.path, sizeof(fw.path), "%s", path);
	fw.f = fopen(path, "we");
	if (!fw.f)
		return -errno;
	fw.pend = malloc(PENDING_MAX * sizeof(*fw.pend));
	fw.seen_dropped = calloc(np.shm->nrings, sizeof(*fw.seen_dropped));
	if (!fw.pend || !fw.seen_dropped || write_header(fw.f) < 0) {
		free(fw.pend);
		free(fw.seen_dropped);
		fclose(fw.f);
		fw.f = NULL;
		return -ENOMEM;
	}
	fw.running = true;
	/* The writer takes none of the application's signals. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&a);
	err = pthread_create(&fw.thread, &a, writer, NULL);
	pthread_attr_destroy(&a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		fw.running = false;
		return -err;
	}
	pthread_detach(fw.thread);
	return 0;
}

/* finalize and process exit: everything the rings hold goes out now. */
void np_file_flush(void)
{
	if (!fw.f)
		return;
	pthread_mutex_lock(&fw.lock);
	drain();
	write_upto(UINT64_MAX);
	if (fflush(fw.f))
		fw.failed = true;
	pthread_mutex_unlock(&fw.lock);
}

/* A forked child has no writer thread and must never flush the parent's
 * buffered records into the parent's file (exit() would): it drops them,
 * and writes a file of its own from its first init (PATH.<pid>). */
void np_file_atfork_child(void)
{
	pthread_mutex_init(&fw.lock, NULL);
	if (fw.f) {
		__fpurge(fw.f);
		fclose(fw.f);
		fw.f = NULL;
	}
	free(fw.pend);
	free(fw.seen_dropped);
	fw.pend = NULL;
	fw.seen_dropped = NULL;
	fw.npend = 0;
	fw.seen_noring = 0;
	fw.running = false;
	fw.failed = false;
}

__attribute__((destructor)) static void np_file_at_exit(void)
{
	np_file_flush();
}
