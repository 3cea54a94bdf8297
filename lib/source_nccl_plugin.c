// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * NCCL profiler plugin source: the rings libnccl-profiler-rdmatrace.so
 * keeps in DIR/rdmatrace-nccl.<pid> (producers/nccl-profiler/np_ring.h), one file
 * per NCCL process, as one more live source of the merge.  The source
 * watches DIR for new processes, is each ring's one consumer (flock on the
 * file keeps a second reader out), turns the producers' drop counters into
 * LOST records, and removes a file once its process is gone and drained.
 * Its horizon is exact for the producers' threads (ring_hold()): the
 * reader holds back what a writer may still publish before it.
 *
 * DIR is world-writable and the reader usually root, so every ring file is
 * another user's input (issue 31):
 *  - a file is read only if its owner is root, the reader, or the user the
 *    process its name gives runs as; opened without following a link, and
 *    only a regular file with one name;
 *  - the header's geometry is copied once, at attach, and checked; nothing
 *    that decides an offset or a loop bound is read from the file again;
 *    the consumer's tail is the reader's own copy, written back for the
 *    producer only;
 *  - the file is read with pread(), not through a shared mapping.  A file
 *    truncated under a mapping is SIGBUS in the reader, and a SIGBUS
 *    guard (a process-wide handler, a jump buffer per thread) would be a
 *    library's claim on a signal its caller may own.  pread() of a
 *    truncated file is a short read: the ring is detached with one line
 *    and counted (rdt_source_stats.detached), every other source goes on.
 *    The price is two system calls per ring per pass (its wip_ts, then
 *    its head: ring_hold() says why two) and one per run of records
 *    (bench: nccl.plugin.reader_ns_per_event);
 *  - head - tail is bounded by the ring's size, every record is decoded
 *    on a private copy: a ring that lies is detached, a record that lies
 *    is counted corrupt and skipped;
 *  - whether a file's process is gone is asked of a pidfd taken at attach
 *    (and checked against the header's start time), one poll() per pass;
 *    /proc, which another process can make slow or hide, only where no
 *    pidfd can be had.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <poll.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "../producers/nccl-profiler/np_ring.h"
#include "../producers/nccl-profiler/np_stale.h"

#define RESCAN_NS (200 * 1000000ull)
/* The plugin's own limit (RDMATRACE_NCCL_RINGS): more is a lie, and a
 * pread per ring per pass. */
#define MAX_RINGS 4096
/* Records copied per pread(): a private buffer, whatever the ring's size. */
#define CHUNK 256
/* Lines naming skipped files, per source; the rest are counted only. */
#define MAX_SKIP_LINES 64

struct np_proc {
	struct np_proc	*next;
	char		*path;
	int		fd;
	dev_t		dev;
	ino_t		ino;
	/* the header's geometry as checked at attach: never read again */
	uint32_t	pid, nrings;
	uint64_t	start_time, pidns;	/* who made the file (np_stale.h) */
	uint64_t	nslots, hdr_size, ring_size;
	uint64_t	*tail;		/* the reader's: the file's is a copy */
	uint64_t	*seen_dropped;
	uint64_t	seen_noring;
	uint64_t	kept;		/* records handed to the merge */
	uint32_t	layout;		/* the header's, checked */
	/* none of its unread records is earlier (ring_hold()), as of the
	 * last drain */
	uint64_t	hold;
	/* The process, held from attach: whether it is gone is one poll()
	 * a pass, not /proc (kill(), then stat's start time: five system
	 * calls).  -1: judged by np_stale.h's rdt_np_gone(). */
	int		pidfd;
	bool		dead;		/* gone already at attach */
	bool		gone;		/* done with: freed at the next fill */
};

struct np_priv {
	struct rdt_src	*s;
	char		*dir;
	struct np_proc	*procs;
	/* files not to look at again, sorted: another reader's, another
	 * user's, not rings, or detached */
	uint32_t	*ignored;
	size_t		nignored, capignored;
	unsigned int	skip_lines;
	uint64_t	last_scan;
	bool		scanned;
	int		watch;		/* DIR watched (np_stale.h), -1: not */
	/* this fill's clock, read before any ring's wip_ts (ring_hold()) */
	uint64_t	t0;
	const struct rdt_pass *pass;	/* this fill's (ring_hold()) */
	bool		stall_said;	/* a writer not waited for: said once */
	unsigned char	buf[CHUNK * RDT_NP_SLOT];
};

static size_t ignored_at(const struct np_priv *p, uint32_t pid)
{
	size_t lo = 0, hi = p->nignored;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->ignored[mid] < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Binary search: a directory full of junk names is read every scan. */
static bool ignored(const struct np_priv *p, uint32_t pid)
{
	size_t i = ignored_at(p, pid);

	return i < p->nignored && p->ignored[i] == pid;
}

static void ignore(struct np_priv *p, uint32_t pid)
{
	size_t i = ignored_at(p, pid);

	if (i < p->nignored && p->ignored[i] == pid)
		return;
	if (p->nignored == p->capignored) {
		size_t cap = p->capignored ? 2 * p->capignored : 16;
		uint32_t *v = realloc(p->ignored, cap * sizeof(*v));

		if (!v)
			return;
		p->ignored = v;
		p->capignored = cap;
	}
	memmove(p->ignored + i + 1, p->ignored + i,
		(p->nignored - i) * sizeof(*p->ignored));
	p->ignored[i] = pid;
	p->nignored++;
}

/* A file not read, said once (it is ignored from then on), counted in
 * skipped_files when @untrusted; past MAX_SKIP_LINES only counted, so that
 * a directory of junk does not grow the status without bound. */
static void skip(struct np_priv *p, uint32_t pid, bool untrusted,
		 const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void skip(struct np_priv *p, uint32_t pid, bool untrusted,
		 const char *fmt, ...)
{
	char line[512];
	va_list ap;

	ignore(p, pid);
	if (untrusted)
		p->s->st.skipped_files++;
	if (p->skip_lines > MAX_SKIP_LINES)
		return;
	if (p->skip_lines++ == MAX_SKIP_LINES) {
		rdt_src_add_status(p->s, "nccl-plugin: more files skipped: "
				   "counted, not named\n");
		return;
	}
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	rdt_src_add_status(p->s, "nccl-plugin: pid %u: %s: skipped\n", pid,
			   line);
}

static int pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done,
				  (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return -ENODATA;	/* past the end: truncated */
		done += (size_t)n;
	}
	return 0;
}

/* The reader's tail, for the producer.  A file truncated since the last
 * read grows back by the write (a hole up to this ring's header): that is
 * the truncating user's file, and the ring is detached at its next read. */
static void write_tail(const struct np_proc *pr, uint32_t i)
{
	uint64_t t = pr->tail[i];
	off_t off = (off_t)(pr->hdr_size + (uint64_t)i * pr->ring_size +
			    offsetof(struct rdt_np_ring, tail));

	/* The slots were copied before the producer may reuse them. */
	atomic_thread_fence(memory_order_release);
	if (pwrite(pr->fd, &t, sizeof(t), off) != (ssize_t)sizeof(t))
		return;	/* the producer sees a full ring and counts drops */
}

static void detach(struct np_proc *pr)
{
	if (pr->fd >= 0) {
		uint32_t none = 0;

		if (pwrite(pr->fd, &none, sizeof(none),
			   offsetof(struct rdt_np_shm, reader_pid)) < 0) {
			/* the writer's loss: nothing to undo */
		}
		close(pr->fd);
	}
	pr->fd = -1;
}

static void free_proc(struct np_proc *pr)
{
	detach(pr);
	if (pr->pidfd >= 0)
		close(pr->pidfd);
	free(pr->tail);
	free(pr->seen_dropped);
	free(pr->path);
	free(pr);
}

/* Given up on while read: said once, with what was kept; its unread
 * events are lost, count unknown; the process is not read again. */
static void give_up(struct np_priv *p, struct np_proc *pr, const char *why)
{
	struct rdt_src *s = p->s;

	rdt_src_add_status(s, "nccl-plugin: pid %u: %s: detached, %llu "
			   "records kept\n", pr->pid, why,
			   (unsigned long long)pr->kept);
	if (!s->st.detached++)
		snprintf(s->detached_first, sizeof(s->detached_first),
			 "pid %u: %s", pr->pid, why);
	detach(pr);
	pr->gone = true;
	ignore(p, pr->pid);
}

/* Why a ring file cannot be read, or NULL, from a private copy of its
 * header: the only time the geometry is read. */
static const char *check_layout(struct np_proc *pr, const struct rdt_np_shm *h,
				uint64_t size)
{
	if (memcmp(h->magic, RDT_NP_SHM_MAGIC, sizeof(h->magic)))
		return "no ring magic";
	if (h->layout < RDT_NP_LAYOUT_MIN || h->layout > RDT_NP_LAYOUT)
		return "ring layout of another version";
	pr->nrings = h->nrings;
	pr->nslots = h->nslots;
	pr->hdr_size = h->hdr_size;
	pr->ring_size = h->ring_size;
	pr->start_time = h->start_time;
	pr->pidns = h->pidns;
	pr->layout = h->layout;
	if (h->slot_size != RDT_NP_SLOT || !pr->nrings ||
	    pr->nrings > MAX_RINGS || pr->nslots < 2 ||
	    (pr->nslots & (pr->nslots - 1)) || pr->hdr_size < sizeof(*h) ||
	    pr->hdr_size > (1u << 20) ||
	    pr->ring_size != sizeof(struct rdt_np_ring) + pr->nslots * RDT_NP_SLOT ||
	    pr->hdr_size + pr->nrings * pr->ring_size > size)
		return "inconsistent ring sizes";
	if (h->pid != pr->pid)
		return "header of another process";
	return NULL;
}

/* The user ids of process @pid (real, effective, saved, filesystem), from
 * /proc; false if there is no such process (or it cannot be seen). */
static bool proc_uids(uint32_t pid, unsigned int uid[4])
{
	char buf[2048], *l;

	if (!rdt_np_proc_read(pid, "status", buf, sizeof(buf)))
		return false;
	l = strstr(buf, "\nUid:");
	return l && sscanf(l + 5, "%u %u %u %u", &uid[0], &uid[1], &uid[2],
			   &uid[3]) == 4;
}

/* Why the file is not to be trusted, or NULL: it must be a regular file of
 * one name, owned by root, by this reader's user, or by the user that
 * process @pid runs as (what the plugin in it makes). */
static const char *check_owner(uint32_t pid, const struct stat *st,
			       char *why, size_t n)
{
	unsigned int uid[4];

	if (!S_ISREG(st->st_mode))
		return "not a regular file";
	if (st->st_nlink != 1) {
		snprintf(why, n, "%ju names (hard links)",
			 (uintmax_t)st->st_nlink);
		return why;
	}
	if (st->st_uid == 0 || st->st_uid == geteuid())
		return NULL;
	if (!proc_uids(pid, uid)) {
		snprintf(why, n, "owned by uid %u, and no process %u to check "
			 "it against", (unsigned int)st->st_uid, pid);
		return why;
	}
	for (int i = 0; i < 4; i++)
		if (uid[i] == st->st_uid)
			return NULL;
	snprintf(why, n, "owned by uid %u, but process %u runs as uid %u",
		 (unsigned int)st->st_uid, pid, uid[1]);
	return why;
}

/*
 * A pidfd on the file's process.  Opened before the start time is read:
 * if /proc's process at that pid started when the header says, it is the
 * pidfd's (one that took the pid after the open started after the file
 * was found, later than the header's time).  Another namespace's pid is
 * not ours to open (np_stale.h never judges it); where pidfd_open() is
 * missing (before 5.3) or /proc hides the start time, rdt_np_gone().
 */
static void hold_proc(struct np_proc *pr)
{
#ifdef SYS_pidfd_open
	uint64_t started;
	int fd;

	if (!pr->pid || pr->pid > INT_MAX ||
	    (pr->pidns && pr->pidns != rdt_np_pidns()))
		return;
	fd = (int)syscall(SYS_pidfd_open, (pid_t)pr->pid, 0u);
	if (fd < 0) {
		pr->dead = errno == ESRCH;
		return;
	}
	if (pr->start_time) {
		started = rdt_np_start_time(pr->pid);
		if (started != pr->start_time) {
			/* another process holds the pid now: gone */
			pr->dead = started != 0;
			close(fd);
			return;
		}
	}
	pr->pidfd = fd;
#else
	(void)pr;
#endif
}

static void attach(struct np_priv *p, int dfd, const char *name, uint32_t pid)
{
	struct rdt_src *s = p->s;
	struct rdt_np_shm h;
	struct np_proc *pr;
	struct stat st;
	const char *why = NULL;
	char whyb[128];
	char *path;
	int fd, e;

	if (asprintf(&path, "%s/%s", p->dir, name) < 0)
		return;
	/* No link followed, no FIFO waited on, no terminal taken. */
	fd = openat(dfd, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK |
		    O_NOCTTY);
	if (fd < 0) {
		skip(p, pid, errno != ENOENT, "%s: %s", path,
		     errno == ELOOP ? "a symbolic link" : strerror(errno));
		free(path);
		return;
	}
	if (fstat(fd, &st) < 0 || (why = check_owner(pid, &st, whyb,
						     sizeof(whyb)))) {
		skip(p, pid, true, "%s: %s", path, why ? why : strerror(errno));
		goto out;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		skip(p, pid, false, "%s is read by another reader", path);
		goto out;
	}
	/* Not yet whole (the plugin is creating it): next scan. */
	if (st.st_size < 4096)
		goto out;
	e = pread_all(fd, &h, sizeof(h), 0);
	if (e < 0)
		goto out;	/* shrunk since the fstat: next scan */
	pr = calloc(1, sizeof(*pr));
	if (!pr)
		goto out;
	pr->pidfd = -1;
	pr->fd = fd;
	pr->path = path;
	pr->pid = pid;
	pr->dev = st.st_dev;
	pr->ino = st.st_ino;
	why = check_layout(pr, &h, (uint64_t)st.st_size);
	if (why) {
		pr->fd = -1;
		pr->path = NULL;
		free_proc(pr);
		if (strcmp(why, "no ring magic"))	/* else: next scan */
			skip(p, pid, true, "%s: %s", path, why);
		goto out;
	}
	pr->tail = calloc(pr->nrings, sizeof(*pr->tail));
	pr->seen_dropped = calloc(pr->nrings, sizeof(*pr->seen_dropped));
	if (!pr->tail || !pr->seen_dropped) {
		pr->fd = -1;
		pr->path = NULL;
		free_proc(pr);
		goto out;
	}
	/* What an earlier reader consumed stays consumed; the first read
	 * checks the value against head. */
	for (uint32_t i = 0; i < pr->nrings; i++)
		if (pread_all(fd, &pr->tail[i], sizeof(pr->tail[i]),
			      pr->hdr_size + (uint64_t)i * pr->ring_size +
			      offsetof(struct rdt_np_ring, tail)) < 0) {
			pr->tail[i] = 0;
		}
	{
		uint32_t me = (uint32_t)getpid();

		if (pwrite(fd, &me, sizeof(me),
			   offsetof(struct rdt_np_shm, reader_pid)) < 0) {
			/* only the plugin's own report misses it */
		}
	}
	hold_proc(pr);
	rdt_src_add_status(s, "nccl-plugin: pid %u: %s, %u rings of %llu records\n",
		   pid, path, pr->nrings, (unsigned long long)pr->nslots);
	pr->next = p->procs;
	p->procs = pr;
	return;
out:
	close(fd);
	free(path);
}

static bool attached(const struct np_priv *p, uint32_t pid)
{
	for (const struct np_proc *pr = p->procs; pr; pr = pr->next)
		if (pr->pid == pid && !pr->gone)
			return true;
	return false;
}

static struct np_proc *proc_of(const struct np_priv *p, uint32_t pid)
{
	for (struct np_proc *pr = p->procs; pr; pr = pr->next)
		if (pr->pid == pid && !pr->gone)
			return pr;
	return NULL;
}

static int drain(struct np_priv *p, struct np_proc *pr);

/* The name of an attached process's file now names another file (the
 * plugin made a new one, or the pid was reused): what is left in the old
 * one is read, and the new one is attached as any other. */
static void check_replaced(struct np_priv *p, int dfd, const char *name,
			   struct np_proc *pr)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    (st.st_dev == pr->dev && st.st_ino == pr->ino))
		return;
	if (drain(p, pr) > 0)
		return;		/* given up on: said so */
	rdt_src_add_status(p->s, "nccl-plugin: pid %u: %s is a new file: "
			   "the old one read to its end\n", pr->pid, pr->path);
	detach(pr);
	pr->gone = true;
}

static void scan(struct np_priv *p)
{
	DIR *d = opendir(p->dir);
	struct dirent *e;

	p->last_scan = rdt_now_mono();
	if (!d) {
		if (!p->scanned)
			rdt_src_add_status(p->s, "nccl-plugin: %s: %s\n", p->dir,
				   strerror(errno));
		p->scanned = true;
		return;
	}
	while ((e = readdir(d))) {
		const char *n = e->d_name + strlen(RDT_NP_PREFIX);
		struct np_proc *pr;
		char *end;
		unsigned long pid;

		if (strncmp(e->d_name, RDT_NP_PREFIX, strlen(RDT_NP_PREFIX)))
			continue;
		pid = strtoul(n, &end, 10);
		if (*end || !*n || *n == '0' || !pid || pid > UINT32_MAX ||
		    ignored(p, (uint32_t)pid))
			continue;
		pr = proc_of(p, (uint32_t)pid);
		if (pr)
			check_replaced(p, dirfd(d), e->d_name, pr);
		if (!attached(p, (uint32_t)pid))
			attach(p, dirfd(d), e->d_name, (uint32_t)pid);
	}
	closedir(d);
	p->scanned = true;
}

/* Layout 3's wip_ts of ring @i (0 for older layouts: not kept there). */
static int ring_wip(const struct np_proc *pr, uint32_t i, uint64_t *wip)
{
	int e;

	*wip = 0;
	if (pr->layout < RDT_NP_LAYOUT_WIP)
		return 0;
	e = pread_all(pr->fd, wip, sizeof(*wip), pr->hdr_size +
		      (uint64_t)i * pr->ring_size +
		      offsetof(struct rdt_np_ring, wip_ts));
	/* the head read next is not older than this wip_ts (acquire) */
	atomic_thread_fence(memory_order_acquire);
	return e;
}

/*
 * What ring @i can still hand over, once read to the head that was read
 * after @wip (its wip_ts), lowers pr->hold: no unread record of the ring
 * is earlier than what it contributes (issue 38).
 *
 * The writer, per record (producers/nccl-profiler/rings.c): W1 wip_ts = clock
 * (seq_cst); W2 stamp = clock; W3 fill the slot; W4 head = k + 1
 * (release); W5 wip_ts = 0 (release).  This reader: R0 t0 = clock, then
 * a full fence (np_fill()), R1 read wip_ts, acquire, R2 read head.  Take
 * any record k the reader has not read, so R2 did not see W4 of k:
 *  - R1 saw W1 of k: wip = W1's clock <= k's stamp.  Held to wip.
 *  - R1 saw a value older than W1 of k (0 from the record before, or its
 *    wip): R1 came before W1 of k in wip_ts' order, and with the fences
 *    on both sides (a store-buffering pair) k's stamp, read after W1 was
 *    visible, is later than t0, read before R1.  Held to t0.
 *  - R1 saw W5 of k or anything after it: then R2 (after R1's acquire)
 *    sees W4 of k or later, and k was read.  Cannot be.
 * So every unread record's stamp is >= min(t0, wip) (wip 0: t0).  The
 * order of R1 and R2 is why wip_ts is read on its own, before the head's
 * line: one pread() of both copies them in no promised order.
 *
 * A wip that is older than the stall limit (a writer stopped or killed
 * between W1 and W5) holds nothing back: the merge goes on, and its
 * record, when it comes, is late and flagged as such.  Layouts 1 and 2
 * keep no wip_ts: the reorder window, as before.
 */
static void ring_hold(struct np_priv *p, struct np_proc *pr, uint32_t i,
		      uint64_t wip)
{
	struct rdt_src *s = p->s;
	uint64_t h = p->t0;

	if (pr->layout < RDT_NP_LAYOUT_WIP) {
		h = rdt_pass_drained_horizon(p->pass, p->t0);
	} else if (wip && wip < h) {
		if (h - wip <= p->pass->stall_ns) {
			h = wip;
		} else if (!p->stall_said) {
			p->stall_said = true;
			rdt_src_add_status(s, "nccl-plugin: pid %u ring %u: a "
				"record in progress for %llu ms: not waited "
				"for (it will be late)\n", pr->pid, i,
				(unsigned long long)((h - wip) / 1000000));
		}
	}
	if (h < pr->hold)
		pr->hold = h;
}

/* One ring's records from @tail to @head (at most a ring's worth), in
 * runs of at most CHUNK records per pread.  Returns 0, -EBADMSG (the
 * source stops), or 1 with @why set (the process is given up on). */
static int drain_ring(struct np_priv *p, struct np_proc *pr, uint32_t i,
		      uint64_t head, const char *where, const char **why)
{
	struct rdt_src *s = p->s;
	uint64_t base = pr->hdr_size + (uint64_t)i * pr->ring_size +
			sizeof(struct rdt_np_ring);

	while (pr->tail[i] != head) {
		uint64_t tail = pr->tail[i], slot = tail & (pr->nslots - 1);
		uint64_t n = head - tail;

		/* to the ring's end, at most a buffer */
		if (n > pr->nslots - slot)
			n = pr->nslots - slot;
		if (n > CHUNK)
			n = CHUNK;
		if (pread_all(pr->fd, p->buf, n * RDT_NP_SLOT,
			      base + slot * RDT_NP_SLOT) < 0) {
			*why = "ring truncated while read";
			return 1;
		}
		for (uint64_t k = 0; k < n; k++, tail++) {
			unsigned char *rec = p->buf + k * RDT_NP_SLOT;
			union rdt_record out;
			struct rdt_hdr h;
			size_t used;
			int dec = rdt_decode(rec, RDT_NP_SLOT, &out, &used, NULL);

			/* A process speaks for itself only: a record that
			 * names another pid would put events on it. */
			memcpy(&h, rec, sizeof(h));
			if ((dec == RDT_DEC_OK || dec == RDT_DEC_UNKNOWN) &&
			    h.pid == pr->pid) {
				if (rdt_src_push(s, rec, RDT_NP_SLOT, where,
						 RDT_NO_OFF) < 0)
					return -EBADMSG;
				pr->kept++;
				continue;
			}
			/* One process's bad slot is not the source's end:
			 * counted and skipped. */
			s->st.corrupt_bytes += RDT_NP_SLOT;
			if (!s->st.resyncs++)
				snprintf(s->corrupt_first, sizeof(s->corrupt_first),
					 "%s ring %u record %llu%s", where, i,
					 (unsigned long long)tail,
					 dec == RDT_DEC_OK || dec == RDT_DEC_UNKNOWN ?
					 ": another process's pid" : "");
		}
		pr->tail[i] = tail;
	}
	return 0;
}

/* Returns 0, -EBADMSG (the source stops) or 1: the process was given up
 * on (said and counted). */
static int drain(struct np_priv *p, struct np_proc *pr)
{
	struct rdt_src *s = p->s;
	uint64_t now = rdt_now_mono(), d;
	const char *why = NULL;
	char where[64], whyb[96];
	int ret = 0;

	snprintf(where, sizeof(where), "nccl-plugin pid %u", pr->pid);
	pr->hold = UINT64_MAX;
	for (uint32_t i = 0; i < pr->nrings && !ret; i++) {
		uint64_t rh[sizeof(struct rdt_np_ring) / 8];
		uint64_t head, was = pr->tail[i], wip = 0;

		/* wip_ts before head: ring_hold() says why */
		if (ring_wip(pr, i, &wip) < 0 ||
		    pread_all(pr->fd, rh, sizeof(rh), pr->hdr_size +
			      (uint64_t)i * pr->ring_size) < 0) {
			why = "ring truncated while read";
			ret = 1;
			break;
		}
		/* head before the slots it covers (np_ring.h's acquire) */
		atomic_thread_fence(memory_order_acquire);
		head = rh[offsetof(struct rdt_np_ring, head) / 8];
		d = rh[offsetof(struct rdt_np_ring, dropped) / 8];
		/* The producer never runs more than a ring ahead of the
		 * consumer, nor back: a head that does was rewritten. */
		if (head - was > pr->nslots) {
			snprintf(whyb, sizeof(whyb), "ring %u's head %llu "
				 "out of its tail's range (%llu)", i,
				 (unsigned long long)head,
				 (unsigned long long)was);
			why = whyb;
			ret = 1;
			break;
		}
		ret = drain_ring(p, pr, i, head, where, &why);
		if (pr->tail[i] != was)
			write_tail(pr, i);
		ring_hold(p, pr, i, wip);
		if (d > pr->seen_dropped[i]) {
			rdt_src_push_lost(s, RDT_SRC_NCCL_PLUGIN, UINT32_MAX,
					  d - pr->seen_dropped[i], now, false);
			pr->seen_dropped[i] = d;
		}
	}
	if (ret < 0)
		return ret;
	if (!ret && pread_all(pr->fd, &d, sizeof(d),
			      offsetof(struct rdt_np_shm, noring_dropped)) < 0) {
		why = "ring truncated while read";
		ret = 1;
	}
	if (ret) {
		give_up(p, pr, why);
		return 1;
	}
	if (d > pr->seen_noring) {
		rdt_src_push_lost(s, RDT_SRC_NCCL_PLUGIN, UINT32_MAX,
				  d - pr->seen_noring, now, false);
		pr->seen_noring = d;
	}
	return 0;
}

/* Removed only while the name is still the file read: not a successor's. */
static void remove_file(const struct np_proc *pr)
{
	struct stat st;

	if (lstat(pr->path, &st) == 0 && st.st_dev == pr->dev &&
	    st.st_ino == pr->ino)
		unlink(pr->path);
}

static bool proc_gone(const struct np_proc *pr)
{
	struct pollfd pf = { .fd = pr->pidfd, .events = POLLIN };

	if (pr->dead)
		return true;
	if (pr->pidfd < 0)
		return rdt_np_gone(pr->pid, pr->start_time, pr->pidns);
	/* Readable once the whole process has exited: a zombie writes no
	 * more either.  An error says nothing: alive. */
	return poll(&pf, 1, 0) > 0 && (pf.revents & (POLLIN | POLLHUP));
}

/* How often a live reader looks for new processes: what it holds back is
 * no later than its last look (np_fill()), so at most a quarter of the
 * window behind, never what delays the stream. */
static uint64_t rescan_ns(const struct rdt_pass *pass)
{
	uint64_t w = pass->window_ns / 4;

	return w < RESCAN_NS ? w : RESCAN_NS;
}

static int np_fill(struct rdt_src *s, const struct rdt_pass *pass)
{
	struct np_priv *p = s->priv;
	uint64_t hold, now;

	p->pass = pass;
	/* The pass's clock (maybe a reading some passes old) is enough to
	 * tell when to look again. */
	now = pass->now;
	if (!p->scanned || (s->live && now >= p->last_scan &&
			    now - p->last_scan >= rescan_ns(pass)))
		scan(p);
	/* A process whose file the last scan did not find made it after
	 * that scan began, and stamps its records later still. */
	hold = p->last_scan;
	/* R0 of ring_hold(): the clock, then a full fence, before any
	 * ring's wip_ts is read; not needed while there is no ring (a clock
	 * read per pass is a cost while the reader follows a backlog). */
	if (p->procs) {
		p->t0 = rdt_now_mono();
		atomic_thread_fence(memory_order_seq_cst);
		if (p->t0 < hold)
			hold = p->t0;
	}
	for (struct np_proc **pp = &p->procs, *pr; (pr = *pp);) {
		bool gone;
		int e = 0;

		if (!pr->gone) {
			/* Gone before the drain: nothing can follow it. */
			gone = proc_gone(pr);
			e = drain(p, pr);
			if (e < 0)
				return -EBADMSG;
			if (gone && !e) {
				remove_file(pr);
				pr->gone = true;
			}
			/* Gone before its drain, or given up on: it
			 * hands over nothing more. */
			if (!gone && !e && pr->hold < hold)
				hold = pr->hold;
		}
		/* Done with (gone, replaced, given up): freed, so that a
		 * long run's memory follows the live processes, not all
		 * there were. */
		if (pr->gone) {
			*pp = pr->next;
			free_proc(pr);
		} else {
			pp = &pr->next;
		}
	}
	if (!s->live)
		s->eof = true;
	else	/* every ring drained, up to what a writer is writing */
		s->horizon = hold;
	return 0;
}

static void np_finish(struct rdt_src *s, const struct rdt_pass *pass)
{
	struct np_priv *p = s->priv;

	p->pass = pass;
	for (struct np_proc *pr = p->procs; pr; pr = pr->next)
		if (!pr->gone)
			drain(p, pr);
}

static void np_close(struct rdt_src *s)
{
	struct np_priv *p = s->priv;

	if (!p)
		return;
	while (p->procs) {
		struct np_proc *pr = p->procs;

		p->procs = pr->next;
		free_proc(pr);
	}
	free(p->ignored);
	if (p->watch >= 0)
		close(p->watch);
	free(p->dir);
	free(p);
	s->priv = NULL;
}

static const struct rdt_src_ops np_ops = {
	.fill = np_fill,
	.finish = np_finish,
	.close = np_close,
};

static const char *np_dir(const char *dir)
{
	const char *env = getenv(RDT_NP_DIR_ENV);

	if (dir && *dir)
		return dir;
	return env && *env ? env : RDT_NP_DIR_DEFAULT;
}

RDT_EXPORT unsigned int rdt_nccl_plugin_files(const char *dir)
{
	DIR *d = opendir(np_dir(dir));
	struct dirent *e;
	unsigned int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += !strncmp(e->d_name, RDT_NP_PREFIX, strlen(RDT_NP_PREFIX));
	closedir(d);
	return n;
}

/* At the reader's start: files of processes killed while creating them
 * (never whole: no reader drains them) go; whole ones are drained, then
 * removed (np_fill).  A live reader watches DIR, so that a process ending
 * before its next scan leaves its file for it. */
static void np_tidy(struct np_priv *p)
{
	rdt_np_sweep(p->dir, RDT_NP_SWEEP_KEEP_WHOLE);
	p->watch = p->s->live ? rdt_np_watch(p->dir) : -1;
}

RDT_EXPORT int rdt_reader_add_nccl_plugin(struct rdt_reader *r, const char *dir)
{
	struct rdt_src *s;
	struct np_priv *p;

	dir = np_dir(dir);
	s = rdt_reader_new_src(r, RDT_SOURCE_NCCL_PLUGIN, "nccl-plugin");
	if (!s)
		return -ENOMEM;
	p = calloc(1, sizeof(*p));
	if (!p || !(p->dir = strdup(dir))) {
		free(p);
		rdt_reader_set_error(r, "nccl-plugin: out of memory");
		rdt_reader_drop_src(r, s);
		return -ENOMEM;
	}
	p->s = s;
	s->priv = p;
	s->ops = &np_ops;
	/* ring_hold(): exact, or the reorder window for old layouts */
	s->exact = true;
	s->holds = true;
	np_tidy(p);
	rdt_local_file_hdr(&s->fh, NULL);
	s->meta = rdt_local_meta();
	scan(p);
	if (!p->procs)
		rdt_src_add_status(s, "nccl-plugin: no NCCL process with "
			   "libnccl-profiler-rdmatrace.so in %s%s\n", dir,
			   s->live ? " yet: watching for them" : "");
	return (int)s->idx;
}
