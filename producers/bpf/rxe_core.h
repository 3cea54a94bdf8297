/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few rdma_rxe / ib_core types rxe.bpf.c reads.  They live in module
 * BTF (rdma_rxe, ib_core), never in vmlinux.h, so they are declared here
 * with a ___rdt flavour suffix: libbpf drops the suffix and relocates every
 * field against the running kernel's module BTF, which is how one object
 * serves 6.1 and 6.12 (struct rxe_cq lost is_dying and comp_task in 6.12;
 * the fields read here did not move by name).
 */
#ifndef RDT_RXE_CORE_H
#define RDT_RXE_CORE_H

struct ib_device___rdt {
	u32 index;
} __attribute__((preserve_access_index));

struct ib_cq___rdt {
	struct ib_device___rdt *device;
} __attribute__((preserve_access_index));

struct ib_qp___rdt {
	struct ib_device___rdt *device;
	u32 qp_num;
} __attribute__((preserve_access_index));

struct rxe_pool_elem___rdt {
	u32 index;
} __attribute__((preserve_access_index));

struct rxe_cq___rdt {
	struct ib_cq___rdt ibcq;
	struct rxe_pool_elem___rdt elem;
	bool is_user;
} __attribute__((preserve_access_index));

/*
 * CO-RE only matches an enum field with an enum of the same name, so the
 * ib_wc enums are declared (their values come from the record's reader).
 */
enum ib_wc_status___rdt { RDT_IB_WC_SUCCESS___ };
enum ib_wc_opcode___rdt { RDT_IB_WC_SEND___ };

/* wr_id sits in an anonymous union with wr_cqe; libbpf finds it there. */
struct ib_wc___rdt {
	u64 wr_id;
	enum ib_wc_status___rdt status;
	enum ib_wc_opcode___rdt opcode;
	u32 byte_len;
	struct ib_qp___rdt *qp;
} __attribute__((preserve_access_index));

struct ib_uverbs_wc___rdt {
	u64 wr_id;
	u32 status;
	u32 opcode;
	u32 byte_len;
	u32 qp_num;
} __attribute__((preserve_access_index));

struct rxe_cqe___rdt {
	union {
		struct ib_wc___rdt ibwc;
		struct ib_uverbs_wc___rdt uibwc;
	};
} __attribute__((preserve_access_index));

struct rxe_dev___rdt {
	struct ib_device___rdt ib_dev;
} __attribute__((preserve_access_index));

/* Lives in skb->cb; the caller of rxe_rcv has set rxe, hdr and paylen. */
struct rxe_pkt_info___rdt {
	struct rxe_dev___rdt *rxe;
	u8 *hdr;
	u32 psn;
	u16 paylen;
	u8 opcode;
} __attribute__((preserve_access_index));

struct rxe_req_info___rdt {
	u32 psn;
} __attribute__((preserve_access_index));

struct rxe_comp_info___rdt {
	u32 psn;
} __attribute__((preserve_access_index));

struct rxe_qp___rdt {
	struct ib_qp___rdt ibqp;
	struct rxe_req_info___rdt req;
	struct rxe_comp_info___rdt comp;
	struct timer_list retrans_timer;
	struct timer_list rnr_nak_timer;
} __attribute__((preserve_access_index));

#endif
