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
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kmod/uapi/rdmatrace.h"
#include "rdt_bpf_int.h"

struct verbs_lib {
	void *h;
	struct ibv_device **(*get_list)(int *);
	void (*free_list)(struct ibv_device **);
	struct ibv_context *(*open)(struct ibv_device *);
	int (*close)(struct ibv_context *);
	const char *(*name)(struct ibv_device *);
	int (*index)(struct ibv_device *);
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
};

enum { OP_POST_SEND, OP_POST_RECV, OP_POST_SRQ_RECV, OP_POLL_CQ, NOPS };
static const char *const op_name[NOPS] = { "post_send", "post_recv", "post_srq_recv",
					   "poll_cq" };

static int attach_one(struct bpf_program *p, bool ret, int pid, const struct probe *pr,
		      struct rdt_links *links)
{
	/* libbpf: -1 every process, 0 this one */
	struct bpf_link *l = bpf_program__attach_uprobe(p, ret, pid > 0 ? pid : -1,
							pr->path, pr->off);

	if (!l)
		return -errno;
	if (rdt_links_add(links, l)) {
		bpf_link__destroy(l);
		return -ENOMEM;
	}
	return 0;
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
	/* rdma.remote_addr and atomic.remote_addr share their place */
	_Static_assert(offsetof(struct ibv_send_wr, wr.rdma.remote_addr) ==
		       offsetof(struct ibv_send_wr, wr.atomic.remote_addr), "wr union");
}

int rdt_verbs_attach(const struct rdt_verbs_progs *p, int devs_fd, int pid,
		     struct rdt_links *links, char *msg, size_t msglen)
{
	struct probe pr[64];
	size_t npr = 0, used = 0;
	struct ibv_device **list;
	struct verbs_lib l;
	int ndev = 0, nattached = 0, err = 0;
	char devnames[256] = "";

	if (!verbs_lib_open(&l, msg, msglen))
		return 0;
	list = l.get_list(&ndev);
	if (!list || !ndev) {
		snprintf(msg, msglen, "no RDMA device%s", list ? "" : " (ibv_get_device_list failed)");
		if (list)
			l.free_list(list);
		dlclose(l.h);
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
		for (int op = 0; op < NOPS; op++) {
			struct probe q = { .op = op };
			bool dup = false;

			if (!fn[op] || !rdt_verbs_addr_to_file(fn[op], q.path, sizeof(q.path), &q.off))
				continue;
			for (size_t i = 0; i < npr; i++)
				dup |= pr[i].off == q.off && !strcmp(pr[i].path, q.path);
			if (!dup && npr < sizeof(pr) / sizeof(pr[0]))
				pr[npr++] = q;
		}
		l.close(ctx);
	}
	l.free_list(list);
	struct bpf_program *on_entry[NOPS] = { p->post_send, p->post_recv, p->post_srq_recv,
					      p->poll_cq };
	struct bpf_program *on_return[NOPS] = { p->post_ret, p->post_ret, p->post_ret,
					       p->poll_cq_ret };

	for (size_t i = 0; i < npr; i++) {
		int e = attach_one(on_entry[pr[i].op], false, pid, &pr[i], links);

		if (!e)
			e = attach_one(on_return[pr[i].op], true, pid, &pr[i], links);
		if (e)
			err = e;
		else
			nattached++;
	}
	/* libibverbs stays open: closing it gains nothing here (the probes
	 * are on the providers' files, whatever this process maps) */
	if (!npr) {
		snprintf(msg, msglen, "devices %s: no provider data path found", devnames);
		return 0;
	}
	used = (size_t)snprintf(msg, msglen, "devices %s%s", devnames,
				pid > 0 ? ", one process:" : ":");
	if (pid > 0 && used < msglen)
		used += (size_t)snprintf(msg + used, msglen - used, " pid %d:", pid);
	for (size_t i = 0; i < npr && used < msglen; i++) {
		const char *base = strrchr(pr[i].path, '/');

		used += (size_t)snprintf(msg + used, msglen - used, " %s@%s+0x%" PRIx64,
					 op_name[pr[i].op], base ? base + 1 : pr[i].path,
					 pr[i].off);
	}
	if (err && used < msglen)
		snprintf(msg + used, msglen - used, " (%d of %zu attached: %s)", nattached,
			 npr, strerror(-err));
	return nattached;
}
