// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * NCCL profiler plugin source: the rings libnccl-profiler-rdmatrace.so
 * keeps in DIR/rdmatrace-nccl.<pid> (nccl-profiler/np_ring.h), one file
 * per NCCL process, as one more live source of the merge.  The source
 * watches DIR for new processes, is each ring's one consumer (flock on the
 * file keeps a second reader out), turns the producers' drop counters into
 * LOST records, and removes a file once its process is gone and drained.
 * Every byte of a ring file is another process's: sizes are copied and
 * checked before use.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "../nccl-profiler/np_ring.h"

#define RESCAN_NS (200 * 1000000ull)

struct np_proc {
	struct np_proc	*next;
	char		*path;
	int		fd;
	struct rdt_np_shm *shm;
	size_t		len;
	uint32_t	pid, nrings;
	uint64_t	nslots, hdr_size, ring_size;
	uint64_t	*seen_dropped;
	uint64_t	seen_noring;
	bool		gone;		/* detached, file removed */
};

struct np_priv {
	struct rdt_src	*s;
	char		*dir;
	struct np_proc	*procs;
	/* files not to look at again: another reader's, or not rings */
	uint32_t	*ignored;
	size_t		nignored;
	uint64_t	last_scan;
	bool		scanned;
};

static struct rdt_np_ring *ring_at(const struct np_proc *p, uint32_t i)
{
	return (struct rdt_np_ring *)((char *)p->shm + p->hdr_size +
				      (uint64_t)i * p->ring_size);
}

static bool ignored(const struct np_priv *p, uint32_t pid)
{
	for (size_t i = 0; i < p->nignored; i++)
		if (p->ignored[i] == pid)
			return true;
	return false;
}

static void ignore(struct np_priv *p, uint32_t pid)
{
	uint32_t *v = realloc(p->ignored, (p->nignored + 1) * sizeof(*v));

	if (!v)
		return;
	v[p->nignored++] = pid;
	p->ignored = v;
}

static void detach(struct np_proc *pr)
{
	if (pr->shm) {
		atomic_store(&pr->shm->reader_pid, 0);
		munmap(pr->shm, pr->len);
	}
	if (pr->fd >= 0)
		close(pr->fd);
	pr->shm = NULL;
	pr->fd = -1;
}

/* Why a ring file cannot be read, or NULL: checked once, on local copies. */
static const char *check_layout(struct np_proc *pr, const struct stat *st)
{
	const struct rdt_np_shm *h = pr->shm;

	if (memcmp(h->magic, RDT_NP_SHM_MAGIC, sizeof(h->magic)))
		return "no ring magic";
	if (h->layout != RDT_NP_LAYOUT)
		return "ring layout of another version";
	pr->nrings = h->nrings;
	pr->nslots = h->nslots;
	pr->hdr_size = h->hdr_size;
	pr->ring_size = h->ring_size;
	if (h->slot_size != RDT_NP_SLOT || !pr->nrings || pr->nrings > 65536 ||
	    pr->nslots < 2 || (pr->nslots & (pr->nslots - 1)) ||
	    pr->hdr_size < sizeof(*h) ||
	    pr->ring_size != sizeof(struct rdt_np_ring) + pr->nslots * RDT_NP_SLOT ||
	    pr->hdr_size + pr->nrings * pr->ring_size > (uint64_t)st->st_size)
		return "inconsistent ring sizes";
	return NULL;
}

static void attach(struct np_priv *p, const char *name, uint32_t pid)
{
	struct rdt_src *s = p->s;
	struct np_proc *pr;
	struct stat st;
	const char *why;
	char *path;
	int fd;

	if (asprintf(&path, "%s/%s", p->dir, name) < 0)
		return;
	fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		rdt_src_add_status(s, "nccl-plugin: %s: %s: skipped\n", path,
			   strerror(errno));
		ignore(p, pid);
		free(path);
		return;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		rdt_src_add_status(s, "nccl-plugin: pid %u: %s is read by another "
			   "reader: skipped\n", pid, path);
		ignore(p, pid);
		close(fd);
		free(path);
		return;
	}
	/* Not yet whole (the plugin is creating it): next scan. */
	if (fstat(fd, &st) < 0 || (size_t)st.st_size < 4096) {
		close(fd);
		free(path);
		return;
	}
	pr = calloc(1, sizeof(*pr));
	if (!pr) {
		close(fd);
		free(path);
		return;
	}
	pr->fd = fd;
	pr->path = path;
	pr->pid = pid;
	pr->len = (size_t)st.st_size;
	pr->shm = mmap(NULL, pr->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pr->shm == MAP_FAILED) {
		pr->shm = NULL;
		rdt_src_add_status(s, "nccl-plugin: %s: mmap: %s: skipped\n", path,
			   strerror(errno));
		goto bad;
	}
	why = check_layout(pr, &st);
	if (why) {
		if (!strcmp(why, "no ring magic"))
			goto later;
		rdt_src_add_status(s, "nccl-plugin: %s: %s: skipped\n", path, why);
		goto bad;
	}
	pr->seen_dropped = calloc(pr->nrings, sizeof(*pr->seen_dropped));
	if (!pr->seen_dropped)
		goto later;
	atomic_store(&pr->shm->reader_pid, (uint32_t)getpid());
	rdt_src_add_status(s, "nccl-plugin: pid %u: %s, %u rings of %llu records\n",
		   pid, path, pr->nrings, (unsigned long long)pr->nslots);
	pr->next = p->procs;
	p->procs = pr;
	return;
bad:
	ignore(p, pid);
later:
	detach(pr);
	free(pr->seen_dropped);
	free(pr->path);
	free(pr);
}

static bool attached(const struct np_priv *p, uint32_t pid)
{
	for (const struct np_proc *pr = p->procs; pr; pr = pr->next)
		if (pr->pid == pid && !pr->gone)
			return true;
	return false;
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
		char *end;
		unsigned long pid;

		if (strncmp(e->d_name, RDT_NP_PREFIX, strlen(RDT_NP_PREFIX)))
			continue;
		pid = strtoul(n, &end, 10);
		if (*end || !*n || !pid || pid > UINT32_MAX ||
		    attached(p, (uint32_t)pid) || ignored(p, (uint32_t)pid))
			continue;
		attach(p, e->d_name, (uint32_t)pid);
	}
	closedir(d);
	p->scanned = true;
}

static int drain(struct np_priv *p, struct np_proc *pr)
{
	struct rdt_src *s = p->s;
	uint64_t now = rdt_now_mono(), d;
	char where[64];

	snprintf(where, sizeof(where), "nccl-plugin pid %u", pr->pid);
	for (uint32_t i = 0; i < pr->nrings; i++) {
		struct rdt_np_ring *r = ring_at(pr, i);
		uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
		uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);

		/* A head that ran off (a corrupt file) is read no further
		 * than one ring's worth. */
		if (head - tail > pr->nslots)
			tail = head - pr->nslots;
		for (; tail != head; tail++) {
			union {
				struct rdt_hdr h;
				unsigned char b[RDT_NP_SLOT];
			} rec;
			union rdt_record out;
			size_t used;

			memcpy(&rec, (char *)(r + 1) +
			       (tail & (pr->nslots - 1)) * RDT_NP_SLOT,
			       sizeof(rec));
			switch (rdt_decode(&rec, sizeof(rec), &out, &used, NULL)) {
			case RDT_DEC_OK:
			case RDT_DEC_UNKNOWN:
				if (rdt_src_push(s, &rec, sizeof(rec), where,
						 RDT_NO_OFF) < 0)
					return -EBADMSG;
				break;
			default:
				/* One process's bad slot is not the source's
				 * end: counted and skipped. */
				s->st.corrupt_bytes += RDT_NP_SLOT;
				if (!s->st.resyncs++)
					snprintf(s->corrupt_first,
						 sizeof(s->corrupt_first),
						 "%s ring %u record %llu", where,
						 i, (unsigned long long)tail);
				break;
			}
		}
		atomic_store_explicit(&r->tail, tail, memory_order_release);
		d = atomic_load_explicit(&r->dropped, memory_order_relaxed);
		if (d > pr->seen_dropped[i]) {
			rdt_src_push_lost(s, RDT_SRC_NCCL_PLUGIN, UINT32_MAX,
					  d - pr->seen_dropped[i], now, false);
			pr->seen_dropped[i] = d;
		}
	}
	d = atomic_load_explicit(&pr->shm->noring_dropped, memory_order_relaxed);
	if (d > pr->seen_noring) {
		rdt_src_push_lost(s, RDT_SRC_NCCL_PLUGIN, UINT32_MAX,
				  d - pr->seen_noring, now, false);
		pr->seen_noring = d;
	}
	return 0;
}

static bool proc_gone(const struct np_proc *pr)
{
	return kill((pid_t)pr->pid, 0) < 0 && errno == ESRCH;
}

static int np_fill(struct rdt_src *s)
{
	struct np_priv *p = s->priv;

	if (!p->scanned || (s->live && rdt_reader_pass_time(s->r) -
			    p->last_scan >= RESCAN_NS))
		scan(p);
	for (struct np_proc *pr = p->procs; pr; pr = pr->next) {
		bool gone;

		if (pr->gone)
			continue;
		/* Gone before the drain: nothing can follow the drain. */
		gone = proc_gone(pr);
		if (drain(p, pr) < 0)
			return -EBADMSG;
		if (gone) {
			unlink(pr->path);
			detach(pr);
			pr->gone = true;
		}
	}
	if (!s->live)
		s->eof = true;
	else	/* every ring drained */
		s->horizon = rdt_reader_drained_horizon(s->r,
						rdt_reader_pass_time(s->r));
	return 0;
}

static void np_finish(struct rdt_src *s)
{
	struct np_priv *p = s->priv;

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
		detach(pr);
		free(pr->seen_dropped);
		free(pr->path);
		free(pr);
	}
	free(p->ignored);
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
	rdt_local_file_hdr(&s->fh, NULL);
	s->meta = rdt_local_meta();
	scan(p);
	if (!p->procs)
		rdt_src_add_status(s, "nccl-plugin: no NCCL process with "
			   "libnccl-profiler-rdmatrace.so in %s%s\n", dir,
			   s->live ? " yet: watching for them" : "");
	return (int)s->idx;
}
