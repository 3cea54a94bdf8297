// SPDX-License-Identifier: GPL-2.0
/*
 * rdma_rxe internals: every completion (rxe_cq_post, user and kernel CQs
 * alike: rdma-core's rxe provider polls CQs in userspace, so the kmod's
 * poll_cq wrapper never sees them), every packet rxe takes for a QP
 * (rxe_resp_queue_pkt, rxe_comp_queue_pkt) or sends (rxe_xmit_packet),
 * the requester's retries, and QPs' ends (rxe_destroy_qp).  Each hook
 * exists twice, fentry and kprobe (RXE_HOOK), sharing one body, the end
 * of a QP as fexit and kprobe + kretprobe; the loader autoloads one
 * family: fentry where the kernel can attach it to module BTF, kprobe
 * otherwise.
 *
 * Packets are counted, not recorded, unless the loader sets rxe_packets
 * (--rxe=packets: clock alignment wants each one): a record per packet
 * doubled a traced ring AllReduce's time (make bench), where a map
 * update per packet and the counts in the QP's next CQE record say how
 * much went over the wire between two completions.
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

/* Set by the loader before load: also a record per packet. */
const volatile bool rxe_packets;

/* A QP's packets since its last CQE record: by device and local QPN. */
struct rxe_qp_key {
	__u32 dev;
	__u32 qpn;
};

/* One direction's packets; 64-bit counts: BPF's atomic exchange and
 * fetch-add (without alu32) take no narrower operand. */
struct rxe_dir_count {
	__u64 bytes, pkts;
	__u32 psn_first, psn_last;
};

/* [0]: sent, [1]: received */
struct rxe_qp_count {
	struct rxe_dir_count dir[2];
};

/*
 * LRU: a destroyed QP's entry goes when room is needed.  A QPN used again
 * before then starts from the old one's last packets (those after its
 * last completion), a few at most.  Preallocated: 16 k QPs' entries are
 * about 1.5 MiB of kernel memory.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct rxe_qp_key);
	__type(value, struct rxe_qp_count);
} rxe_counts SEC(".maps");

/*
 * In front of the LRU hash, a direct-mapped array: the verifier inlines
 * an array's lookup (a few instructions) where the hash's is a call that
 * hashes the key, walks a bucket and marks the entry used, for every
 * packet.  A slot is its QP's for good, from the first packet that finds
 * it free: a QP whose slot another QP holds (a collision, or a destroyed
 * QP's) is counted in the hash as before.  A QPN used again in its slot
 * starts from the old QP's last packets, as in the hash.  A destroyed
 * QP's slot is given back (release_slot()): rxe hands out QPNs
 * cyclically, so under QP churn slots kept for good would fill the array
 * and later QPs would be counted in the hash, at its cost.
 */
#define RXE_SLOTS	4096

struct rxe_slot {
	__u64 key;		/* rxe_slot_key(); 0: free */
	struct rxe_qp_count c;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RXE_SLOTS);
	__type(key, __u32);
	__type(value, struct rxe_slot);
} rxe_slots SEC(".maps");

static __always_inline __u64 rxe_slot_key(__u32 dev, __u32 qpn)
{
	return ((__u64)dev << 32 | qpn) + 1;
}

static __always_inline struct rxe_slot *rxe_slot_of(__u32 dev, __u32 qpn)
{
	__u32 i = (qpn ^ dev * 0x9e3779b1u) & (RXE_SLOTS - 1);

	return bpf_map_lookup_elem(&rxe_slots, &i);
}

static __always_inline struct rxe_qp_count *qp_count(__u32 dev, __u32 qpn)
{
	struct rxe_qp_key k = { .dev = dev, .qpn = qpn };
	struct rxe_slot *s = rxe_slot_of(dev, qpn);
	__u64 key = rxe_slot_key(dev, qpn);
	struct rxe_qp_count zero = {};
	struct rxe_qp_count *c;

	if (s && (s->key == key ||
		  (!s->key && (__sync_val_compare_and_swap(&s->key, 0, key) == 0 ||
			       s->key == key))))
		return &s->c;
	c = bpf_map_lookup_elem(&rxe_counts, &k);
	if (c)
		return c;
	/* Another CPU may add it first: NOEXIST keeps its counts. */
	bpf_map_update_elem(&rxe_counts, &k, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&rxe_counts, &k);
}

/*
 * One packet on @qpn's side @tx.  The counts are atomic (a QP's requester
 * and responder send from different tasks, and its completions are taken
 * on a third); the PSN range is best effort.
 */
static __always_inline void count_packet(__u32 dev, __u32 qpn, bool tx, __u32 psn,
					 __u32 len)
{
	struct rxe_qp_count *c = qp_count(dev, qpn);
	struct rxe_dir_count *d;

	if (!c)
		return;
	d = &c->dir[!tx];
	if (!__sync_fetch_and_add(&d->pkts, 1))
		d->psn_first = psn;
	__sync_fetch_and_add(&d->bytes, len);
	d->psn_last = psn;
}

/* The QP's counts into its CQE record, and from zero again. */
static __always_inline void take_counts(struct rdt_ev_rxe_cqe *e, __u32 dev)
{
	struct rxe_qp_key k = { .dev = dev, .qpn = e->qpn };
	struct rxe_slot *s = rxe_slot_of(dev, e->qpn);
	struct rxe_qp_count none = {};
	struct rxe_qp_count *c;

	if (s && s->key == rxe_slot_key(dev, e->qpn))
		c = &s->c;
	else
		c = bpf_map_lookup_elem(&rxe_counts, &k);
	if (!c)
		c = &none;
	e->counted = 1;
	e->pad = 0;
	/* The PSNs before the counts go: a packet counted after the swap
	 * sets the next range's first PSN. */
	e->tx_psn_first = c->dir[0].psn_first;
	e->tx_psn_last = c->dir[0].psn_last;
	e->rx_psn_first = c->dir[1].psn_first;
	e->rx_psn_last = c->dir[1].psn_last;
	e->tx_pkts = (__u32)__sync_lock_test_and_set(&c->dir[0].pkts, 0);
	e->rx_pkts = (__u32)__sync_lock_test_and_set(&c->dir[1].pkts, 0);
	e->tx_bytes = __sync_lock_test_and_set(&c->dir[0].bytes, 0);
	e->rx_bytes = __sync_lock_test_and_set(&c->dir[1].bytes, 0);
}

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
	__u32 dev = RXE_RD(d, cq->ibcq.device->index, cq, ibcq.device, index);

	/* Zeroes on a fault, as BPF_CORE_READ gives. */
	if (user)
		bpf_probe_read_kernel(&uwc, sizeof(uwc), &cqe->uibwc);
	e = RDT_RESERVE(RDT_EV_RXE_CQE, struct rdt_ev_rxe_cqe, bpf_ktime_get_ns(), dev);
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
	take_counts(e, dev);
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

/* rxe's parse of the packet in @skb: struct rxe_pkt_info lives in skb->cb. */
static __always_inline struct rxe_pkt_info___rdt *skb_pkt(struct sk_buff *skb)
{
	return (void *)skb + bpf_core_field_offset(struct sk_buff, cb);
}

/* A BTH's 24-bit field (destination QPN at byte 5, PSN at byte 9). */
static __always_inline __u32 bth24(const __u8 *bth, int at)
{
	return (bth[at] << 16) | (bth[at + 1] << 8) | bth[at + 2];
}

/*
 * A packet rxe has taken for one of its QPs: rxe_rcv has checked its
 * headers, ICRC and QPN and found the QP (holding a reference), and hands
 * requests to the QP's responder (rxe_resp_queue_pkt) and responses to
 * its completer (rxe_comp_queue_pkt).  Counted here rather than in
 * rxe_rcv, by the QP rxe found: a packet for a QPN that is no longer a QP
 * (the peer's retransmission after a destroy) would otherwise claim a
 * count slot for a QP that will never give it back; a multicast packet
 * (BTH QPN 0xffffff) is counted for each QP that receives it; and a
 * packet rxe drops is in no QP's count.
 */
static __always_inline void on_rx(struct rxe_qp___rdt *qp, struct sk_buff *skb, bool response,
				  const bool d)
{
	struct rxe_pkt_info___rdt *pkt = skb_pkt(skb);
	__u8 *hdr = RXE_RD(d, pkt->hdr, pkt, hdr);
	__u32 dev = RXE_RD(d, qp->ibqp.device->index, qp, ibqp.device, index);
	__u32 qpn = RXE_RD(d, qp->ibqp.qp_num, qp, ibqp.qp_num);
	__u8 bth[13] = {};
	__u32 psn;

	/*
	 * rxe_rcv has parsed the BTH's opcode and PSN into the packet's
	 * info: an fentry program loads them (skb->cb is plain bytes to the
	 * verifier), where reading the BTH itself is a helper call, most of
	 * this hook's cost.  A kprobe program reads the BTH either way.
	 */
	if (d) {
		psn = pkt->psn;
		bth[0] = pkt->opcode;
	} else {
		if (bpf_probe_read_kernel(bth, sizeof(bth), hdr))
			return;
		psn = bth24(bth, 9);
	}
	count_packet(dev, qpn, false, psn, RXE_RD(d, pkt->paylen, pkt, paylen));
	/*
	 * A NAK for a sequence error makes this QP's requester go back to
	 * the NAK's PSN without any timer: the only place it is visible
	 * outside the inlined completer state machine.  psn is the first
	 * PSN it will resend.  The AETH's syndrome follows the 12-byte BTH.
	 */
	if (!response || bth[0] != IB_OPCODE_RC_ACKNOWLEDGE)
		return;
	if (d && bpf_probe_read_kernel(&bth[12], 1, hdr + 12))
		return;
	if (bth[12] == AETH_NAK_PSN_SEQ_ERROR)
		emit_retry(bpf_ktime_get_ns(), dev, qpn, psn, RDT_RXE_NAK_SEQ);
}

/*
 * --rxe=packets only (the loader hooks rxe_rcv for nothing else): a
 * record of every packet as it arrives, before rxe checks it, so the
 * receive time of clock alignment's pairs is not behind the ICRC
 * computation.  At entry rxe_rcv has not parsed the packet yet
 * (pkt->opcode, psn are set inside it), but pkt->hdr already points at
 * the BTH: parse that.
 */
static __always_inline void on_rcv(struct sk_buff *skb, const bool d)
{
	struct rxe_pkt_info___rdt *pkt = skb_pkt(skb);
	__u64 ts = bpf_ktime_get_ns();
	__u8 bth[12] = {};
	__u8 *hdr = RXE_RD(d, pkt->hdr, pkt, hdr);
	/* skb->cb is bytes to the verifier: the device pointer is a number. */
	struct rxe_dev___rdt *rxe = RXE_RD(d, pkt->rxe, pkt, rxe);
	__u32 dev = BPF_CORE_READ(rxe, ib_dev.index);
	struct rdt_ev_rxe_rcv *e;

	if (!rxe_packets || bpf_probe_read_kernel(bth, sizeof(bth), hdr))
		return;
	e = RDT_RESERVE(RDT_EV_RXE_RCV, struct rdt_ev_rxe_rcv, ts, dev);
	if (!e)
		return;
	e->opcode = bth[0];
	/* The destination QPN is this host's QP: the one whose CQEs carry it. */
	e->qpn = bth24(bth, 5);
	e->psn = bth24(bth, 9);
	e->length = RXE_RD(d, pkt->paylen, pkt, paylen);
	rdt_submit(e);
}

/*
 * Every packet rxe hands to the network or to its loopback: requests,
 * read responses and ACKs (rxe_req.c, rxe_resp.c; 6.1 and 6.12 alike).
 * rxe_prepare has pushed UDP and IP before this call, so the network
 * header is set; pkt->hdr points at the BTH.  paylen is the same
 * BTH-to-ICRC length rxe_rcv's pkt carries on the peer, so both ends of
 * one packet record (and count) the same length.  Counted: the BTH,
 * paylen, the QP's number and device; recorded, the IP header too.
 */
static __always_inline void on_xmit(struct rxe_qp___rdt *qp, struct rxe_pkt_info___rdt *pkt,
				    struct sk_buff *skb, const bool d)
{
	/* The clock only for a record (as on_rcv()), read where it was. */
	__u64 ts = rxe_packets ? bpf_ktime_get_ns() : 0;
	__u8 bth[12], ip[40];
	__u32 dev = RXE_RD(d, qp->ibqp.device->index, qp, ibqp.device, index);
	__u32 len = RXE_RD(d, pkt->paylen, pkt, paylen);
	__u8 *pkt_hdr = RXE_RD(d, pkt->hdr, pkt, hdr);
	__u32 psn;
	unsigned char *head;
	struct rdt_ev_rxe_xmit *e;
	__u16 nh;

	/* The PSN rxe put in the BTH it built (init_req_packet(),
	 * prepare_ack_packet()): a load in an fentry program, as on_rx(). */
	if (d) {
		psn = pkt->psn;
	} else {
		if (bpf_probe_read_kernel(bth, sizeof(bth), pkt_hdr))
			return;
		psn = bth24(bth, 9);
	}
	count_packet(dev, RXE_RD(d, qp->ibqp.qp_num, qp, ibqp.qp_num), true, psn, len);
	if (!rxe_packets)
		return;
	if (d && bpf_probe_read_kernel(bth, sizeof(bth), pkt_hdr))
		return;
	head = RXE_RD(d, skb->head, skb, head);
	nh = RXE_RD(d, skb->network_header, skb, network_header);
	/* An IPv4 header is 20 bytes, but UDP and the BTH follow it: 40 are there. */
	if (bpf_probe_read_kernel(ip, sizeof(ip), head + nh))
		return;
	e = RDT_RESERVE(RDT_EV_RXE_XMIT, struct rdt_ev_rxe_xmit, ts, dev);
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
	e->qpn = bth24(bth, 5);
	e->psn = psn;
	e->length = len;
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
 * A QP's end: its slot free for the next QP that hashes there, its hash
 * entry gone (LRU would take it when room is needed).  Its packets since
 * its last CQE go with it.  On rxe_destroy_qp's return, not its entry:
 * until rxe has stopped the QP's tasks and waited out the references its
 * queued packets hold (rxe_cleanup(), 6.1 to 7.2 alike), the QP still
 * sends (the responder's ACK goes out after the receive CQE the
 * application destroys on) and receives, and a packet counted after an
 * early release took the slot again for a QP that was gone.  Once rxe has
 * returned, no packet is counted for it (on_rx() counts only packets rxe
 * found a QP for).  A destroy rxe refuses (a QP still attached to a
 * multicast group) keeps the slot.  The counts are cleared before the
 * key, so a slot is never free with counts in it.
 */
static __always_inline void release_slot(__u32 dev, __u32 qpn)
{
	struct rxe_qp_key k = { .dev = dev, .qpn = qpn };
	struct rxe_slot *s = rxe_slot_of(dev, qpn);
	__u64 key = rxe_slot_key(dev, qpn);

	if (s && s->key == key) {
		__builtin_memset(&s->c, 0, sizeof(s->c));
		__sync_val_compare_and_swap(&s->key, key, 0);
	}
	bpf_map_delete_elem(&rxe_counts, &k);
}

SEC("fexit/rxe_destroy_qp")
int BPF_PROG(fexit_destroy_qp, struct ib_qp___rdt *ibqp, void *udata, int ret)
{
	if (!ret)
		release_slot(ibqp->device->index, ibqp->qp_num);
	return 0;
}

/*
 * A kretprobe sees the return value only: the kprobe at entry keeps the
 * QP's key by thread for it.  A return the kernel misses (more destroys
 * asleep at once than the kretprobe's instances) leaves a slot held:
 * later QPs that hash there are counted in the hash, as in a collision.
 * LRU: such a thread's entry goes when room is needed.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, struct rxe_qp_key);
} rxe_destroying SEC(".maps");

SEC("kprobe/rxe_destroy_qp")
int BPF_KPROBE(kprobe_destroy_qp, struct ib_qp___rdt *ibqp)
{
	struct rxe_qp_key k = {
		.dev = BPF_CORE_READ(ibqp, device, index),
		.qpn = BPF_CORE_READ(ibqp, qp_num),
	};
	__u64 id = bpf_get_current_pid_tgid();

	bpf_map_update_elem(&rxe_destroying, &id, &k, BPF_ANY);
	return 0;
}

SEC("kretprobe/rxe_destroy_qp")
int BPF_KRETPROBE(kretprobe_destroy_qp, int ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct rxe_qp_key *k = bpf_map_lookup_elem(&rxe_destroying, &id);

	if (!k)
		return 0;
	if (!ret)
		release_slot(k->dev, k->qpn);
	bpf_map_delete_elem(&rxe_destroying, &id);
	return 0;
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
/* Called from rxe_recv.c into rxe_resp.c and rxe_comp.c: not inlined. */
RXE_HOOK(resp_queue_pkt, rxe_resp_queue_pkt, on_rx(qp, skb, false, d),
	 struct rxe_qp___rdt *qp, struct sk_buff *skb)
RXE_HOOK(comp_queue_pkt, rxe_comp_queue_pkt, on_rx(qp, skb, true, d),
	 struct rxe_qp___rdt *qp, struct sk_buff *skb)
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
