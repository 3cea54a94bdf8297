/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * rdmatrace wire format: the one ABI shared by rdmatrace.ko, the BPF
 * programs in producers/bpf/, librdmatrace and every trace file.
 *
 * Every record is a fixed 32-byte header followed by a typed body.  The
 * size of each type is fixed for a given ABI major version; a reader skips
 * any record by its header's size, so types added in a later minor version
 * are skipped (and counted) by older readers.  Sizes are multiples of 8 so
 * records stay naturally aligned inside relay sub-buffers and files.
 *
 * Objects are named by (device index, QPN / CQ id / PD id / MR key); no
 * kernel pointer ever crosses this interface.
 *
 * Timestamps are CLOCK_MONOTONIC nanoseconds (ktime_get_ns() in the kernel,
 * bpf_ktime_get_ns() in BPF, clock_gettime(CLOCK_MONOTONIC) in userspace),
 * so all sources merge on one host without clock translation.
 */
#ifndef _UAPI_RDMATRACE_H
#define _UAPI_RDMATRACE_H

#ifdef __KERNEL__
#include <linux/types.h>
#elif defined(__BPF__) || defined(__bpf__)
/* BPF programs include vmlinux.h, which defines the __uN types. */
#else
#include <linux/types.h>
#endif

/*
 * The debugfs control files are part of this ABI too (librdmatrace parses
 * them): `version` reads "abi MAJOR.MINOR\nmodule VERSION\n"; `dropped`
 * reads one "cpuN COUNT" line per possible CPU, then "total COUNT".
 */

/* Bumped on any incompatible change; readers refuse a newer major. */
#define RDT_ABI_MAJOR		1
/*
 * Bumped when record types or field values are added; older readers skip
 * unknown types.  1.2: RDT_SUBBUF_SEQ_UNUSED.  1.3: RDT_SRC_NCCL_PLUGIN and
 * its records (192..210).  1.4: RDT_EV_POST_FAIL; POST_SEND and POST_RECV
 * are written before the driver runs, their ret and bad are 0.  1.5:
 * RDT_EV_PORT_COUNTER (librdmatrace's port counters source).  1.6:
 * RDT_EV_RXE_XMIT (the send side of rxe_rcv: clock alignment across hosts).
 * 1.7: RDT_EV_NP_COLL_OLD (the Coll fields of NCCL's profiler v1, v2 that
 * v5 lacks); rdt_ev_np_state.steps (was pad: a v1..v3 ProxyOp state's).
 * 1.8: rdt_ev_poll_cq_wc.poll_requested (was pad): a poll that returned
 * completions has no POLL_CQ record of its own, its last completion stands
 * for it (librdmatrace makes the POLL_CQ event back from it).
 * 1.9: every kmod record is stamped inside its relay reservation, so each
 * CPU's stream is in time order; a verb written after its driver returned
 * (PD, CQ, QP, MR records, POST_SEND_DB, REQ_NOTIFY_CQ) carries dur_ns,
 * appended: its hdr.ts_ns is when the driver returned, ts_ns - dur_ns when
 * the verb was entered.  A 1.8 record of those types is 8 bytes shorter
 * (no dur_ns): readers take it, dur_ns 0.
 * 1.10: RDT_SRC_VERBS and its records (136..139): a userspace provider's
 * own post_send, post_recv, post_srq_recv and poll_cq, by uprobe.
 * 1.11: RDT_EV_STUCK and RDT_EV_UNSTUCK (rdmatrace-dump --stuck's reports,
 * written into the trace it makes).
 * 1.12: rdt_ev_qp_modify.dgid, sgid, gids, appended: the path's GIDs (a
 * QP's peer across the hosts of a merged trace, whose QPNs repeat).  A
 * 1.11 record is 32 bytes shorter: readers take it, gids 0.
 * 1.13: RDT_EV_VERBS_REQ_NOTIFY (140): a userspace provider's own
 * req_notify_cq, flags as the module's (solicited_only: IB_CQ_SOLICITED,
 * else IB_CQ_NEXT_COMP), dur_ns the call's time.
 * 1.14: RDT_EV_COLL_STEP (141): a USDT-marked collective's rank began a
 * step (rdma-ring-allreduce's rdmatrace:coll_step).
 * 1.15: rdt_ev_rxe_cqe.tx_bytes .. counted, appended: the QP's packets
 * since its last RXE_CQE, counted by the BPF rxe source's xmit/rcv hooks
 * (it records each packet only with --rxe=packets).  A 1.14 record is 48
 * bytes shorter: readers take it, counted 0.
 * 1.16: RDT_EV_CLOCK (4): a (TSC, CLOCK_MONOTONIC) pair, in the module's
 * relay stream only (relay ABI 2, below): after each sub-buffer header
 * and at least once a second on a CPU that writes records.
 */
#define RDT_ABI_MINOR		16

/*
 * rdmatrace.ko's relay stream (its debugfs `version` reads "abi 2.MINOR",
 * MINOR as RDT_ABI_MINOR): ABI 1's records, written in the relay form.  A
 * record of that form has hdr.version RDT_RELAY_FORM and leaves to the
 * stream what the stream already says, so the data path does not write it
 * (bench/NOTES.md: ~28 guest instructions of a traced verb's ~200):
 * - hdr.cpu is not written: the CPU is the trace<cpu> file's.
 * - hdr.pid and hdr.tid are written only in RDT_EV_COMM records: every
 *   other record is the task's of its CPU's last COMM record since its
 *   RDT_EV_SUBBUF header (the module writes one before a task's first
 *   record in a sub-buffer; pid and tid 0 there mean no task: interrupt
 *   context).  Before any COMM in a sub-buffer, no task (0).
 * - hdr.ts_ns with RDT_TS_RAW set is the raw TSC in its low bits, not
 *   CLOCK_MONOTONIC: the reader converts it, interpolated between the
 *   (TSC, CLOCK_MONOTONIC) pairs around the stamp.  Pairs come from the
 *   stream's RDT_EV_CLOCK records (each sub-buffer starts with one, and a
 *   CPU writes one at least once a second while it writes records) and
 *   from the reader itself, sampled after each of its reads
 *   (rdmatrace-record saves those in the capture directory).  The module
 *   stamps raw only where the kernel trusts the TSC to be one clock
 *   across CPUs (its `clock` file says which).
 * - A sub-buffer starts with its RDT_EV_SUBBUF header, an RDT_EV_CLOCK
 *   (raw stamps only) and the COMM record of the task whose record
 *   switched to it (if any): each sub-buffer reads on its own.
 * librdmatrace's relay source rewrites each such record in place into
 * ABI 1's form (hdr.version RDT_ABI_MAJOR) before anything else reads it;
 * no trace file or other source holds the relay form.  A module of relay
 * ABI 1 (every record in ABI 1's form) is still read.
 */
#define RDT_RELAY_ABI_MAJOR	2
#define RDT_RELAY_FORM		2
#define RDT_TS_RAW		0x8000000000000000ULL	/* bit 63 */

/* First two bytes of every record: "Rt" little endian. */
#define RDT_REC_MAGIC		0x7452

#define RDT_NAME_LEN		64	/* == IB_DEVICE_NAME_MAX */
#define RDT_COMM_LEN		16	/* == TASK_COMM_LEN */
#define RDT_NO_DEV		0xffffffffu
/* rdt_ev_lost.lost_cpu of a loss that belongs to no CPU (BPF ring buffer). */
#define RDT_ANY_CPU		0xffffffffu

/* Which producer wrote a record. */
enum rdt_source {
	RDT_SRC_KMOD	= 1,	/* rdmatrace.ko device->ops wrappers (relay) */
	RDT_SRC_BPF	= 2,	/* producers/bpf/ (BPF ring buffer) */
	RDT_SRC_USER	= 3,	/* librdmatrace itself (e.g. drop markers) */
	RDT_SRC_NCCL_PLUGIN = 4, /* libnccl-profiler-rdmatrace.so (1.3) */
	RDT_SRC_VERBS	= 5,	/* producers/bpf/verbs.bpf.c (1.10) */
};

/*
 * ts_ns of a kmod record is taken inside its relay reservation, with
 * interrupts off on the CPU whose buffer it goes to (1.9): each trace<cpu>
 * file's stamps never go back.  The records of one call (a post's WRs, a
 * poll's completions) share one stamp.
 */
struct rdt_hdr {
	__u16	magic;		/* RDT_REC_MAGIC */
	__u8	version;	/* RDT_ABI_MAJOR */
	__u8	source;		/* enum rdt_source */
	__u16	type;		/* enum rdt_type */
	__u16	size;		/* whole record, header included, bytes */
	__u64	ts_ns;		/* CLOCK_MONOTONIC */
	__u32	pid;		/* thread group id (userspace "pid") */
	__u32	tid;		/* thread id */
	__u32	cpu;
	__u32	dev;		/* ib_device index, RDT_NO_DEV if none */
};

/* schema/gen.py: enum rdt_type */
/*
 * Record types.  Numbers are stable across minor versions: new types are
 * only ever appended within a range.
 */
enum rdt_type {
	/* 1..63: stream bookkeeping, any source */
	RDT_EV_SUBBUF		= 1,	/* starts every relay sub-buffer */
	RDT_EV_COMM		= 2,	/* pid/tid -> comm, before a task's events */
	RDT_EV_LOST		= 3,	/* events lost by a source (in-stream) */
	RDT_EV_CLOCK		= 4,	/* 1.16: a TSC, CLOCK_MONOTONIC pair (relay form) */
	/* 16..63: librdmatrace's own records (source RDT_SRC_USER) */
	RDT_EV_PORT_COUNTER	= 16,	/* 1.5: a port counter that moved */
	RDT_EV_STUCK		= 17,	/* 1.11: --stuck: a report's line */
	RDT_EV_UNSTUCK		= 18,	/* 1.11: --stuck: moving again */

	/* 64..127: rdmatrace.ko, device->ops wrappers */
	RDT_EV_DEVICE_ADD	= 64,
	RDT_EV_DEVICE_REMOVE	= 65,
	RDT_EV_DEVICE_RENAME	= 66,
	RDT_EV_PD_ALLOC		= 67,
	RDT_EV_PD_DEALLOC	= 68,
	RDT_EV_CQ_CREATE	= 69,
	RDT_EV_CQ_DESTROY	= 70,
	RDT_EV_QP_CREATE	= 71,
	RDT_EV_QP_MODIFY	= 72,
	RDT_EV_QP_DESTROY	= 73,
	RDT_EV_MR_REG		= 74,
	RDT_EV_MR_DEREG		= 75,
	RDT_EV_POST_SEND	= 76,	/* one per WR */
	RDT_EV_POST_SEND_DB	= 77,	/* empty WR list: uverbs doorbell */
	RDT_EV_POST_RECV	= 78,	/* one per WR, QP or SRQ */
	RDT_EV_POLL_CQ_WC	= 79,	/* one per returned completion */
	RDT_EV_POLL_CQ		= 80,	/* summary of one poll_cq call */
	RDT_EV_REQ_NOTIFY_CQ	= 81,
	RDT_EV_DEVICE_STATE	= 82,	/* 1.1: present when tracing went on */
	RDT_EV_POST_FAIL	= 83,	/* 1.4: a post_send/recv that failed */

	/* 128..191: producers/bpf/ */
	RDT_EV_NCCL_CALL	= 128,	/* one NCCL API call, at its return */
	RDT_EV_NCCL_COMM	= 129,	/* communicator initialised */
	RDT_EV_RXE_CQE		= 130,	/* rxe_cq_post: every rxe completion */
	RDT_EV_RXE_RCV		= 131,	/* rxe_rcv: every received packet */
	RDT_EV_RXE_RETRY	= 132,	/* requester retransmit / RNR retry */
	RDT_EV_TCP_RETRANSMIT	= 133,	/* tcp:tcp_retransmit_skb */
	RDT_EV_COLL_MARK	= 134,	/* USDT collective begin/end marker */
	RDT_EV_RXE_XMIT		= 135,	/* 1.6: rxe_xmit_packet: every sent packet */
	/*
	 * 1.10, source RDT_SRC_VERBS: a userspace provider's data path (its
	 * ibv_context ops), bodies as the module's records of the same verb.
	 * The WRs of a post are stamped at its entry, completions at poll's
	 * return; qpn is ibv_qp.qp_num, cq_id and srq_id the uverbs handle (not
	 * restrack's id), hdr.dev the kernel's device index.
	 */
	RDT_EV_VERBS_POST_SEND	= 136,	/* struct rdt_ev_post_send, one per WR */
	RDT_EV_VERBS_POST_RECV	= 137,	/* struct rdt_ev_post_recv, one per WR */
	RDT_EV_VERBS_WC		= 138,	/* struct rdt_ev_poll_cq_wc, one per WC */
	RDT_EV_VERBS_POST_FAIL	= 139,	/* struct rdt_ev_post_fail: ret -errno */
	/* 1.13: struct rdt_ev_req_notify_cq, at the call's return */
	RDT_EV_VERBS_REQ_NOTIFY	= 140,
	RDT_EV_COLL_STEP	= 141,	/* 1.14: USDT: a rank began a step */

	/* 192..254: NCCL profiler plugin (1.3); struct rdt_np_ids first */
	RDT_EV_NP_COMM_INIT	= 192,	/* profiler init of a communicator */
	RDT_EV_NP_COMM_FINI	= 193,	/* profiler finalize */
	RDT_EV_NP_GROUP		= 194,
	RDT_EV_NP_GROUP_API	= 195,
	RDT_EV_NP_COLL_API	= 196,
	RDT_EV_NP_P2P_API	= 197,
	RDT_EV_NP_KERNEL_LAUNCH	= 198,
	RDT_EV_NP_COLL		= 199,
	RDT_EV_NP_P2P		= 200,
	RDT_EV_NP_PROXY_OP	= 201,
	RDT_EV_NP_PROXY_STEP	= 202,
	RDT_EV_NP_PROXY_CTRL	= 203,
	RDT_EV_NP_KERNEL_CH	= 204,	/* GPU globaltimer at channel start */
	RDT_EV_NP_NET_IB	= 205,	/* one IB work request, at its post */
	RDT_EV_NP_NET_SOCK	= 206,
	RDT_EV_NP_NET		= 207,	/* a net plugin event of another kind */
	RDT_EV_NP_STATE		= 208,	/* recordEventState of an event */
	RDT_EV_NP_STOP		= 209,	/* stopEvent: the event's end */
	RDT_EV_NP_SKIP		= 210,	/* a descriptor the plugin skipped */
	RDT_EV_NP_COLL_OLD	= 211,	/* 1.7: v1, v2 Coll fields v5 lacks */

	RDT_EV_MAX		= 255,
};

/* schema/gen.py: end */

/* Bit n of the kmod `events` mask enables type (64 + n). */
#define RDT_KMOD_TYPE_FIRST	RDT_EV_DEVICE_ADD
#define RDT_KMOD_TYPE_LAST	RDT_EV_POST_FAIL
#define RDT_EVMASK(type)	(1ULL << ((type) - RDT_KMOD_TYPE_FIRST))
#define RDT_EVMASK_ALL		(RDT_EVMASK(RDT_KMOD_TYPE_LAST + 1) - 1)
/* The NCCL plugin's record types. */
#define RDT_NP_TYPE_FIRST	RDT_EV_NP_COMM_INIT
#define RDT_NP_TYPE_LAST	RDT_EV_NP_COLL_OLD

/* ---- bookkeeping ------------------------------------------------------ */

/* schema/gen.py: struct rdt_ev_subbuf */
struct rdt_ev_subbuf {
	struct rdt_hdr hdr;
	__u64	seq;			/* sub-buffer sequence number on this CPU */
	__u64	lost_total;		/* events dropped on this CPU so far */
};

/* schema/gen.py: end */

/*
 * relay's read() can race a sub-buffer switch and return the start of a
 * sub-buffer not yet (re)written: a reader of the relay files drops an
 * RDT_EV_SUBBUF whose seq is this, or lower than one it has seen (a freed
 * sub-buffer's old header), and the records after a repeated seq up to
 * where it had read (relay reads such a sub-buffer again from its start).
 */
#define RDT_SUBBUF_SEQ_UNUSED	(~0ULL)

/* schema/gen.py: struct rdt_ev_comm */
struct rdt_ev_comm {
	struct rdt_hdr hdr;
	char	comm[RDT_COMM_LEN];
};

/* schema/gen.py: end */

/* schema/gen.py: struct rdt_ev_lost */
struct rdt_ev_lost {
	struct rdt_hdr hdr;
	__u64	count;			/* events lost since the previous LOST */
	__u32	lost_source;		/* enum rdt_source that lost them */
	__u32	lost_cpu;
};

/* schema/gen.py: end */

/* ---- librdmatrace: port counters ---------------------------------------- */

/*
 * The NIC counts what software never sees (hardware retries, NAKs,
 * out-of-sequence packets): librdmatrace samples every device's
 * /sys/class/infiniband/DEV/ports/N/{counters,hw_counters}/NAME and writes
 * one record per counter that changed since the previous sample.  Names
 * are sysfs's, whatever the driver, truncated to fit (NUL-terminated).
 * The device is devname (sysfs's); hdr.dev its ib_device index where the
 * reader could ask RDMA netlink for it, else RDT_NO_DEV.
 * The deltas of one counter sum to its last value minus its value at the
 * first sample (a value that went down, a reset, is a negative delta).
 */
#define RDT_CTR_NAME_LEN	64

enum rdt_ctr_kind {
	RDT_CTR_COUNTERS	= 0,	/* ports/N/counters/ */
	RDT_CTR_HW_COUNTERS	= 1,	/* ports/N/hw_counters/ */
};

/* schema/gen.py: struct rdt_ev_port_counter */
struct rdt_ev_port_counter {		/* ts_ns: the sample's time */
	struct rdt_hdr hdr;
	char	devname[RDT_NAME_LEN];	/* shown as the sinks' device */
	char	name[RDT_CTR_NAME_LEN];
	__u64	value;			/* at this sample */
	__s64	delta;			/* since the previous sample */
	__u32	port;
	__u32	kind;			/* enum rdt_ctr_kind */
};

/* schema/gen.py: end */

/*
 * rdmatrace-dump --stuck's reports, as records (1.11): a report is one
 * RDT_EV_STUCK of kind CAUSE (its first line: what looks like the cause),
 * then one a stuck QP or collective; the episode ends with one
 * RDT_EV_UNSTUCK (kind CAUSE, dur_ns: how long it was stuck).  hdr.ts_ns
 * is the report's time; hdr.pid and hdr.dev are the item's (a QP's owner
 * and device), RDT_NO_DEV for a collective.  No larger than the largest
 * record: the public struct rdt_event does not grow.
 */
enum rdt_stuck_kind {
	RDT_STUCK_CAUSE	= 0,	/* text: the cause line (cut at 87 bytes) */
	RDT_STUCK_QP	= 1,	/* text: "comm devname" */
	RDT_STUCK_COLL	= 2,	/* text: the collective's name */
};

/* schema/gen.py: struct rdt_ev_stuck */
struct rdt_ev_stuck {
	struct rdt_hdr hdr;
	__u64	since_ns;		/* the episode: stuck since */
	/* QP, collective: waiting this long; UNSTUCK: the episode's length */
	__u64	waits_ns;
	__u64	wr_id;			/* QP: its oldest send outstanding */
	__u64	seq;			/* collective: its seq */
	__u32	episode;		/* 1, 2, ... in this run */
	__u32	kind;			/* enum rdt_stuck_kind */
	__u32	qpn;
	__u32	dest_qpn;
	__u32	outstanding;		/* QP: send WRs outstanding */
	/* QP: rxe retries since its last send completion (RNR included) */
	__u32	retries;
	__s32	rank;			/* collective */
	__s32	nranks;
	char	text[88];
};

/* schema/gen.py: end */

/* ---- devices ------------------------------------------------------------ */

/* schema/gen.py: struct rdt_ev_device */
struct rdt_ev_device {			/* ADD, REMOVE, RENAME, STATE */
	struct rdt_hdr hdr;
	char	name[RDT_NAME_LEN];
	char	old_name[RDT_NAME_LEN];	/* RENAME only */
	__u64	node_guid;		/* big endian as in ib_device */
	__u32	node_type;		/* enum rdma_node_type */
	__u32	phys_port_cnt;
	__u32	driver_id;		/* enum rdma_driver_id */
	__u32	nr_wrapped;		/* ops wrapped (ADD, STATE) / unwrapped (REMOVE) */
};

/* schema/gen.py: end */

/* ---- protection domains ------------------------------------------------ */

/*
 * PD_ALLOC and a successful CQ_CREATE carry the id the core gives the
 * object after the driver's call (rdma_restrack_add()); 0 is an id too
 * (each device counts from 0).  They are stamped when the module read
 * it: a few ms at most after the driver returned, before any QP or MR
 * creation that names the object and before its destroy; their dur_ns is
 * the driver's time and their pid and tid the creator's.  One the module
 * could not hold back (32 waiting at once) carries 0, stamped at once.
 */
/* schema/gen.py: struct rdt_ev_pd */
struct rdt_ev_pd {			/* PD_ALLOC, PD_DEALLOC */
	struct rdt_hdr hdr;
	__u32	pd_id;			/* ib_pd->res.id */
	__s32	ret;
	__u32	user;			/* 1: created through uverbs */
	__u32	local_dma_lkey;
	__u64	dur_ns;			/* in the driver (1.9): see RDT_ABI_MINOR */
};

/* schema/gen.py: end */

/* ---- completion queues ------------------------------------------------- */

/* schema/gen.py: struct rdt_ev_cq */
struct rdt_ev_cq {			/* CQ_CREATE, CQ_DESTROY */
	struct rdt_hdr hdr;
	__u32	cq_id;			/* ib_cq->res.id */
	__s32	ret;
	__u32	cqe;			/* requested (CREATE) / actual depth */
	__s32	comp_vector;
	__u32	user;
	__u32	pad;
	__u64	dur_ns;			/* in the driver (1.9): see RDT_ABI_MINOR */
};

/* schema/gen.py: end */

/* ---- queue pairs --------------------------------------------------------- */

/* schema/gen.py: struct rdt_ev_qp_create */
struct rdt_ev_qp_create {
	struct rdt_hdr hdr;
	__u32	qpn;
	__s32	ret;
	__u32	qp_type;		/* enum ib_qp_type */
	__u32	send_cq_id;
	__u32	recv_cq_id;
	__u32	srq;			/* 1 if attached to an SRQ */
	__u32	max_send_wr;
	__u32	max_recv_wr;
	__u32	max_send_sge;
	__u32	max_recv_sge;
	__u32	max_inline_data;
	__u32	sq_sig_type;
	__u32	pd_id;
	__u32	user;
	__u32	port;
	__u32	pad;
	__u64	dur_ns;			/* in the driver (1.9): see RDT_ABI_MINOR */
};

/* schema/gen.py: end */

/* schema/gen.py: struct rdt_ev_qp_modify */
struct rdt_ev_qp_modify {
	struct rdt_hdr hdr;
	__u32	qpn;
	__s32	ret;
	__u32	attr_mask;		/* enum ib_qp_attr_mask */
	__u8	old_state;		/* enum ib_qp_state before the call */
	__u8	new_state;		/* attr->qp_state if IB_QP_STATE set */
	__u8	cur_state;		/* state after the call */
	__u8	path_mtu;		/* enum ib_mtu */
	__u32	dest_qpn;
	__u32	sq_psn;
	__u32	rq_psn;
	__u8	timeout;
	__u8	retry_cnt;
	__u8	rnr_retry;
	__u8	min_rnr_timer;
	__u32	port;
	__u32	qkey;
	__u32	max_rd_atomic;
	__u32	max_dest_rd_atomic;
	__u64	dur_ns;			/* in the driver (1.9): see RDT_ABI_MINOR */
	/*
	 * 1.12: with IB_QP_AV when the path has a GRH (RoCE always): the peer's
	 * GID, and this QP's own (the source GID the core resolved).  gids says
	 * which are set (enum rdt_qp_gids).
	 */
	__u8	dgid[16];
	__u8	sgid[16];
	__u32	gids;
	__u32	pad;
};

/* schema/gen.py: end */

enum rdt_qp_gids {
	RDT_QP_DGID	= 1,
	RDT_QP_SGID	= 2,
};

/* schema/gen.py: struct rdt_ev_qp_destroy */
struct rdt_ev_qp_destroy {
	struct rdt_hdr hdr;
	__u32	qpn;
	__s32	ret;
	__u32	qp_type;
	__u32	pad;
	__u64	dur_ns;			/* in the driver (1.9): see RDT_ABI_MINOR */
};

/* schema/gen.py: end */

/* ---- memory regions ------------------------------------------------------ */

enum rdt_mr_kind {
	RDT_MR_USER	= 1,		/* reg_user_mr */
	RDT_MR_DMA	= 2,		/* get_dma_mr */
	RDT_MR_ALLOC	= 3,		/* alloc_mr (fast registration) */
};

/* schema/gen.py: struct rdt_ev_mr */
struct rdt_ev_mr {			/* MR_REG, MR_DEREG */
	struct rdt_hdr hdr;
	__u32	lkey;
	__u32	rkey;
	__u64	iova;			/* user virtual address (user MRs) */
	__u64	length;
	__s32	ret;
	__u32	access;			/* enum ib_access_flags */
	__u32	kind;			/* enum rdt_mr_kind */
	__u32	pd_id;
	__u64	dur_ns;			/* in the driver (1.9): see RDT_ABI_MINOR */
};

/* schema/gen.py: end */

/* ---- data path ---------------------------------------------------------- */

/* schema/gen.py: struct rdt_ev_post_send */
struct rdt_ev_post_send {
	struct rdt_hdr hdr;
	__u64	wr_id;
	__u64	remote_addr;		/* RDMA / atomic only */
	__u64	total_len;		/* sum of the SGEs' lengths */
	__u32	qpn;
	__s32	ret;			/* 0 since 1.4: see POST_FAIL */
	__u32	rkey;			/* RDMA / atomic only */
	__u32	imm;			/* imm_data (big endian) or invalidate */
	__u8	opcode;			/* enum ib_wr_opcode */
	__u8	bad;			/* 0 since 1.4: see POST_FAIL */
	__u16	send_flags;		/* enum ib_send_flags */
	__u16	num_sge;
	__u16	index;			/* position in the posted list */
};

/* schema/gen.py: end */

/* schema/gen.py: struct rdt_ev_post_send_db */
struct rdt_ev_post_send_db {		/* empty WR list (doorbell) */
	struct rdt_hdr hdr;
	__u32	qpn;
	__s32	ret;
	__u64	dur_ns;			/* in the driver (1.9): see RDT_ABI_MINOR */
};

/* schema/gen.py: end */

/* schema/gen.py: struct rdt_ev_post_recv */
struct rdt_ev_post_recv {
	struct rdt_hdr hdr;
	__u64	wr_id;
	__u64	total_len;
	__u32	qpn;			/* 0 for an SRQ post */
	__u32	srq_id;			/* post_srq_recv only */
	__s32	ret;
	__u16	num_sge;
	__u8	srq;			/* 1: post_srq_recv */
	__u8	bad;
	__u16	index;
	__u16	pad0;
	__u32	pad1;
};

/* schema/gen.py: end */

/*
 * A post_send / post_recv / post_srq_recv call that returned an error.
 * Since 1.4 the WRs' records are written before the driver runs (after it
 * returns a completion may already have freed them), each with ret and bad
 * 0; this record follows them when the call failed: the WRs of index >=
 * bad_index of the QP's (SRQ's) latest post were not posted.  A call that
 * succeeded has no such record.
 */
#define RDT_BAD_INDEX_UNKNOWN	0xffff	/* the driver named no bad WR */
/* A --verbs ibv_cq_ex completion whose opcode the application did not read. */
#define RDT_WC_OPCODE_UNREAD	0xff

/* schema/gen.py: struct rdt_ev_post_fail */
struct rdt_ev_post_fail {
	struct rdt_hdr hdr;
	__u32	qpn;			/* 0 for an SRQ post */
	__u32	srq_id;			/* post_srq_recv only */
	__s32	ret;			/* -errno */
	__u16	post_type;		/* RDT_EV_POST_SEND or RDT_EV_POST_RECV */
	__u16	nr_wr;			/* WRs in the list */
	__u16	bad_index;		/* *bad_wr's index, or _UNKNOWN */
	__u8	srq;			/* 1: post_srq_recv */
	__u8	pad0;
	__u32	pad1;
};

/* schema/gen.py: end */

/* schema/gen.py: struct rdt_ev_poll_cq_wc */
struct rdt_ev_poll_cq_wc {
	struct rdt_hdr hdr;
	__u64	wr_id;
	__u32	cq_id;
	__u32	status;			/* enum ib_wc_status */
	__u32	opcode;			/* enum ib_wc_opcode */
	__u32	byte_len;
	__u32	qpn;
	__u32	src_qp;
	__u32	wc_flags;
	__u32	imm;
	__u32	vendor_err;
	__u16	index;			/* position in the returned array */
	/*
	 * 1.8: non-zero only on the last completion of a poll whose summary was
	 * asked for (POLL_CQ in the event mask): the poll's num_entries, 65535
	 * if more.  That poll's POLL_CQ record is not written: cq_id, requested
	 * and ret (index + 1) are all here.
	 */
	__u16	poll_requested;
};

/* schema/gen.py: end */

/*
 * 1.8: written for a poll that returned no completion or failed, or one
 * whose completions are not traced; see poll_requested above.
 */
/* schema/gen.py: struct rdt_ev_poll_cq */
struct rdt_ev_poll_cq {
	struct rdt_hdr hdr;
	__u32	cq_id;
	__s32	requested;		/* num_entries */
	__s32	ret;			/* returned count or -errno */
	__u32	pad;
};

/* schema/gen.py: end */

/* schema/gen.py: struct rdt_ev_req_notify_cq */
struct rdt_ev_req_notify_cq {
	struct rdt_hdr hdr;
	__u32	cq_id;
	__u32	flags;			/* enum ib_cq_notify_flags */
	__s32	ret;
	__u32	pad;
	__u64	dur_ns;			/* in the driver (1.9): see RDT_ABI_MINOR */
};

/* schema/gen.py: end */

/* ---- producers/bpf/: NCCL ------------------------------------------------ */

enum rdt_nccl_fn {
	RDT_NCCL_GET_UNIQUE_ID = 1,
	RDT_NCCL_COMM_INIT_RANK,
	RDT_NCCL_COMM_INIT_RANK_CONFIG,
	RDT_NCCL_COMM_INIT_ALL,
	RDT_NCCL_COMM_SPLIT,
	RDT_NCCL_COMM_FINALIZE,
	RDT_NCCL_COMM_DESTROY,
	RDT_NCCL_COMM_ABORT,
	RDT_NCCL_ALL_REDUCE,
	RDT_NCCL_BROADCAST,
	RDT_NCCL_BCAST,
	RDT_NCCL_REDUCE,
	RDT_NCCL_ALL_GATHER,
	RDT_NCCL_REDUCE_SCATTER,
	RDT_NCCL_ALL_TO_ALL,
	RDT_NCCL_SEND,
	RDT_NCCL_RECV,
	RDT_NCCL_GROUP_START,
	RDT_NCCL_GROUP_END,
	RDT_NCCL_FN_MAX,
};

/* schema/gen.py: struct rdt_ev_nccl_call */
struct rdt_ev_nccl_call {		/* ts_ns = entry time */
	struct rdt_hdr hdr;
	__u64	duration_ns;		/* entry -> return: enqueue time only */
	__u64	count;
	__u64	comm;			/* user-space ncclComm_t value */
	__u64	stream;			/* user-space cudaStream_t value */
	__u64	comm_hash;		/* splitmix64 over the ncclUniqueId */
	__u64	seq;			/* per-communicator call number */
	__u32	fn;			/* enum rdt_nccl_fn */
	__s32	ret;			/* ncclResult_t */
	__s32	datatype;		/* ncclDataType_t, -1 if n/a */
	__s32	op;			/* ncclRedOp_t, -1 if n/a */
	__s32	root;			/* root or peer, -1 if n/a */
	__s32	rank;			/* -1 if the comm is unknown */
	__s32	nranks;
	__u32	pad;
};

/* schema/gen.py: end */

/* schema/gen.py: struct rdt_ev_nccl_comm */
struct rdt_ev_nccl_comm {
	struct rdt_hdr hdr;
	__u64	comm;			/* user-space ncclComm_t value */
	__u64	comm_hash;
	__s32	rank;
	__s32	nranks;
	__u32	fn;			/* the init function that made it */
	__s32	ret;
};

/* schema/gen.py: end */

/* ---- producers/bpf/: rxe internals --------------------------------------- */

/* schema/gen.py: struct rdt_ev_rxe_cqe */
struct rdt_ev_rxe_cqe {
	struct rdt_hdr hdr;
	__u64	wr_id;
	__u32	qpn;
	__u32	cq_id;			/* rxe pool index of the CQ */
	__u32	status;			/* enum ib_wc_status */
	__u32	opcode;			/* enum ib_wc_opcode */
	__u32	byte_len;
	__u32	user;			/* 1: CQ is mapped to userspace */
	__u64	tx_bytes;		/* 1.15: sent since its last CQE (BTH to ICRC) */
	__u64	rx_bytes;		/* 1.15: received since its last CQE */
	__u32	tx_pkts;		/* 1.15: packets sent since its last CQE */
	__u32	rx_pkts;		/* 1.15: packets received since its last CQE */
	__u32	tx_psn_first;		/* 1.15: of those sent (best effort) */
	__u32	tx_psn_last;
	__u32	rx_psn_first;		/* 1.15: of those received (best effort) */
	__u32	rx_psn_last;
	__u32	counted;		/* 1.15: 1: the packet fields above hold counts */
	__u32	pad;
};

/* schema/gen.py: end */

/* schema/gen.py: struct rdt_ev_rxe_rcv */
struct rdt_ev_rxe_rcv {
	struct rdt_hdr hdr;
	__u32	qpn;			/* destination QPN of the packet */
	__u32	psn;
	__u32	opcode;			/* IB BTH opcode */
	__u32	length;			/* packet payload length */
};

/* schema/gen.py: end */

/*
 * One RoCEv2 packet handed to the network by rxe (requests, responses and
 * ACKs alike).  With rxe_rcv on the peer it is one message seen on both
 * hosts: the pair bounds the offset between their clocks.  The addresses
 * name the hosts: saddr is this host's, daddr the receiver's.
 */
/* schema/gen.py: struct rdt_ev_rxe_xmit */
struct rdt_ev_rxe_xmit {
	struct rdt_hdr hdr;
	__u8	saddr[16];		/* IPv4 in the first 4 bytes */
	__u8	daddr[16];
	__u32	qpn;			/* destination QPN (the BTH's) */
	__u32	psn;
	__u32	opcode;			/* IB BTH opcode */
	__u32	length;			/* packet payload length */
	__u32	src_qpn;		/* the sending QP */
	__u32	family;			/* AF_INET or AF_INET6 */
};

/* schema/gen.py: end */

enum rdt_rxe_retry_kind {
	RDT_RXE_RETRANSMIT	= 1,	/* retransmit timer fired */
	RDT_RXE_RNR		= 2,	/* RNR NAK retry */
	RDT_RXE_NAK_SEQ		= 3,	/* NAK sequence error: go back */
};

/* schema/gen.py: struct rdt_ev_rxe_retry */
struct rdt_ev_rxe_retry {
	struct rdt_hdr hdr;
	__u32	qpn;
	__u32	psn;
	__u32	kind;			/* enum rdt_rxe_retry_kind */
	__u32	pad;
};

/* schema/gen.py: end */

/* ---- producers/bpf/: TCP ------------------------------------------------- */

/* schema/gen.py: struct rdt_ev_tcp_retransmit */
struct rdt_ev_tcp_retransmit {
	struct rdt_hdr hdr;
	__u8	saddr[16];		/* IPv4 in the first 4 bytes */
	__u8	daddr[16];
	__u16	sport;			/* host order */
	__u16	dport;
	__u16	family;			/* AF_INET / AF_INET6 */
	__u8	state;			/* TCP state */
	__u8	pad;
};

/* schema/gen.py: end */

/* ---- producers/bpf/: USDT collective markers (tools/rdma-ring-allreduce) */

/* schema/gen.py: struct rdt_ev_coll_mark */
struct rdt_ev_coll_mark {
	struct rdt_hdr hdr;
	__u64	bytes;
	__u64	seq;
	__u32	op;			/* 1: allreduce */
	__s32	rank;
	__s32	nranks;
	__u32	phase;			/* 0: begin, 1: end */
};

/* schema/gen.py: end */

/*
 * A rank of a USDT-marked collective began step @step of its @steps (it
 * posted the step's first send): where each rank is, inside a collective
 * that does not end (--stuck).
 */
/* schema/gen.py: struct rdt_ev_coll_step */
struct rdt_ev_coll_step {
	struct rdt_hdr hdr;
	__u64	seq;
	__u32	op;			/* as rdt_ev_coll_mark's */
	__s32	rank;
	__s32	nranks;
	__u32	step;
	__u32	steps;
	__u32	pad;
};

/* schema/gen.py: end */

/* ---- NCCL profiler plugin (libnccl-profiler-rdmatrace.so) -------------- */

/*
 * NCCL's profiler ABI hands the plugin nested events: the handle the
 * plugin returns for one is the parentObj of its children.  The plugin's
 * handle is the event id below, so a collective -> its proxy ops -> their
 * steps -> the IB work requests form one tree by (hdr.pid, id, parent).
 * An event is its start record (one of 192..207), any RDT_EV_NP_STATE
 * records and one RDT_EV_NP_STOP record, all with the same id; a Coll of
 * NCCL's profiler v1 or v2 also has an RDT_EV_NP_COLL_OLD record (not a
 * start: more fields of the same event).
 */

/*
 * NCCL's type bits (ntype below), spelt out: BIT() is not for userspace.
 * State values are NCCL's v5 states.
 */
#define RDT_NP_GROUP		0x001u
#define RDT_NP_COLL		0x002u
#define RDT_NP_P2P		0x004u
#define RDT_NP_PROXY_OP		0x008u
#define RDT_NP_PROXY_STEP	0x010u
#define RDT_NP_PROXY_CTRL	0x020u
#define RDT_NP_KERNEL_CH	0x040u
#define RDT_NP_NET_PLUGIN	0x080u
#define RDT_NP_GROUP_API	0x100u
#define RDT_NP_COLL_API		0x200u
#define RDT_NP_P2P_API		0x400u
#define RDT_NP_KERNEL_LAUNCH	0x800u

#define RDT_NP_STR		16	/* NCCL's names ("AllReduce", "Ring") */

/* schema/gen.py: struct rdt_np_ids */
struct rdt_np_ids {
	__u64	id;			/* this event, unique in hdr.pid */
	__u64	parent;			/* its parent's id, 0: none */
	__u64	comm_id;		/* NCCL commId, 0 in STATE/STOP */
	__s32	rank;			/* -1 in STATE/STOP */
	__u32	ntype;			/* RDT_NP_* bit of the event */
};

/* schema/gen.py: end */

/* schema/gen.py: struct rdt_ev_np_comm */
struct rdt_ev_np_comm {			/* COMM_INIT, COMM_FINI */
	struct rdt_hdr hdr;
	struct rdt_np_ids ids;
	char	name[RDT_NAME_LEN];	/* commName, "" if none */
	__s32	nnodes;
	__s32	nranks;
	__u32	abi;			/* ncclProfiler_vN NCCL called */
	__u32	pad;
};

/* schema/gen.py: end */

/* schema/gen.py: struct rdt_ev_np_group */
struct rdt_ev_np_group {		/* GROUP, GROUP_API */
	struct rdt_hdr hdr;
	struct rdt_np_ids ids;
	__u32	graph_captured;
	__s32	depth;			/* GroupApi groupDepth */
};

/* schema/gen.py: end */

/* schema/gen.py: struct rdt_ev_np_api */
struct rdt_ev_np_api {			/* COLL_API, P2P_API */
	struct rdt_hdr hdr;
	struct rdt_np_ids ids;
	__u64	count;
	__u64	stream;			/* cudaStream_t value */
	char	func[RDT_NP_STR];
	char	datatype[RDT_NP_STR];
	__s32	root;			/* -1 for P2P_API */
	__u32	graph_captured;
};

/* schema/gen.py: end */

/* schema/gen.py: struct rdt_ev_np_kernel_launch */
struct rdt_ev_np_kernel_launch {
	struct rdt_hdr hdr;
	struct rdt_np_ids ids;
	__u64	stream;
};

/* schema/gen.py: end */

/* schema/gen.py: struct rdt_ev_np_coll */
struct rdt_ev_np_coll {
	struct rdt_hdr hdr;
	struct rdt_np_ids ids;
	__u64	seq;			/* seqNumber */
	__u64	count;
	__u64	send_buff;
	__u64	recv_buff;
	__u64	parent_group;		/* id of its Group event */
	char	func[RDT_NP_STR];
	char	datatype[RDT_NP_STR];
	char	algo[RDT_NP_STR];
	char	proto[8];
	__s32	root;
	__u8	nchannels;
	__u8	nwarps;
	__u16	pad;
};

/* schema/gen.py: end */

/* schema/gen.py: struct rdt_ev_np_p2p */
struct rdt_ev_np_p2p {
	struct rdt_hdr hdr;
	struct rdt_np_ids ids;
	__u64	count;
	__u64	buff;
	__u64	parent_group;
	char	func[RDT_NP_STR];
	char	datatype[RDT_NP_STR];
	__s32	peer;
	__u8	nchannels;
	__u8	pad[3];
};

/* schema/gen.py: end */

/* schema/gen.py: struct rdt_ev_np_proxy_op */
struct rdt_ev_np_proxy_op {
	struct rdt_hdr hdr;
	struct rdt_np_ids ids;
	__u32	op_pid;			/* process that posted it (PXN) */
	__u32	channel;
	__s32	peer;
	__s32	nsteps;
	__s32	chunk_size;
	__s32	is_send;
};

/* schema/gen.py: end */

/* schema/gen.py: struct rdt_ev_np_proxy_step */
struct rdt_ev_np_proxy_step {
	struct rdt_hdr hdr;
	struct rdt_np_ids ids;
	__s32	step;
	__u32	pad;
};

/* schema/gen.py: end */

/* schema/gen.py: struct rdt_ev_np_proxy_ctrl */
struct rdt_ev_np_proxy_ctrl {
	struct rdt_hdr hdr;
	struct rdt_np_ids ids;
};

/* schema/gen.py: end */

/* schema/gen.py: struct rdt_ev_np_kernel_ch */
struct rdt_ev_np_kernel_ch {
	struct rdt_hdr hdr;
	struct rdt_np_ids ids;
	__u64	gpu_start;		/* GPU globaltimer, ns of the GPU */
	__u32	channel;
	__u32	pad;
};

/* schema/gen.py: end */

/* schema/gen.py: struct rdt_ev_np_net_ib */
struct rdt_ev_np_net_ib {		/* post; its STOP is the completion */
	struct rdt_hdr hdr;
	struct rdt_np_ids ids;
	__u64	wr_id;
	__u64	length;
	__s32	device;			/* NCCL's IB device index */
	__u32	qpn;
	__s32	opcode;			/* enum ibv_wr_opcode */
	__u32	ib_type;		/* 1: QP event */
};

/* schema/gen.py: end */

/* schema/gen.py: struct rdt_ev_np_net_sock */
struct rdt_ev_np_net_sock {
	struct rdt_hdr hdr;
	struct rdt_np_ids ids;
	__u64	length;
	__s32	fd;
	__s32	op;
};

/* schema/gen.py: end */

/* schema/gen.py: struct rdt_ev_np_net */
struct rdt_ev_np_net {
	struct rdt_hdr hdr;
	struct rdt_np_ids ids;
	__s64	plugin_id;		/* netPlugin.id: type << 16 | version */
};

/* schema/gen.py: end */

/* schema/gen.py: struct rdt_ev_np_state */
struct rdt_ev_np_state {
	struct rdt_hdr hdr;
	struct rdt_np_ids ids;
	__u64	arg;			/* transSize, appendedProxyOps, pTimer */
	__u32	state;			/* NCCL's ncclProfilerEventState_v5 */
	__s32	steps;			/* 1.7: v1..v3 ProxyOp's, else 0 */
};

/* schema/gen.py: end */

/* schema/gen.py: struct rdt_ev_np_stop */
struct rdt_ev_np_stop {
	struct rdt_hdr hdr;
	struct rdt_np_ids ids;
};

/* schema/gen.py: end */

enum rdt_np_skip_why {
	RDT_NP_SKIP_TYPE	= 1,	/* a type the plugin does not know */
	RDT_NP_SKIP_CTX		= 2,	/* context not one init returned */
	RDT_NP_SKIP_NULL	= 3,	/* NULL descriptor or handle slot */
	RDT_NP_SKIP_NET		= 4,	/* net plugin data unreadable */
};

/* schema/gen.py: struct rdt_ev_np_skip */
struct rdt_ev_np_skip {			/* ids.ntype: the descriptor's type */
	struct rdt_hdr hdr;
	struct rdt_np_ids ids;
	__u64	raw_type;
	__u32	why;			/* enum rdt_np_skip_why */
	__u32	pad;
};

/* schema/gen.py: end */

/*
 * The Coll fields of NCCL's profiler v1 (NCCL 2.23) and v2 (2.24, 2.25)
 * that v5 has no place for, written right after the Coll's record, with
 * its ids.  has: the RDT_NP_OLD_* fields the version gave (v1: all, v2:
 * traffic_bytes; v3 has none of them: no record).
 */
#define RDT_NP_OLD_OP		0x1u
#define RDT_NP_OLD_TRAFFIC	0x2u
#define RDT_NP_OLD_COLLNET	0x4u
#define RDT_NP_OLD_NVLS		0x8u

/* schema/gen.py: struct rdt_ev_np_coll_old */
struct rdt_ev_np_coll_old {
	struct rdt_hdr hdr;
	struct rdt_np_ids ids;		/* its Coll's */
	char	op[RDT_NP_STR];		/* ncclRedOp_t as nccl.h names it */
	__u64	traffic_bytes;		/* trafficBytes */
	__u8	is_collnet;
	__u8	is_nvls;
	__u8	has;			/* RDT_NP_OLD_* */
	__u8	pad[5];
};

/* schema/gen.py: end */

/* ---- trace files --------------------------------------------------------- */

/*
 * A trace file is one struct rdt_file_hdr, then hdr_size - sizeof() bytes of
 * "KEY=VALUE\n" text (NCCL_* settings: "NCCL_X=V" of the tracing tool's
 * environment, "pid<PID>.NCCL_X=V" of a traced process; other free-form
 * facts), NUL-padded to 8 bytes, then records back to back.
 */
#define RDT_FILE_MAGIC		"RDMATRC\0"

struct rdt_file_hdr {
	char	magic[8];		/* RDT_FILE_MAGIC */
	__u16	abi_major;
	__u16	abi_minor;
	__u32	hdr_size;		/* bytes to the first record */
	__s64	realtime_offset_ns;	/* CLOCK_REALTIME - CLOCK_MONOTONIC */
	__u32	ncpus;
	__u32	flags;			/* none defined yet: written as 0 */
	char	host[64];
	char	kernel[64];		/* uname -r */
	char	module_version[32];	/* rdmatrace.ko version, "" if none */
	char	boot_id[40];		/* /proc/sys/kernel/random/boot_id */
	__u8	reserved[48];
};

/*
 * Layouts that schema/records.py describes and no region above holds (a
 * new one goes to its section: a region of its own there).
 */
/* schema/gen.py: other layouts */
/*
 * the module's relay stream only: the relay source applies it, passes none on
 */
struct rdt_ev_clock {
	struct rdt_hdr hdr;
	__u64	tsc;			/* the TSC, read just before mono_ns */
	__u64	mono_ns;		/* ktime_get_ns() */
	__u32	tsc_khz;		/* the kernel's calibration: the rate outside the pairs */
	__u32	pad;
};

/* schema/gen.py: end */

#endif /* _UAPI_RDMATRACE_H */
