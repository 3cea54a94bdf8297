// SPDX-License-Identifier: GPL-2.0
/*
 * The floor of the BPF rxe source's design (issue 36): the functions
 * producers/bpf/rxe.bpf.c hooks on every packet and every CQE, with
 * programs that do nothing.  What these cost a workload is the fentry
 * trampoline and the program's dispatch alone: no rxe source built on
 * per-packet hooks can cost less.  bench/hook-floor.c loads them.
 * Built again with -DSTAMP (hook-floor-ts.bpf.o): the CQE's program also
 * reads the clock, the least a completion's record costs beyond that.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

/* A received packet: rxe hands it to the responder or the completer. */
SEC("fentry/rxe_resp_queue_pkt")
int BPF_PROG(floor_resp_queue_pkt)
{
	return 0;
}

SEC("fentry/rxe_comp_queue_pkt")
int BPF_PROG(floor_comp_queue_pkt)
{
	return 0;
}

SEC("fentry/rxe_xmit_packet")
int BPF_PROG(floor_xmit_packet)
{
	return 0;
}

#ifdef STAMP
__u64 last_stamp;
#endif

SEC("fentry/rxe_cq_post")
int BPF_PROG(floor_cq_post)
{
#ifdef STAMP
	last_stamp = bpf_ktime_get_ns();
#endif
	return 0;
}
