/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* Shared between rdt_bpf.c (lifecycle) and nccl_attach.c (finding NCCL). */
#ifndef RDT_BPF_INT_H
#define RDT_BPF_INT_H

#include <stddef.h>

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

#endif
