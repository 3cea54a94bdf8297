// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Finding NCCL: which ELF files, which function addresses.  NCCL exports
 * each API function twice (weak ncclX, strong pncclX, one address), and
 * PyTorch may carry its own copies (a wheel's libnccl.so.2, or NCCL linked
 * statically into libtorch_cuda.so), so probes go by symbol into every ELF
 * that defines the functions, once per address.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include <rdmatrace/wire.h>
#include "rdt_bpf_int.h"

static const struct {
	const char *name;
	unsigned int fn;
} nccl_fns[] = {
	{ "ncclGetUniqueId",		RDT_NCCL_GET_UNIQUE_ID },
	{ "ncclCommInitRank",		RDT_NCCL_COMM_INIT_RANK },
	{ "ncclCommInitRankConfig",	RDT_NCCL_COMM_INIT_RANK_CONFIG },
	{ "ncclCommInitAll",		RDT_NCCL_COMM_INIT_ALL },
	{ "ncclCommSplit",		RDT_NCCL_COMM_SPLIT },
	{ "ncclCommFinalize",		RDT_NCCL_COMM_FINALIZE },
	{ "ncclCommDestroy",		RDT_NCCL_COMM_DESTROY },
	{ "ncclCommAbort",		RDT_NCCL_COMM_ABORT },
	{ "ncclAllReduce",		RDT_NCCL_ALL_REDUCE },
	{ "ncclBroadcast",		RDT_NCCL_BROADCAST },
	{ "ncclBcast",			RDT_NCCL_BCAST },
	{ "ncclReduce",			RDT_NCCL_REDUCE },
	{ "ncclAllGather",		RDT_NCCL_ALL_GATHER },
	{ "ncclReduceScatter",		RDT_NCCL_REDUCE_SCATTER },
	{ "ncclAlltoAll",		RDT_NCCL_ALL_TO_ALL },
	{ "ncclSend",			RDT_NCCL_SEND },
	{ "ncclRecv",			RDT_NCCL_RECV },
	{ "ncclGroupStart",		RDT_NCCL_GROUP_START },
	{ "ncclGroupEnd",		RDT_NCCL_GROUP_END },
};
#define NFNS (sizeof(nccl_fns) / sizeof(nccl_fns[0]))

const char *rdt_bpf_nccl_fn_name(unsigned int fn)
{
	for (size_t i = 0; i < NFNS; i++)
		if (nccl_fns[i].fn == fn)
			return nccl_fns[i].name;
	return "?";
}

struct site {
	unsigned long off;	/* file offset uprobes take */
	unsigned int fn;
};

struct sites {
	struct site v[4 * NFNS];
	size_t n;
	size_t aliases;		/* symbols skipped: address already taken */
	char seen[2048];	/* ",name," list of symbol names counted */
};

int rdt_links_add(struct rdt_links *l, struct bpf_link *link)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct bpf_link **v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = link;
	return 0;
}

void rdt_links_destroy(struct rdt_links *l)
{
	for (size_t i = 0; i < l->n; i++)
		bpf_link__destroy(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}

static int fn_of(const char *sym)
{
	/* pncclX is the profiling-interface twin of ncclX. */
	if (sym[0] == 'p')
		sym++;
	for (size_t i = 0; i < NFNS; i++)
		if (!strcmp(sym, nccl_fns[i].name))
			return nccl_fns[i].fn;
	return 0;
}

/*
 * aliases counts distinct (name, address) pairs beyond the first per
 * address, so a name listed in both .dynsym and .symtab is not counted.
 */
static void add_site(struct sites *s, unsigned long off, unsigned int fn, const char *name)
{
	char key[128];
	bool known;

	snprintf(key, sizeof(key), ",%s,", name);
	known = strstr(s->seen, key);
	if (!known && strlen(s->seen) + strlen(key) < sizeof(s->seen))
		strcat(s->seen, key + 1);
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].off == off) {
			if (!known)
				s->aliases++;
			return;
		}
	if (s->n < sizeof(s->v) / sizeof(s->v[0]))
		s->v[s->n++] = (struct site){ off, fn };
}

/* Virtual address -> file offset through the PT_LOAD that maps it. */
static long vaddr_to_off(Elf *e, GElf_Addr va)
{
	size_t n;

	if (elf_getphdrnum(e, &n))
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr p;

		if (gelf_getphdr(e, i, &p) && p.p_type == PT_LOAD &&
		    va >= p.p_vaddr && va < p.p_vaddr + p.p_filesz)
			return va - p.p_vaddr + p.p_offset;
	}
	return -1;
}

/* Every defined NCCL API function in path, from .dynsym and .symtab. */
static int scan_elf(const char *path, struct sites *s)
{
	Elf_Scn *scn = NULL;
	int fd, ret = 0;
	Elf *e;

	s->n = s->aliases = 0;
	strcpy(s->seen, ",");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		ret = -ENOEXEC;
		goto out;
	}
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !sh.sh_entsize)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;
			int fn;
			long off;

			if (!gelf_getsym(d, i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    !sym.st_value ||
			    (GELF_ST_TYPE(sym.st_info) != STT_FUNC &&
			     GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC))
				continue;
			name = elf_strptr(e, sh.sh_link, sym.st_name);
			if (!name || !(fn = fn_of(name)))
				continue;
			off = vaddr_to_off(e, sym.st_value);
			if (off >= 0)
				add_site(s, off, fn, name);
		}
	}
out:
	if (e)
		elf_end(e);
	close(fd);
	return ret;
}

static int attach_file(struct bpf_program *enter, struct bpf_program *exit, const char *path,
		       pid_t pid, struct rdt_links *links, size_t *nsites, size_t *naliases)
{
	struct sites s;
	int err = scan_elf(path, &s);

	if (err)
		return err;
	if (!s.n)
		return -ENOENT;
	for (size_t i = 0; i < s.n; i++) {
		for (int ret = 0; ret < 2; ret++) {
			LIBBPF_OPTS(bpf_uprobe_opts, o, .retprobe = ret, .bpf_cookie = s.v[i].fn);
			struct bpf_link *l = bpf_program__attach_uprobe_opts(ret ? exit : enter, pid,
									     path, s.v[i].off, &o);
			if (!l)
				return -errno;
			if (rdt_links_add(links, l)) {
				bpf_link__destroy(l);
				return -ENOMEM;
			}
		}
	}
	*nsites += s.n;
	*naliases += s.aliases;
	return 0;
}

static void appendf(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void appendf(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strnlen(buf, len);
	va_list ap;

	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

struct paths {
	char **v;
	size_t n;
};

static void paths_add(struct paths *p, const char *path)
{
	char real[PATH_MAX];
	char **v;

	if (!realpath(path, real))
		return;
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->v[i], real))
			return;
	v = realloc(p->v, (p->n + 1) * sizeof(*v));
	if (!v)
		return;
	p->v = v;
	p->v[p->n] = strdup(real);
	if (p->v[p->n])
		p->n++;
}

static void paths_free(struct paths *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i]);
	free(p->v);
}

static void find_in_dirs(struct paths *p, const char *dirs)
{
	char *copy = strdup(dirs), *save = NULL;

	for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d; d = strtok_r(NULL, ":", &save)) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/libnccl.so.2", d);
		if (!access(path, R_OK))
			paths_add(p, path);
	}
	free(copy);
}

/* Where the dynamic loader would look, plus the CUDA toolkit's own dirs. */
static void find_libnccl(struct paths *p)
{
	const char *ld = getenv("LD_LIBRARY_PATH");
	char line[PATH_MAX + 128];
	FILE *f;

	if (ld)
		find_in_dirs(p, ld);
	f = popen("ldconfig -p 2>/dev/null", "r");
	if (f) {
		while (fgets(line, sizeof(line), f)) {
			char *arrow = strstr(line, "=> ");

			if (strstr(line, "libnccl.so.2 ") && arrow) {
				arrow[3 + strcspn(arrow + 3, "\n")] = 0;
				paths_add(p, arrow + 3);
			}
		}
		pclose(f);
	}
	find_in_dirs(p, "/usr/local/cuda/lib:/usr/local/cuda/lib64:"
			"/usr/local/cuda/targets/x86_64-linux/lib:"
			"/usr/lib/x86_64-linux-gnu:/usr/lib64:/usr/lib:/usr/local/lib");
}

/* Every file-backed executable mapping of pid, as seen from its root. */
static int find_mapped(struct paths *p, pid_t pid)
{
	char maps[64], line[PATH_MAX + 256];
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	f = fopen(maps, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char perms[8], *path = strchr(line, '/');
		char rooted[PATH_MAX + 64];

		if (!path || sscanf(line, "%*s %7s", perms) != 1 || !strchr(perms, 'x'))
			continue;
		path[strcspn(path, "\n")] = 0;
		if (strstr(path, " (deleted)"))
			continue;
		/* Through /proc/PID/root so containers' files resolve too. */
		snprintf(rooted, sizeof(rooted), "/proc/%d/root%s", pid, path);
		paths_add(p, access(rooted, R_OK) ? path : rooted);
	}
	fclose(f);
	return 0;
}

static int is_pid(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

int rdt_nccl_attach(struct bpf_program *enter, struct bpf_program *exit, const char *target,
		    struct rdt_links *links, char *msg, size_t msglen)
{
	struct paths p = { 0 };
	size_t files = 0, sites = 0, aliases = 0;
	pid_t pid = -1;
	int err;

	msg[0] = 0;
	if (!target) {
		find_libnccl(&p);
		if (!p.n) {
			snprintf(msg, msglen, "libnccl.so.2 not found");
			return 0;
		}
	} else if (is_pid(target)) {
		pid = atoi(target);
		err = find_mapped(&p, pid);
		if (err) {
			snprintf(msg, msglen, "pid %d: %s", pid, strerror(-err));
			return 0;
		}
	} else {
		char *copy = strdup(target), *save = NULL;

		for (char *t = copy ? strtok_r(copy, ":", &save) : NULL; t;
		     t = strtok_r(NULL, ":", &save)) {
			if (access(t, R_OK))
				appendf(msg, msglen, "%s%s: %s", msg[0] ? "; " : "", t,
					strerror(errno));
			else
				paths_add(&p, t);
		}
		free(copy);
	}

	for (size_t i = 0; i < p.n; i++) {
		size_t before = sites;

		err = attach_file(enter, exit, p.v[i], pid, links, &sites, &aliases);
		if (err == -ENOENT || err == -ENOEXEC) {
			/* In pid mode most mappings are not NCCL: say nothing. */
			if (pid < 0)
				appendf(msg, msglen, "%s%s: no NCCL symbols", msg[0] ? "; " : "",
					p.v[i]);
			continue;
		}
		if (err) {
			appendf(msg, msglen, "%s%s: attach failed: %s", msg[0] ? "; " : "", p.v[i],
				strerror(-err));
			continue;
		}
		files++;
		appendf(msg, msglen, "%sattached %zu functions in %s", msg[0] ? "; " : "",
			sites - before, p.v[i]);
	}
	if (!files && pid >= 0)
		appendf(msg, msglen, "%sno NCCL symbols in any mapping of pid %d",
			msg[0] ? "; " : "", pid);
	else if (files)
		appendf(msg, msglen, " (%zu aliases at shared addresses not attached twice%s)",
			aliases, pid >= 0 ? ", pid filter" : "");
	paths_free(&p);
	return (int)sites;
}
