/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* Shared between rdt_bpf.c (lifecycle) and nccl_attach.c (finding NCCL). */
#ifndef RDT_BPF_INT_H
#define RDT_BPF_INT_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

struct bpf_program;
struct bpf_link;

/* A growable list of links, destroyed together at close. */
struct rdt_links {
	struct bpf_link **v;
	size_t n, cap;
};

int rdt_links_add(struct rdt_links *l, struct bpf_link *link);
void rdt_links_destroy(struct rdt_links *l);

/*
 * Attaches enter/exit to every NCCL API function in the ELFs named by
 * target (see rdt_bpf_opts.nccl_target).  Writes one status line (no
 * "nccl: " prefix, no newline) to msg.  Returns the number of functions
 * attached (0: nothing found or attached).
 */
int rdt_nccl_attach(struct bpf_program *enter, struct bpf_program *exit,
		    const char *target, struct rdt_links *links, char *msg, size_t msglen);

/* verbs.h's layout, for verbs.bpf.c (its rodata, set before load). */
struct rdt_verbs_offsets {
	unsigned int qp_context, qp_num, srq_context, srq_handle, cq_context, cq_handle,
		     ctx_device, dev_name, swr_next, swr_sg, swr_nsge, swr_opcode,
		     swr_flags, swr_imm, swr_raddr, swr_rkey, rwr_next, rwr_sg, rwr_nsge,
		     sge_size, sge_len, wc_size, wc_status, wc_opcode, wc_vendor, wc_len,
		     wc_imm, wc_qpn, wc_srcqp, wc_flags, qpx_wr_id, qpx_wr_flags, cqx_status,
		     cqx_wr_id;
};

void rdt_verbs_offsets(struct rdt_verbs_offsets *o);

/* The offsets into an opened, not yet loaded verbs.bpf.o's rodata. */
struct rdt_verbs;
void rdt_verbs_rodata(struct rdt_verbs *skel);

/*
 * The ELF file (as /proc/self/maps names it) and file offset of code
 * address @addr in this process: where a uprobe for it goes.  False if no
 * executable mapping of a file holds it.  tests/bpf/provider-resolve
 * checks it on every provider Debian ships, mlx5's included.
 */
bool rdt_verbs_addr_to_file(uintptr_t addr, char *path, size_t n, uint64_t *off);

struct rdt_verbs_progs {
	struct bpf_program *post_send, *post_recv, *post_srq_recv, *post_ret,
			   *poll_cq, *poll_cq_ret, *req_notify, *req_notify_ret;
	/* the new post-send API (ibv_qp_ex) */
	struct bpf_program *wr_start, *wr_op, *wr_sge, *wr_sge_list, *wr_inline,
			   *wr_complete;
	/* the extended completion API (ibv_cq_ex) */
	struct bpf_program *cqx_poll, *cqx_poll_ret, *cqx_end, *cqx_read;
};

/* The provider files probed, to find copies of them later (verbs_attach.c). */
struct rdt_verbs_watch;

/*
 * Finds every RDMA device's provider data path (verbs_attach.c), fills
 * the device map (name hash -> kernel index) and attaches p's programs,
 * to process @pid only if > 0, on the files the devices use and on every
 * copy of them mapped now (another inode, the same build id).  *watch:
 * what rdt_verbs_rescan() needs, or NULL.  One status line in msg, as
 * rdt_nccl_attach().  Returns the number of functions attached.
 */
int rdt_verbs_attach(const struct rdt_verbs_progs *p, int devs_fd, int pid,
		     struct rdt_links *links, struct rdt_verbs_watch **watch, char *msg,
		     size_t msglen);

/*
 * The copies first mapped since the last look: probed.  Returns how many;
 * if any, one line about them in msg.
 */
int rdt_verbs_rescan(struct rdt_verbs_watch *w, struct rdt_links *links, char *msg,
		     size_t msglen);
void rdt_verbs_watch_free(struct rdt_verbs_watch *w);

#endif
