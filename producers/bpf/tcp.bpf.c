// SPDX-License-Identifier: GPL-2.0
/*
 * tcp_retransmit_skb: NCCL's socket transport (and its bootstrap) loses
 * time here.  Attached as a raw tracepoint: it needs neither tracefs
 * (not mounted on every host or guest) nor BPF trampolines (tp_btf; the
 * build host has none), and its arguments (sk, skb) have been the same
 * from 6.1 to 6.18 (later kernels append an error code).  The socket's
 * fields are read through CO-RE.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "rdt_emit.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define AF_INET		2
#define AF_INET6	10

SEC("raw_tp/tcp_retransmit_skb")
int BPF_PROG(tcp_retransmit, struct sock *sk)
{
	struct rdt_ev_tcp_retransmit *e;
	__u16 family = BPF_CORE_READ(sk, __sk_common.skc_family);

	if (family != AF_INET && family != AF_INET6)
		return 0;
	e = RDT_RESERVE(RDT_EV_TCP_RETRANSMIT, struct rdt_ev_tcp_retransmit,
			bpf_ktime_get_ns(), RDT_NO_DEV);
	if (!e)
		return 0;
	__builtin_memset(e->saddr, 0, sizeof(e->saddr));
	__builtin_memset(e->daddr, 0, sizeof(e->daddr));
	if (family == AF_INET) {
		bpf_core_read(e->saddr, 4, &sk->__sk_common.skc_rcv_saddr);
		bpf_core_read(e->daddr, 4, &sk->__sk_common.skc_daddr);
	} else {
		bpf_core_read(e->saddr, 16, &sk->__sk_common.skc_v6_rcv_saddr);
		bpf_core_read(e->daddr, 16, &sk->__sk_common.skc_v6_daddr);
	}
	e->sport = BPF_CORE_READ(sk, __sk_common.skc_num);	/* host order already */
	e->dport = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
	e->family = family;
	e->state = BPF_CORE_READ(sk, __sk_common.skc_state);
	e->pad = 0;
	/* Often in softirq (RTO timer): pid/tid are whoever was on the CPU. */
	rdt_submit(e);
	return 0;
}
