// SPDX-License-Identifier: GPL-2.0
/*
 * rdma_rxe internals: every completion (rxe_cq_post, user and kernel CQs
 * alike: rdma-core's rxe provider polls CQs in userspace, so the kmod's
 * poll_cq wrapper never sees them), every received packet (rxe_rcv), every
 * sent one (rxe_xmit_packet) and the requester's retries.  Each hook exists twice, fentry and kprobe (RXE_HOOK),
 * sharing one body; the loader autoloads one family: fentry where the
 * kernel can attach it to module BTF, kprobe otherwise.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "rdt_emit.bpf.h"
#include "rxe_core.h"

char LICENSE[] SEC("license") = "GPL";

/* IB BTH opcodes / AETH syndromes the retry detection needs. */
#define IB_OPCODE_RC_ACKNOWLEDGE	0x11
#define AETH_NAK_PSN_SEQ_ERROR		0x60
#define AETH_TYPE_MASK			0xe0
#define AETH_RNR_NAK			0x20

/*
 * A field of a hook's argument.  fentry programs get BTF-typed pointers,
 * which the verifier lets them load directly (one load, a fault fixed up);
 * kprobe programs have bare addresses, read through bpf_probe_read_kernel
 * (a helper call, tens of instructions, per field: most of what a record
 * cost).  @direct is a constant at every call, so each program keeps one
 * of the two.
 */
#define RXE_RD(direct, expr, ...) ((direct) ? (expr) : BPF_CORE_READ(__VA_ARGS__))

/*
 * The head of a user CQE: struct ib_uverbs_wc, a UAPI layout, read in one
 * call.  It shares struct rxe_cqe's union with struct ib_wc, and the
 * verifier walks a union by its first member only, so an fentry program
 * cannot load its fields directly.
 */
struct rdt_uverbs_wc_head {
	__u64 wr_id;
	__u32 status;
	__u32 opcode;
	__u32 vendor_err;
	__u32 byte_len;
	__u32 ex;
	__u32 qp_num;
};

static __always_inline void on_cq_post(struct rxe_cq___rdt *cq, struct rxe_cqe___rdt *cqe,
				       const bool d)
{
	struct rdt_uverbs_wc_head uwc;
	struct rdt_ev_rxe_cqe *e;
	bool user = RXE_RD(d, cq->is_user, cq, is_user);

	/* Zeroes on a fault, as BPF_CORE_READ gives. */
	if (user)
		bpf_probe_read_kernel(&uwc, sizeof(uwc), &cqe->uibwc);
	e = RDT_RESERVE(RDT_EV_RXE_CQE, struct rdt_ev_rxe_cqe, bpf_ktime_get_ns(),
			RXE_RD(d, cq->ibcq.device->index, cq, ibcq.device, index));
	if (!e)
		return;
	e->cq_id = RXE_RD(d, cq->elem.index, cq, elem.index);
	e->user = user;
	/* The CQE layout is the uverbs one for user CQs, ib_wc otherwise. */
	if (user) {
		e->wr_id = uwc.wr_id;
		e->status = uwc.status;
		e->opcode = uwc.opcode;
		e->byte_len = uwc.byte_len;
		e->qpn = uwc.qp_num;
	} else {
		e->wr_id = RXE_RD(d, cqe->ibwc.wr_id, cqe, ibwc.wr_id);
		e->status = RXE_RD(d, cqe->ibwc.status, cqe, ibwc.status);
		e->opcode = RXE_RD(d, cqe->ibwc.opcode, cqe, ibwc.opcode);
		e->byte_len = RXE_RD(d, cqe->ibwc.byte_len, cqe, ibwc.byte_len);
		e->qpn = RXE_RD(d, cqe->ibwc.qp->qp_num, cqe, ibwc.qp, qp_num);
	}
	rdt_submit(e);
}

static __always_inline void emit_retry(__u64 ts, __u32 dev, __u32 qpn, __u32 psn, __u32 kind)
{
	struct rdt_ev_rxe_retry *r = RDT_RESERVE(RDT_EV_RXE_RETRY, struct rdt_ev_rxe_retry,
						 ts, dev);
	if (!r)
		return;
	r->qpn = qpn;
	r->psn = psn;
	r->kind = kind;
	r->pad = 0;
	rdt_submit(r);
}

/*
 * At entry rxe_rcv has not parsed the packet yet (pkt->opcode, psn are
 * set inside it), but pkt->hdr already points at the BTH: parse that.
 */
static __always_inline void on_rcv(struct sk_buff *skb, const bool d)
{
	struct rxe_pkt_info___rdt *pkt = (void *)skb + bpf_core_field_offset(struct sk_buff, cb);
	__u8 bth[16] = {};
	__u8 *hdr = RXE_RD(d, pkt->hdr, pkt, hdr);
	/* skb->cb is bytes to the verifier: the device pointer is a number. */
	struct rxe_dev___rdt *rxe = RXE_RD(d, pkt->rxe, pkt, rxe);
	__u32 dev = BPF_CORE_READ(rxe, ib_dev.index);
	__u64 ts = bpf_ktime_get_ns();
	struct rdt_ev_rxe_rcv *e;
	__u32 qpn, psn;

	if (bpf_probe_read_kernel(bth, sizeof(bth), hdr))
		return;
	qpn = (bth[5] << 16) | (bth[6] << 8) | bth[7];
	psn = (bth[9] << 16) | (bth[10] << 8) | bth[11];

	e = RDT_RESERVE(RDT_EV_RXE_RCV, struct rdt_ev_rxe_rcv, ts, dev);
	if (e) {
		e->opcode = bth[0];
		e->qpn = qpn;
		e->psn = psn;
		e->length = RXE_RD(d, pkt->paylen, pkt, paylen);
		rdt_submit(e);
	}

	/*
	 * A NAK for a sequence error makes this QP's requester go back to
	 * the NAK's PSN without any timer: the only place it is visible
	 * outside the inlined completer state machine.  qpn is the local
	 * (requester) QP, psn the first PSN it will resend.
	 */
	if (bth[0] == IB_OPCODE_RC_ACKNOWLEDGE) {
		__u8 syn = bth[12];

		if (syn == AETH_NAK_PSN_SEQ_ERROR)
			emit_retry(ts, dev, qpn, psn, RDT_RXE_NAK_SEQ);
	}
}

/*
 * Every packet rxe hands to the network or to its loopback: requests,
 * read responses and ACKs (rxe_req.c, rxe_resp.c; 6.1 and 6.12 alike).
 * rxe_prepare has pushed UDP and IP before this call, so the network
 * header is set; pkt->hdr points at the BTH.  paylen is the same
 * BTH-to-ICRC length rxe_rcv's pkt carries on the peer, so both ends of
 * one packet record the same length.  Three reads of packet bytes/fields
 * (BTH, IP header, paylen) and the QP's number and device.
 */
static __always_inline void on_xmit(struct rxe_qp___rdt *qp, struct rxe_pkt_info___rdt *pkt,
				    struct sk_buff *skb, const bool d)
{
	__u64 ts = bpf_ktime_get_ns();
	__u8 bth[12], ip[40];
	unsigned char *head = RXE_RD(d, skb->head, skb, head);
	__u16 nh = RXE_RD(d, skb->network_header, skb, network_header);
	struct rdt_ev_rxe_xmit *e;

	if (bpf_probe_read_kernel(bth, sizeof(bth), RXE_RD(d, pkt->hdr, pkt, hdr)))
		return;
	/* An IPv4 header is 20 bytes, but UDP and the BTH follow it: 40 are there. */
	if (bpf_probe_read_kernel(ip, sizeof(ip), head + nh))
		return;
	e = RDT_RESERVE(RDT_EV_RXE_XMIT, struct rdt_ev_rxe_xmit, ts,
			RXE_RD(d, qp->ibqp.device->index, qp, ibqp.device, index));
	if (!e)
		return;
	__builtin_memset(e->saddr, 0, sizeof(e->saddr));
	__builtin_memset(e->daddr, 0, sizeof(e->daddr));
	if ((ip[0] >> 4) == 6) {
		e->family = 10;	/* AF_INET6 */
		__builtin_memcpy(e->saddr, ip + 8, 16);
		__builtin_memcpy(e->daddr, ip + 24, 16);
	} else {
		e->family = 2;	/* AF_INET */
		__builtin_memcpy(e->saddr, ip + 12, 4);
		__builtin_memcpy(e->daddr, ip + 16, 4);
	}
	e->opcode = bth[0];
	e->qpn = (bth[5] << 16) | (bth[6] << 8) | bth[7];
	e->psn = (bth[9] << 16) | (bth[10] << 8) | bth[11];
	e->length = RXE_RD(d, pkt->paylen, pkt, paylen);
	e->src_qpn = RXE_RD(d, qp->ibqp.qp_num, qp, ibqp.qp_num);
	rdt_submit(e);
}

static __always_inline void on_timer(struct timer_list *t, __u32 kind)
{
	struct rxe_qp___rdt *qp;
	__u32 off = kind == RDT_RXE_RETRANSMIT ?
		bpf_core_field_offset(struct rxe_qp___rdt, retrans_timer) :
		bpf_core_field_offset(struct rxe_qp___rdt, rnr_nak_timer);

	qp = (void *)t - off;
	/* The requester restarts from the completer's PSN (req_retry). */
	emit_retry(bpf_ktime_get_ns(), BPF_CORE_READ(qp, ibqp.device, index),
		   BPF_CORE_READ(qp, ibqp.qp_num), BPF_CORE_READ(qp, comp.psn),
		   kind);
}

/*
 * Each hook, fentry and kprobe, from one line: @name the programs' names
 * (fentry_@name, kprobe_@name: the loader's), @func the kernel function,
 * @call the body, where `d` says which family it runs in (a constant in
 * each program, so each keeps one of RXE_RD()'s two reads), then the
 * function's arguments.
 */
#define RXE_HOOK(name, func, call, args...)			\
SEC("fentry/" #func)						\
int BPF_PROG(fentry_##name, args)				\
{								\
	const bool d = true;					\
								\
	call;							\
	return 0;						\
}								\
								\
SEC("kprobe/" #func)						\
int BPF_KPROBE(kprobe_##name, args)				\
{								\
	const bool d = false;					\
								\
	call;							\
	return 0;						\
}

RXE_HOOK(cq_post, rxe_cq_post, on_cq_post(cq, cqe, d),
	 struct rxe_cq___rdt *cq, struct rxe_cqe___rdt *cqe)
RXE_HOOK(rcv, rxe_rcv, on_rcv(skb, d), struct sk_buff *skb)
/* Called from rxe_req.c and rxe_resp.c: never inlined into its callers. */
RXE_HOOK(xmit_packet, rxe_xmit_packet, on_xmit(qp, pkt, skb, d),
	 struct rxe_qp___rdt *qp, struct rxe_pkt_info___rdt *pkt,
	 struct sk_buff *skb)
/* Timer callbacks go through a pointer, so they are never inlined away;
 * their bodies read through BPF_CORE_READ in both families. */
RXE_HOOK(retransmit_timer, retransmit_timer,
	 ((void)d, on_timer(t, RDT_RXE_RETRANSMIT)), struct timer_list *t)
RXE_HOOK(rnr_nak_timer, rnr_nak_timer,
	 ((void)d, on_timer(t, RDT_RXE_RNR)), struct timer_list *t)
