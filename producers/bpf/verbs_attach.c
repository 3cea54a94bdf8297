// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Finding a userspace provider's data path without debug symbols: open
 * each RDMA device, read the context's ops table (the functions
 * ibv_post_send() and friends call, inline in verbs.h), map each pointer
 * to its ELF file and file offset through /proc/self/maps, and put the
 * uprobes there.  A uprobe is on the file, so every process that maps the
 * same provider file is traced, those started before the tracer too.
 *
 * libibverbs is opened at run time (dlopen): the tracer runs, without
 * this source, where rdma-core is not installed.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <infiniband/verbs.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <rdmatrace/wire.h>
#include "rdt_bpf_int.h"
#include "verbs.skel.h"
#include "verbs_cookies.h"

struct verbs_lib {
	void *h;
	struct ibv_device **(*get_list)(int *);
	void (*free_list)(struct ibv_device **);
	struct ibv_context *(*open)(struct ibv_device *);
	int (*close)(struct ibv_context *);
	const char *(*name)(struct ibv_device *);
	int (*index)(struct ibv_device *);
	/* a throwaway QP, to read the provider's ibv_qp_ex functions */
	struct ibv_pd *(*alloc_pd)(struct ibv_context *);
	int (*dealloc_pd)(struct ibv_pd *);
	struct ibv_cq *(*create_cq)(struct ibv_context *, int, void *, struct ibv_comp_channel *,
				    int);
	int (*destroy_cq)(struct ibv_cq *);
	int (*destroy_qp)(struct ibv_qp *);
	struct ibv_qp_ex *(*qp_to_qp_ex)(struct ibv_qp *);
};

static bool verbs_lib_open(struct verbs_lib *l, char *why, size_t n)
{
	memset(l, 0, sizeof(*l));
	l->h = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!l->h) {
		snprintf(why, n, "libibverbs.so.1 not found (rdma-core)");
		return false;
	}
	l->get_list = (struct ibv_device **(*)(int *))dlsym(l->h, "ibv_get_device_list");
	l->free_list = (void (*)(struct ibv_device **))dlsym(l->h, "ibv_free_device_list");
	l->open = (struct ibv_context *(*)(struct ibv_device *))dlsym(l->h, "ibv_open_device");
	l->close = (int (*)(struct ibv_context *))dlsym(l->h, "ibv_close_device");
	l->name = (const char *(*)(struct ibv_device *))dlsym(l->h, "ibv_get_device_name");
	/* rdma-core 24 and later; without it the records say RDT_NO_DEV */
	l->index = (int (*)(struct ibv_device *))dlsym(l->h, "ibv_get_device_index");
	l->alloc_pd = (struct ibv_pd *(*)(struct ibv_context *))dlsym(l->h, "ibv_alloc_pd");
	l->dealloc_pd = (int (*)(struct ibv_pd *))dlsym(l->h, "ibv_dealloc_pd");
	l->create_cq = (struct ibv_cq *(*)(struct ibv_context *, int, void *,
					  struct ibv_comp_channel *, int))dlsym(l->h, "ibv_create_cq");
	l->destroy_cq = (int (*)(struct ibv_cq *))dlsym(l->h, "ibv_destroy_cq");
	l->destroy_qp = (int (*)(struct ibv_qp *))dlsym(l->h, "ibv_destroy_qp");
	/* rdma-core 24 and later: without it, no ibv_qp_ex probes */
	l->qp_to_qp_ex = (struct ibv_qp_ex *(*)(struct ibv_qp *))dlsym(l->h, "ibv_qp_to_qp_ex");
	if (!l->get_list || !l->free_list || !l->open || !l->close || !l->name) {
		snprintf(why, n, "libibverbs.so.1 lacks the device calls");
		dlclose(l->h);
		l->h = NULL;
		return false;
	}
	return true;
}

/* The ELF file and file offset of code address @addr in this process. */
bool rdt_verbs_addr_to_file(uintptr_t addr, char *path, size_t n, uint64_t *off)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[4096];
	bool found = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end, foff;
		char perms[8];
		int pos = 0;

		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %n", &start, &end, perms,
			   &foff, &pos) < 4 || !pos)
			continue;
		if (addr < start || addr >= end || perms[2] != 'x' || line[pos] != '/')
			continue;
		line[strcspn(line, "\n")] = 0;
		snprintf(path, n, "%s", line + pos);
		*off = addr - start + foff;
		found = true;
		break;
	}
	fclose(f);
	return found;
}

/* FNV-1a, as verbs.bpf.c hashes a device's name. */
static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

struct probe {
	char path[512];
	uint64_t off;
	int op;
	uint64_t cookie;	/* OP_WR: the IBV_WR_* opcode */
};

/*
 * Up to 31 functions a distinct provider (5 ops, 12 ibv_qp_ex, 10
 * ibv_cq_ex, with room to spare): 4 providers at once.  What does not fit
 * is counted and said.
 */
#define MAX_PROBES 128

struct probe_set {
	struct probe pr[MAX_PROBES];
	size_t n;
	size_t full;		/* functions left unprobed: no room */
};

/*
 * The ops table's five (an entry and a return probe each), then the new
 * post-send API's (ibv_qp_ex: entry only).
 */
enum {
	OP_POST_SEND, OP_POST_RECV, OP_POST_SRQ_RECV, OP_POLL_CQ, OP_REQ_NOTIFY, NOPS,
	OP_WR_START = NOPS, OP_WR_OP, OP_WR_SGE, OP_WR_SGE_LIST, OP_WR_INLINE,
	OP_WR_COMPLETE, OP_CQX_POLL, OP_CQX_END, OP_CQX_READ, NALLOPS
};
static const char *const op_name[NALLOPS] = {
	"post_send", "post_recv", "post_srq_recv", "poll_cq", "req_notify_cq", "wr_start",
	"wr_op", "wr_set_sge", "wr_set_sge_list", "wr_set_inline_data", "wr_complete",
	"cq_ex_poll", "cq_ex_end_poll", "cq_ex_read"
};

static int attach_one(struct bpf_program *p, bool ret, int pid, const struct probe *pr,
		      struct rdt_links *links)
{
	LIBBPF_OPTS(bpf_uprobe_opts, o, .retprobe = ret, .bpf_cookie = pr->cookie);
	/* libbpf: -1 every process, 0 this one */
	struct bpf_link *l = bpf_program__attach_uprobe_opts(p, pid > 0 ? pid : -1,
							     pr->path, pr->off, &o);

	if (!l)
		return -errno;
	if (rdt_links_add(links, l)) {
		bpf_link__destroy(l);
		return -ENOMEM;
	}
	return 0;
}

/* Probe q's program(s): at entry, at return, or both, as its op wants. */
static int attach_probe(const struct rdt_verbs_progs *p, int pid, const struct probe *q,
			struct rdt_links *links)
{
	struct bpf_program *on_entry[NALLOPS] = {
		p->post_send, p->post_recv, p->post_srq_recv, p->poll_cq, p->req_notify,
		p->wr_start, p->wr_op, p->wr_sge, p->wr_sge_list, p->wr_inline,
		p->wr_complete, p->cqx_poll, p->cqx_end, NULL
	};
	struct bpf_program *on_return[NALLOPS] = {
		p->post_ret, p->post_ret, p->post_ret, p->poll_cq_ret, p->req_notify_ret,
		[OP_CQX_POLL] = p->cqx_poll_ret, [OP_CQX_READ] = p->cqx_read
	};
	int e = 0;

	if (q->op < 0 || q->op >= NALLOPS)
		return -EINVAL;
	if (on_entry[q->op])
		e = attach_one(on_entry[q->op], false, pid, q, links);
	if (!e && on_return[q->op])
		e = attach_one(on_return[q->op], true, pid, q, links);
	return e;
}

void rdt_verbs_offsets(struct rdt_verbs_offsets *o)
{
	o->qp_context = offsetof(struct ibv_qp, context);
	o->qp_num = offsetof(struct ibv_qp, qp_num);
	o->srq_context = offsetof(struct ibv_srq, context);
	o->srq_handle = offsetof(struct ibv_srq, handle);
	o->cq_context = offsetof(struct ibv_cq, context);
	o->cq_handle = offsetof(struct ibv_cq, handle);
	o->ctx_device = offsetof(struct ibv_context, device);
	o->dev_name = offsetof(struct ibv_device, name);
	o->swr_next = offsetof(struct ibv_send_wr, next);
	o->swr_sg = offsetof(struct ibv_send_wr, sg_list);
	o->swr_nsge = offsetof(struct ibv_send_wr, num_sge);
	o->swr_opcode = offsetof(struct ibv_send_wr, opcode);
	o->swr_flags = offsetof(struct ibv_send_wr, send_flags);
	o->swr_imm = offsetof(struct ibv_send_wr, imm_data);
	o->swr_raddr = offsetof(struct ibv_send_wr, wr.rdma.remote_addr);
	o->swr_rkey = offsetof(struct ibv_send_wr, wr.rdma.rkey);
	o->rwr_next = offsetof(struct ibv_recv_wr, next);
	o->rwr_sg = offsetof(struct ibv_recv_wr, sg_list);
	o->rwr_nsge = offsetof(struct ibv_recv_wr, num_sge);
	o->sge_size = sizeof(struct ibv_sge);
	o->sge_len = offsetof(struct ibv_sge, length);
	o->wc_size = sizeof(struct ibv_wc);
	o->wc_status = offsetof(struct ibv_wc, status);
	o->wc_opcode = offsetof(struct ibv_wc, opcode);
	o->wc_vendor = offsetof(struct ibv_wc, vendor_err);
	o->wc_len = offsetof(struct ibv_wc, byte_len);
	o->wc_imm = offsetof(struct ibv_wc, imm_data);
	o->wc_qpn = offsetof(struct ibv_wc, qp_num);
	o->wc_srcqp = offsetof(struct ibv_wc, src_qp);
	o->wc_flags = offsetof(struct ibv_wc, wc_flags);
	o->qpx_wr_id = offsetof(struct ibv_qp_ex, wr_id);
	o->qpx_wr_flags = offsetof(struct ibv_qp_ex, wr_flags);
	o->cqx_status = offsetof(struct ibv_cq_ex, status);
	o->cqx_wr_id = offsetof(struct ibv_cq_ex, wr_id);
	/* what verbs.bpf.c reads of a CQ, alike in ibv_cq and ibv_cq_ex */
	_Static_assert(offsetof(struct ibv_cq_ex, context) == offsetof(struct ibv_cq, context) &&
		       offsetof(struct ibv_cq_ex, handle) == offsetof(struct ibv_cq, handle),
		       "cq_ex");
	/* the ops table's fields and qp_ex's start alike: one qp_context */
	_Static_assert(offsetof(struct ibv_qp_ex, qp_base) == 0, "qp_ex");
	/* rdma.remote_addr and atomic.remote_addr share their place */
	_Static_assert(offsetof(struct ibv_send_wr, wr.rdma.remote_addr) ==
		       offsetof(struct ibv_send_wr, wr.atomic.remote_addr), "wr union");
}

void rdt_verbs_rodata(struct rdt_verbs *skel)
{
	struct rdt_verbs_offsets o;

	rdt_verbs_offsets(&o);
#define RO(f) (skel->rodata->f = o.f)
	RO(qp_context); RO(qp_num); RO(srq_context); RO(srq_handle); RO(cq_context);
	RO(cq_handle); RO(ctx_device); RO(dev_name); RO(swr_next);
	RO(swr_sg); RO(swr_nsge); RO(swr_opcode); RO(swr_flags); RO(swr_imm);
	RO(swr_raddr); RO(swr_rkey); RO(rwr_next); RO(rwr_sg); RO(rwr_nsge);
	RO(sge_size); RO(sge_len); RO(wc_size); RO(wc_status); RO(wc_opcode);
	RO(wc_vendor); RO(wc_len); RO(wc_imm); RO(wc_qpn); RO(wc_srcqp); RO(wc_flags);
	RO(qpx_wr_id); RO(qpx_wr_flags); RO(cqx_status); RO(cqx_wr_id);
#undef RO
}

/* The GNU build id of ELF file @path into @id (at most @n bytes): its
 * length, 0 if it has none or cannot be read. */
static size_t build_id(const char *path, unsigned char *id, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf_Scn *scn = NULL;
	size_t len = 0;
	Elf *e;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (e && !len && (scn = elf_nextscn(e, scn))) {
		size_t off = 0, noff, doff;
		GElf_Shdr sh;
		GElf_Nhdr nh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		while ((off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((const char *)d->d_buf + noff, "GNU", 4))
				continue;
			len = nh.n_descsz < n ? nh.n_descsz : n;
			memcpy(id, (const char *)d->d_buf + doff, len);
			break;
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return len;
}

/*
 * Copies of the probed provider files that processes map from a file of
 * their own: a container's image holds the same build under another
 * inode, and a uprobe is on an inode.  Every executable mapping of a file
 * with a probed file's name but another inode, whose build id is the
 * probed file's, gets the same probes (the same build: the same offsets),
 * through /proc/PID/map_files/, which opens the file that process maps
 * whatever its mount namespace.  The watch keeps what that needs, so that
 * a copy first mapped after the attach is found by the next rescan.
 */
struct verbs_file {
	dev_t dev;
	ino_t ino;
	char base[256];
	unsigned char id[64];
	size_t idlen;
};

struct rdt_verbs_watch {
	struct rdt_verbs_progs progs;
	int pid;			/* > 0: that process only */
	struct probe pr[MAX_PROBES];	/* the probes on the devices' own files */
	int of[MAX_PROBES];		/* pr[i]'s file in f[], or -1 */
	size_t npr, nf;
	struct verbs_file f[8];
	/* copies probed (their inodes, pinned by the probes: never reused) */
	struct { dev_t dev; ino_t ino; } *seen;
	size_t nseen, capseen;
	/*
	 * Files of a provider's name whose build id is another (another
	 * build): not read again while their inode and change time are the
	 * same (an inode number freed and reused comes with a new ctime).
	 */
	struct { dev_t dev; ino_t ino; struct timespec ctim; } *other;
	size_t nother, capother;
	int copies;
	size_t probes;			/* on copies */
	int err;			/* the last attach error */
};

static void watch_files(struct rdt_verbs_watch *w)
{
	struct stat st;

	for (size_t i = 0; i < w->npr; i++) {
		const char *slash = strrchr(w->pr[i].path, '/');
		size_t k;

		w->of[i] = -1;
		if (stat(w->pr[i].path, &st))
			continue;
		for (k = 0; k < w->nf; k++)
			if (w->f[k].dev == st.st_dev && w->f[k].ino == st.st_ino)
				break;
		if (k == w->nf) {
			struct verbs_file *f = &w->f[k];

			if (w->nf == sizeof(w->f) / sizeof(w->f[0]))
				continue;
			f->dev = st.st_dev;
			f->ino = st.st_ino;
			snprintf(f->base, sizeof(f->base), "%s", slash ? slash + 1 : w->pr[i].path);
			f->idlen = build_id(w->pr[i].path, f->id, sizeof(f->id));
			if (!f->idlen)
				continue;
			w->nf++;
		}
		w->of[i] = (int)k;
	}
}

static bool watch_seen(struct rdt_verbs_watch *w, dev_t dev, ino_t ino)
{
	for (size_t s = 0; s < w->nseen; s++)
		if (w->seen[s].dev == dev && w->seen[s].ino == ino)
			return true;
	for (size_t k = 0; k < w->nf; k++)
		if (w->f[k].dev == dev && w->f[k].ino == ino)
			return true;
	return false;
}

#define MAX_OTHER 4096

static bool watch_other(const struct rdt_verbs_watch *w, const struct stat *st)
{
	for (size_t i = 0; i < w->nother; i++)
		if (w->other[i].dev == st->st_dev && w->other[i].ino == st->st_ino &&
		    w->other[i].ctim.tv_sec == st->st_ctim.tv_sec &&
		    w->other[i].ctim.tv_nsec == st->st_ctim.tv_nsec)
			return true;
	return false;
}

/* Note a file of another build; past MAX_OTHER it is read again. */
static void watch_note_other(struct rdt_verbs_watch *w, const struct stat *st)
{
	if (w->nother == w->capother) {
		size_t cap = w->capother ? 2 * w->capother : 16;
		void *v;

		if (cap > MAX_OTHER || !(v = realloc(w->other, cap * sizeof(*w->other))))
			return;
		w->other = v;
		w->capother = cap;
	}
	w->other[w->nother].dev = st->st_dev;
	w->other[w->nother].ino = st->st_ino;
	w->other[w->nother++].ctim = st->st_ctim;
}

/* A copy of file k at @mf: its probes; false if it could not be noted. */
static bool watch_copy(struct rdt_verbs_watch *w, size_t k, const char *mf,
		       const struct stat *st, struct rdt_links *links)
{
	if (w->nseen == w->capseen) {
		size_t cap = w->capseen ? 2 * w->capseen : 16;
		void *v = realloc(w->seen, cap * sizeof(*w->seen));

		if (!v)
			return false;
		w->seen = v;
		w->capseen = cap;
	}
	w->seen[w->nseen].dev = st->st_dev;
	w->seen[w->nseen++].ino = st->st_ino;
	w->copies++;
	for (size_t i = 0; i < w->npr; i++) {
		struct probe q = w->pr[i];
		int e;

		if (w->of[i] != (int)k)
			continue;
		snprintf(q.path, sizeof(q.path), "%s", mf);
		e = attach_probe(&w->progs, w->pid, &q, links);
		if (e)
			w->err = e;
		else
			w->probes++;
	}
	return true;
}

/*
 * Every process (@w->pid's alone if > 0) that maps a copy not yet probed:
 * its probes.  Returns the copies found now; the first one's file in
 * @first (/proc/PID/map_files/...).
 */
static int watch_scan(struct rdt_verbs_watch *w, struct rdt_links *links, char *first,
		      size_t firstlen)
{
	struct dirent *de;
	struct stat st;
	int found = 0;
	DIR *proc;

	if (!w->nf || !(proc = opendir("/proc")))
		return 0;
	while ((de = readdir(proc))) {
		char path[64], line[4096];
		int p = atoi(de->d_name);
		FILE *m;

		if (p <= 0 || (w->pid > 0 && p != w->pid))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/maps", p);
		m = fopen(path, "re");
		if (!m)
			continue;
		while (fgets(line, sizeof(line), m)) {
			unsigned long start, end;
			char perms[8], mf[80];
			const char *base;
			unsigned char id[64];
			size_t idlen, k;
			int pos = 0;

			if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &start, &end,
				   perms, &pos) < 3 || !pos || perms[2] != 'x' ||
			    line[pos] != '/')
				continue;
			line[strcspn(line, "\n")] = 0;
			base = strrchr(line + pos, '/') + 1;
			for (k = 0; k < w->nf && strcmp(base, w->f[k].base); k++)
				;
			snprintf(mf, sizeof(mf), "/proc/%d/map_files/%lx-%lx", p, start, end);
			if (k == w->nf || stat(mf, &st) || watch_seen(w, st.st_dev, st.st_ino) ||
			    watch_other(w, &st))
				continue;
			/* libelf reads a file another user may have made: once */
			idlen = build_id(mf, id, sizeof(id));
			if (idlen != w->f[k].idlen || memcmp(id, w->f[k].id, idlen)) {
				watch_note_other(w, &st);
				continue;
			}
			if (!watch_copy(w, k, mf, &st, links))
				continue;
			if (!found++ && first)
				snprintf(first, firstlen, "%s", mf);
		}
		fclose(m);
	}
	closedir(proc);
	return found;
}

int rdt_verbs_rescan(struct rdt_verbs_watch *w, struct rdt_links *links, char *msg,
		     size_t msglen)
{
	size_t probes0 = w->probes;
	char first[80] = "";
	int n = watch_scan(w, links, first, sizeof(first));

	if (n)
		snprintf(msg, msglen, "%d new cop%s of the provider (another inode, the same build id; %s): %zu probes more%s%s",
			 n, n == 1 ? "y" : "ies", first, w->probes - probes0,
			 w->err ? ", an attach failed: " : "", w->err ? strerror(-w->err) : "");
	return n;
}

void rdt_verbs_watch_free(struct rdt_verbs_watch *w)
{
	if (!w)
		return;
	free(w->seen);
	free(w->other);
	free(w);
}

/* A probe at code address fn, unless one is there already (or no room). */
static void add_probe(struct probe_set *ps, uintptr_t fn, int op, uint64_t cookie)
{
	struct probe q = { .op = op, .cookie = cookie };

	if (!fn || !rdt_verbs_addr_to_file(fn, q.path, sizeof(q.path), &q.off))
		return;
	for (size_t i = 0; i < ps->n; i++)
		if (ps->pr[i].off == q.off && !strcmp(ps->pr[i].path, q.path))
			return;
	if (ps->n < MAX_PROBES)
		ps->pr[ps->n++] = q;
	else
		ps->full++;
}

/*
 * The provider's functions behind the new post-send API (ibv_qp_ex), read
 * from a throwaway RC QP (left in RESET, destroyed at once): the opcode
 * calls, the data calls, wr_start and wr_complete.  What an application's
 * QP of another type uses may be other functions (mlx5 has some per QP
 * type): those are not probed.  Returns whether the provider has the API.
 */
static bool ex_probes(const struct verbs_lib *l, struct ibv_context *ctx,
		      struct probe_set *ps)
{
	/* opcode call -> its IBV_WR_* opcode, for the program's cookie */
	static const uint64_t ops = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
		IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ |
		IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
	static const uint64_t fewer = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND |
		IBV_QP_EX_WITH_RDMA_READ;
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
	};
	/* verbs.h's ibv_create_qp_ex() less its ibv_create_qp() fallback,
	 * which this file, linking no libibverbs, has no symbol for */
	struct verbs_context *vctx = verbs_get_ctx_op(ctx, create_qp_ex);
	struct ibv_qp_ex *x;
	struct ibv_qp *qp;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	bool ok = false;

	if (!vctx || !l->qp_to_qp_ex || !l->alloc_pd || !l->dealloc_pd || !l->create_cq ||
	    !l->destroy_cq || !l->destroy_qp || !(pd = l->alloc_pd(ctx)))
		return false;
	cq = l->create_cq(ctx, 1, NULL, NULL, 0);
	if (!cq)
		goto out_pd;
	a.pd = pd;
	a.send_cq = a.recv_cq = cq;
	a.send_ops_flags = ops;
	qp = vctx->create_qp_ex(ctx, &a);
	if (!qp) {
		a.send_ops_flags = fewer;
		qp = vctx->create_qp_ex(ctx, &a);
	}
	if (!qp)
		goto out_cq;
	x = l->qp_to_qp_ex(qp);
	if (x) {
		add_probe(ps, (uintptr_t)x->wr_start, OP_WR_START, 0);
		add_probe(ps, (uintptr_t)x->wr_complete, OP_WR_COMPLETE, 0);
		add_probe(ps, (uintptr_t)x->wr_rdma_write, OP_WR_OP, IBV_WR_RDMA_WRITE);
		add_probe(ps, (uintptr_t)x->wr_rdma_write_imm, OP_WR_OP,
			  IBV_WR_RDMA_WRITE_WITH_IMM);
		add_probe(ps, (uintptr_t)x->wr_send, OP_WR_OP, IBV_WR_SEND);
		add_probe(ps, (uintptr_t)x->wr_send_imm, OP_WR_OP, IBV_WR_SEND_WITH_IMM);
		add_probe(ps, (uintptr_t)x->wr_rdma_read, OP_WR_OP, IBV_WR_RDMA_READ);
		add_probe(ps, (uintptr_t)x->wr_atomic_cmp_swp, OP_WR_OP,
			  IBV_WR_ATOMIC_CMP_AND_SWP);
		add_probe(ps, (uintptr_t)x->wr_atomic_fetch_add, OP_WR_OP,
			  IBV_WR_ATOMIC_FETCH_AND_ADD);
		add_probe(ps, (uintptr_t)x->wr_set_sge, OP_WR_SGE, 0);
		add_probe(ps, (uintptr_t)x->wr_set_sge_list, OP_WR_SGE_LIST, 0);
		add_probe(ps, (uintptr_t)x->wr_set_inline_data, OP_WR_INLINE, 0);
		ok = true;
	}
	l->destroy_qp(qp);
out_cq:
	l->destroy_cq(cq);
out_pd:
	l->dealloc_pd(pd);
	return ok;
}

/*
 * The provider's functions behind the extended completion API (ibv_cq_ex),
 * read from a throwaway CQ made with the standard fields: start_poll and
 * next_poll, end_poll, and the read_* calls of those fields.
 */
static bool cqx_probes(const struct verbs_lib *l, struct ibv_context *ctx,
		       struct probe_set *ps)
{
	struct verbs_context *vctx = verbs_get_ctx_op(ctx, create_cq_ex);
	struct ibv_cq_init_attr_ex a = { .cqe = 1, .wc_flags = IBV_WC_STANDARD_FLAGS };
	struct ibv_cq_ex *x;

	if (!vctx || !l->destroy_cq || !(x = vctx->create_cq_ex(ctx, &a)))
		return false;
	add_probe(ps, (uintptr_t)x->start_poll, OP_CQX_POLL, 0);
	add_probe(ps, (uintptr_t)x->next_poll, OP_CQX_POLL, 1);
	add_probe(ps, (uintptr_t)x->end_poll, OP_CQX_END, 0);
	add_probe(ps, (uintptr_t)x->read_opcode, OP_CQX_READ, CQX_OPCODE);
	add_probe(ps, (uintptr_t)x->read_vendor_err, OP_CQX_READ, CQX_VENDOR_ERR);
	add_probe(ps, (uintptr_t)x->read_byte_len, OP_CQX_READ, CQX_BYTE_LEN);
	add_probe(ps, (uintptr_t)x->read_imm_data, OP_CQX_READ, CQX_IMM);
	add_probe(ps, (uintptr_t)x->read_qp_num, OP_CQX_READ, CQX_QP_NUM);
	add_probe(ps, (uintptr_t)x->read_src_qp, OP_CQX_READ, CQX_SRC_QP);
	add_probe(ps, (uintptr_t)x->read_wc_flags, OP_CQX_READ, CQX_WC_FLAGS);
	l->destroy_cq(ibv_cq_ex_to_cq(x));
	return true;
}

int rdt_verbs_attach(const struct rdt_verbs_progs *p, int devs_fd, int pid,
		     struct rdt_links *links, struct rdt_verbs_watch **watch, char *msg,
		     size_t msglen)
{
	struct probe_set *ps;
	struct probe *pr;
	size_t npr, used = 0;
	struct ibv_device **list;
	struct verbs_lib l;
	int ndev = 0, nattached = 0, err = 0, nex = 0, ncqx = 0;
	char devnames[256] = "";

	if (!verbs_lib_open(&l, msg, msglen))
		return 0;
	ps = calloc(1, sizeof(*ps));	/* 68 KiB */
	if (!ps) {
		snprintf(msg, msglen, "out of memory");
		dlclose(l.h);
		return 0;
	}
	pr = ps->pr;
	list = l.get_list(&ndev);
	if (!list || !ndev) {
		snprintf(msg, msglen, "no RDMA device%s", list ? "" : " (ibv_get_device_list failed)");
		if (list)
			l.free_list(list);
		dlclose(l.h);
		free(ps);
		return 0;
	}
	for (int d = 0; d < ndev; d++) {
		struct ibv_context *ctx = l.open(list[d]);
		const char *name = l.name(list[d]);
		uintptr_t fn[NOPS];
		uint32_t idx;
		uint64_t h;
		int i;

		if (!name)
			continue;
		i = l.index ? l.index(list[d]) : -1;
		idx = i >= 0 ? (uint32_t)i : RDT_NO_DEV;
		h = name_hash(name);
		bpf_map_update_elem(devs_fd, &h, &idx, BPF_ANY);
		used += snprintf(devnames + used, used < sizeof(devnames) ? sizeof(devnames) - used : 0,
				 "%s%s", used ? "," : "", name);
		if (used >= sizeof(devnames))
			used = sizeof(devnames) - 1;
		if (!ctx)
			continue;
		fn[OP_POST_SEND] = (uintptr_t)ctx->ops.post_send;
		fn[OP_POST_RECV] = (uintptr_t)ctx->ops.post_recv;
		fn[OP_POST_SRQ_RECV] = (uintptr_t)ctx->ops.post_srq_recv;
		fn[OP_POLL_CQ] = (uintptr_t)ctx->ops.poll_cq;
		fn[OP_REQ_NOTIFY] = (uintptr_t)ctx->ops.req_notify_cq;
		for (int op = 0; op < NOPS; op++)
			add_probe(ps, fn[op], op, 0);
		if (ex_probes(&l, ctx, ps))
			nex++;
		if (cqx_probes(&l, ctx, ps))
			ncqx++;
		l.close(ctx);
	}
	l.free_list(list);
	npr = ps->n;
	struct rdt_verbs_watch *w = NULL;
	int copies = 0;

	for (size_t i = 0; i < npr; i++) {
		int e = attach_probe(p, pid, &pr[i], links);

		if (e)
			err = e;
		else
			nattached++;
	}
	/* The copies of the provider: found now, and by rdt_verbs_rescan(). */
	if (npr && (w = calloc(1, sizeof(*w)))) {
		w->progs = *p;
		w->pid = pid;
		memcpy(w->pr, pr, npr * sizeof(pr[0]));
		w->npr = npr;
		watch_files(w);
		copies = watch_scan(w, links, NULL, 0);
		nattached += (int)w->probes;
		if (w->err)
			err = w->err;
	}
	*watch = w;
	/* libibverbs stays open: closing it gains nothing here (the probes
	 * are on the providers' files, whatever this process maps) */
	if (!npr) {
		snprintf(msg, msglen, "devices %s: no provider data path found", devnames);
		free(ps);
		return 0;
	}
	used = (size_t)snprintf(msg, msglen, "devices %s%s", devnames,
				pid > 0 ? ", one process:" : ":");
	if (pid > 0 && used < msglen)
		used += (size_t)snprintf(msg + used, msglen - used, " pid %d:", pid);
	size_t nexf = 0, ncqxf = 0;

	for (size_t i = 0; i < npr && used < msglen; i++) {
		const char *base = strrchr(pr[i].path, '/');

		if (pr[i].op >= OP_CQX_POLL) {
			ncqxf++;
			continue;
		}
		if (pr[i].op >= NOPS) {
			nexf++;
			continue;
		}
		used += (size_t)snprintf(msg + used, msglen - used, " %s@%s+0x%" PRIx64,
					 op_name[pr[i].op], base ? base + 1 : pr[i].path,
					 pr[i].off);
	}
	if (used < msglen)
		used += (size_t)snprintf(msg + used, msglen - used,
					 "; new post-send API (ibv_qp_ex): %zu functions of %d device%s"
					 "; extended completions (ibv_cq_ex): %zu functions of %d device%s",
					 nexf, nex, nex == 1 ? "" : "s", ncqxf, ncqx,
					 ncqx == 1 ? "" : "s");
	if (ps->full && used < msglen)
		used += (size_t)snprintf(msg + used, msglen - used,
					 "; %zu functions NOT probed (over %d)", ps->full,
					 MAX_PROBES);
	if (copies && used < msglen)
		used += (size_t)snprintf(msg + used, msglen - used,
					 "; %d other cop%s of the provider (another inode, the same build id): %zu probes more",
					 copies, copies == 1 ? "y" : "ies", w->probes);
	if (err && used < msglen)
		snprintf(msg + used, msglen - used, " (%d of %zu attached: %s)", nattached,
			 npr + (w ? w->probes : 0), strerror(-err));
	free(ps);
	return nattached;
}
