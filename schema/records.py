# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""
Every record type of rdmatrace's wire format, described once.

schema/gen.py makes from this file, and only from it:
  include/rdmatrace/wire.h  enum rdt_type, and the struct of each layout
                            described below (in its "schema:" region)
  lib/include/rdmatrace/rdmatrace.h  union rdt_record
  lib/types.inc           the decode table: name, size, older size
  lib/fields_schema.inc   the fields text, JSON and Perfetto's args show
                          for the described layouts
  lib/schema_fields.inc   the same fields as data: the SQLite sink's view
                          of a type no table of its own holds
  kmod/rdmatrace_trace_fields.h  the fields of the module's tracepoints
                          (TRACEPOINTS, at the end): entry, assign, printk
Run `make schema` after an edit and commit what it wrote: the test
lib/schema fails while the tree differs from what gen.py makes (and shows
a throwaway type added here alone reaching text, JSON, SQLite and
Perfetto).

TYPES: the types in number order.  A string is a heading (a comment over
the entries that follow); "" a blank line.  An entry is
  (number, ENUM, name, layout, older, note)
number and ENUM (RDT_EV_<ENUM>) are the stable ABI; name is what every
output calls it; layout the struct rdt_ev_<layout> that carries it; older
None, or the member at which a record of an older minor ABI ended (a
shorter record is taken, the members from it on read 0); note optional.

LAYOUTS: every struct rdt_ev_<layout>, in the order of union rdt_record.
A layout is (note, fields[, order]): order, the keys in the order the outputs
show them where that is not wire order; each field (ctype, member, show,
key, note), in wire order after the header, where
  ctype  __u8 .. __u64, __s8 .. __s64, or "char[N]" (N a number or an
         RDT_*_LEN of rdmatrace.h)
  show   U unsigned, I signed, X hex, S a NUL-padded name, H not shown
         (padding, or what a reader shows by other means: dur_ns), C shown
         by lib/fields.inc's code (a layout's fields all C or none: its
         case there is code, as what it shows depends on the values), F a
         struct of STRUCTS (its fields in its place),
         "E:rdt_<what>_name" a number shown as the name that function of
         librdmatrace gives it
  key    its name in text, JSON, SQLite and Perfetto (None with H)
  when   optional: shown only when this C expression holds, "$." naming
         the record's members ("$.srq", "$.lost_cpu != UINT32_MAX")
gen.py refuses implicit padding, a size that is not a multiple of 8, and
a number, ENUM or name used twice.

MEMBERS: union rdt_record's member of a layout whose member name differs.
UNION_SIZE: the union's size, fixed (the library's ABI).
TRACEPOINTS: each kernel tracepoint's layout and fields (described there).
"""

TYPES = [
    '1..63: stream bookkeeping, any source',
    (1, 'SUBBUF', 'subbuf', 'subbuf', None, 'starts every relay sub-buffer'),
    (2, 'COMM', 'comm', 'comm', None, "pid/tid -> comm, before a task's events"),
    (3, 'LOST', 'lost', 'lost', None, 'events lost by a source (in-stream)'),
    (4, 'CLOCK', 'clock', 'clock', None, '1.16: a TSC, CLOCK_MONOTONIC pair (relay form)'),
    "16..63: librdmatrace's own records (source RDT_SRC_USER)",
    (16, 'PORT_COUNTER', 'port_counter', 'port_counter', None, '1.5: a port counter that moved'),
    (17, 'STUCK', 'stuck', 'stuck', None, "1.11: --stuck: a report's line"),
    (18, 'UNSTUCK', 'unstuck', 'stuck', None, '1.11: --stuck: moving again'),
    "",
    '64..127: rdmatrace.ko, device->ops wrappers',
    (64, 'DEVICE_ADD', 'device_add', 'device', None),
    (65, 'DEVICE_REMOVE', 'device_remove', 'device', None),
    (66, 'DEVICE_RENAME', 'device_rename', 'device', None),
    (67, 'PD_ALLOC', 'pd_alloc', 'pd', 'dur_ns'),
    (68, 'PD_DEALLOC', 'pd_dealloc', 'pd', 'dur_ns'),
    (69, 'CQ_CREATE', 'cq_create', 'cq', 'dur_ns'),
    (70, 'CQ_DESTROY', 'cq_destroy', 'cq', 'dur_ns'),
    (71, 'QP_CREATE', 'qp_create', 'qp_create', 'dur_ns'),
    (72, 'QP_MODIFY', 'qp_modify', 'qp_modify', 'dur_ns'),
    (73, 'QP_DESTROY', 'qp_destroy', 'qp_destroy', 'dur_ns'),
    (74, 'MR_REG', 'mr_reg', 'mr', 'dur_ns'),
    (75, 'MR_DEREG', 'mr_dereg', 'mr', 'dur_ns'),
    (76, 'POST_SEND', 'post_send', 'post_send', None, 'one per WR'),
    (77, 'POST_SEND_DB', 'post_send_db', 'post_send_db', 'dur_ns', 'empty WR list: uverbs doorbell'),
    (78, 'POST_RECV', 'post_recv', 'post_recv', None, 'one per WR, QP or SRQ'),
    (79, 'POLL_CQ_WC', 'poll_cq_wc', 'poll_cq_wc', None, 'one per returned completion'),
    (80, 'POLL_CQ', 'poll_cq', 'poll_cq', None, 'summary of one poll_cq call'),
    (81, 'REQ_NOTIFY_CQ', 'req_notify_cq', 'req_notify_cq', 'dur_ns'),
    (82, 'DEVICE_STATE', 'device_state', 'device', None, '1.1: present when tracing went on'),
    (83, 'POST_FAIL', 'post_fail', 'post_fail', None, '1.4: a post_send/recv that failed'),
    "",
    '128..191: producers/bpf/',
    (128, 'NCCL_CALL', 'nccl_call', 'nccl_call', None, 'one NCCL API call, at its return'),
    (129, 'NCCL_COMM', 'nccl_comm', 'nccl_comm', None, 'communicator initialised'),
    (130, 'RXE_CQE', 'rxe_cqe', 'rxe_cqe', 'tx_bytes', 'rxe_cq_post: every rxe completion'),
    (131, 'RXE_RCV', 'rxe_rcv', 'rxe_rcv', None, 'rxe_rcv: every received packet'),
    (132, 'RXE_RETRY', 'rxe_retry', 'rxe_retry', None, 'requester retransmit / RNR retry'),
    (133, 'TCP_RETRANSMIT', 'tcp_retransmit', 'tcp_retransmit', None, 'tcp:tcp_retransmit_skb'),
    (134, 'COLL_MARK', 'coll_mark', 'coll_mark', None, 'USDT collective begin/end marker'),
    (135, 'RXE_XMIT', 'rxe_xmit', 'rxe_xmit', None, '1.6: rxe_xmit_packet: every sent packet'),
    "1.10, source RDT_SRC_VERBS: a userspace provider's data path (its ibv_context ops), bodies as the module's records of the same verb. The WRs of a post are stamped at its entry, completions at poll's return; qpn is ibv_qp.qp_num, cq_id and srq_id the uverbs handle (not restrack's id), hdr.dev the kernel's device index.",
    (136, 'VERBS_POST_SEND', 'verbs_post_send', 'post_send', None, 'struct rdt_ev_post_send, one per WR'),
    (137, 'VERBS_POST_RECV', 'verbs_post_recv', 'post_recv', None, 'struct rdt_ev_post_recv, one per WR'),
    (138, 'VERBS_WC', 'verbs_wc', 'poll_cq_wc', None, 'struct rdt_ev_poll_cq_wc, one per WC'),
    (139, 'VERBS_POST_FAIL', 'verbs_post_fail', 'post_fail', None, 'struct rdt_ev_post_fail: ret -errno'),
    "1.13: struct rdt_ev_req_notify_cq, at the call's return",
    (140, 'VERBS_REQ_NOTIFY', 'verbs_req_notify', 'req_notify_cq', None),
    (141, 'COLL_STEP', 'coll_step', 'coll_step', None, '1.14: USDT: a rank began a step'),
    "",
    '192..254: NCCL profiler plugin (1.3); struct rdt_np_ids first',
    (192, 'NP_COMM_INIT', 'np_comm_init', 'np_comm', None, 'profiler init of a communicator'),
    (193, 'NP_COMM_FINI', 'np_comm_fini', 'np_comm', None, 'profiler finalize'),
    (194, 'NP_GROUP', 'np_group', 'np_group', None),
    (195, 'NP_GROUP_API', 'np_group_api', 'np_group', None),
    (196, 'NP_COLL_API', 'np_coll_api', 'np_api', None),
    (197, 'NP_P2P_API', 'np_p2p_api', 'np_api', None),
    (198, 'NP_KERNEL_LAUNCH', 'np_kernel_launch', 'np_kernel_launch', None),
    (199, 'NP_COLL', 'np_coll', 'np_coll', None),
    (200, 'NP_P2P', 'np_p2p', 'np_p2p', None),
    (201, 'NP_PROXY_OP', 'np_proxy_op', 'np_proxy_op', None),
    (202, 'NP_PROXY_STEP', 'np_proxy_step', 'np_proxy_step', None),
    (203, 'NP_PROXY_CTRL', 'np_proxy_ctrl', 'np_proxy_ctrl', None),
    (204, 'NP_KERNEL_CH', 'np_kernel_ch', 'np_kernel_ch', None, 'GPU globaltimer at channel start'),
    (205, 'NP_NET_IB', 'np_net_ib', 'np_net_ib', None, 'one IB work request, at its post'),
    (206, 'NP_NET_SOCK', 'np_net_sock', 'np_net_sock', None),
    (207, 'NP_NET', 'np_net', 'np_net', None, 'a net plugin event of another kind'),
    (208, 'NP_STATE', 'np_state', 'np_state', None, 'recordEventState of an event'),
    (209, 'NP_STOP', 'np_stop', 'np_stop', None, "stopEvent: the event's end"),
    (210, 'NP_SKIP', 'np_skip', 'np_skip', None, 'a descriptor the plugin skipped'),
    (211, 'NP_COLL_OLD', 'np_coll_old', 'np_coll_old', None, '1.7: v1, v2 Coll fields v5 lacks'),
]

# sizeof(union rdt_record), which struct rdt_event embeds: librdmatrace0's
# ABI.  The union holds raw[UNION_SIZE] so that a new type leaves it as
# it is; gen.py refuses a layout larger (that is a new SONAME).
UNION_SIZE = 184

MEMBERS = {
    "poll_cq_wc": "wc",
    "req_notify_cq": "req_notify",
    "tcp_retransmit": "tcp",
}

DUR = ("__u64", "dur_ns", "H", None, "in the driver (1.9): see RDT_ABI_MINOR")

# Structs a layout holds (a field "struct rdt_<name>", shown F: its fields
# in its place), described as layouts are, with no header.
STRUCTS = {
    "rdt_np_ids": (None, [
        ("__u64", "id", "X", "id", "this event, unique in hdr.pid"),
        ("__u64", "parent", "X", "parent", "its parent's id, 0: none"),
        ("__u64", "comm_id", "X", "comm_id", "NCCL commId, 0 in STATE/STOP"),
        ("__s32", "rank", "I", "rank", "-1 in STATE/STOP"),
        ("__u32", "ntype", "E:rdt_np_type_name", "event", "RDT_NP_* bit of the event"),
    ]),
}
# The NCCL plugin's records: the ids first.
IDS = ("struct rdt_np_ids", "ids", "F", None, None)

LAYOUTS = {
    "subbuf": (None, [
        ("__u64", "seq", "U", "seq", "sub-buffer sequence number on this CPU"),
        ("__u64", "lost_total", "U", "lost_total", "events dropped on this CPU so far"),
    ]),
    "comm": (None, [
        ("char[RDT_COMM_LEN]", "comm", "S", "name", None),
    ]),
    "clock": ("the module's relay stream only: the relay source applies it, passes none on", [
        ("__u64", "tsc", "U", "tsc", "the TSC, read just before mono_ns"),
        ("__u64", "mono_ns", "U", "mono_ns", "ktime_get_ns()"),
        ("__u32", "tsc_khz", "U", "tsc_khz", "the kernel's calibration: the rate outside the pairs"),
        ("__u32", "pad", "H", None, None),
    ]),
    "lost": (None, [
        ("__u64", "count", "U", "count", "events lost since the previous LOST"),
        ("__u32", "lost_source", "E:rdt_source_name", "producer", "enum rdt_source that lost them"),
        ("__u32", "lost_cpu", "U", "lost_cpu", None, "$.lost_cpu != UINT32_MAX"),
    ]),
    "port_counter": ("ts_ns: the sample's time", [
        ("char[RDT_NAME_LEN]", "devname", "H", None, "shown as the sinks' device"),
        ("char[RDT_CTR_NAME_LEN]", "name", "S", "name", None),
        ("__u64", "value", "U", "value", "at this sample"),
        ("__s64", "delta", "I", "delta", "since the previous sample"),
        ("__u32", "port", "U", "port", None),
        ("__u32", "kind", "E:rdt_ctr_kind_name", "dir", "enum rdt_ctr_kind"),
    ], ["port", "name", "delta", "value", "dir"]),
    "stuck": (None, [
        ("__u64", "since_ns", "C", "since_ns", "the episode: stuck since"),
        ("__u64", "waits_ns", "C", "waits_ns", "QP, collective: waiting this long; UNSTUCK: the episode's length"),
        ("__u64", "wr_id", "C", "wr_id", "QP: its oldest send outstanding"),
        ("__u64", "seq", "C", "seq", "collective: its seq"),
        ("__u32", "episode", "C", "episode", "1, 2, ... in this run"),
        ("__u32", "kind", "C", "kind", "enum rdt_stuck_kind"),
        ("__u32", "qpn", "C", "qpn", None),
        ("__u32", "dest_qpn", "C", "dest_qpn", None),
        ("__u32", "outstanding", "C", "outstanding", "QP: send WRs outstanding"),
        ("__u32", "retries", "C", "retries", "QP: rxe retries since its last send completion (RNR included)"),
        ("__s32", "rank", "C", "rank", "collective"),
        ("__s32", "nranks", "C", "nranks", None),
        ("char[88]", "text", "C", "text", None),
    ]),
    "device": ("ADD, REMOVE, RENAME, STATE", [
        ("char[RDT_NAME_LEN]", "name", "C", "name", None),
        ("char[RDT_NAME_LEN]", "old_name", "C", "old_name", "RENAME only"),
        ("__u64", "node_guid", "C", "node_guid", "big endian as in ib_device"),
        ("__u32", "node_type", "C", "node_type", "enum rdma_node_type"),
        ("__u32", "phys_port_cnt", "C", "ports", None),
        ("__u32", "driver_id", "C", "driver_id", "enum rdma_driver_id"),
        ("__u32", "nr_wrapped", "C", "wrapped", "ops wrapped (ADD, STATE) / unwrapped (REMOVE)"),
    ]),
    "pd": ("PD_ALLOC, PD_DEALLOC", [
        ("__u32", "pd_id", "U", "pd", "ib_pd->res.id"),
        ("__s32", "ret", "I", "ret", None),
        ("__u32", "user", "U", "user", "1: created through uverbs"),
        ("__u32", "local_dma_lkey", "H", None, None),
        DUR,
    ]),
    "cq": ("CQ_CREATE, CQ_DESTROY", [
        ("__u32", "cq_id", "U", "cq", "ib_cq->res.id"),
        ("__s32", "ret", "I", "ret", None),
        ("__u32", "cqe", "U", "cqe", "requested (CREATE) / actual depth"),
        ("__s32", "comp_vector", "I", "comp_vector", None),
        ("__u32", "user", "U", "user", None),
        ("__u32", "pad", "H", None, None),
        DUR,
    ]),
    "qp_create": (None, [
        ("__u32", "qpn", "U", "qpn", None),
        ("__s32", "ret", "I", "ret", None),
        ("__u32", "qp_type", "U", "qp_type", "enum ib_qp_type"),
        ("__u32", "send_cq_id", "U", "send_cq", None),
        ("__u32", "recv_cq_id", "U", "recv_cq", None),
        ("__u32", "srq", "U", "srq", "1 if attached to an SRQ"),
        ("__u32", "max_send_wr", "U", "max_send_wr", None),
        ("__u32", "max_recv_wr", "U", "max_recv_wr", None),
        ("__u32", "max_send_sge", "U", "max_send_sge", None),
        ("__u32", "max_recv_sge", "U", "max_recv_sge", None),
        ("__u32", "max_inline_data", "U", "max_inline", None),
        ("__u32", "sq_sig_type", "H", None, None),
        ("__u32", "pd_id", "U", "pd", None),
        ("__u32", "user", "U", "user", None),
        ("__u32", "port", "U", "port", None),
        ("__u32", "pad", "H", None, None),
        DUR,
    ]),
    "qp_modify": (None, [
        ("__u32", "qpn", "C", "qpn", None),
        ("__s32", "ret", "C", "ret", None),
        ("__u32", "attr_mask", "C", "attr_mask", "enum ib_qp_attr_mask"),
        ("__u8", "old_state", "C", "old_state", "enum ib_qp_state before the call"),
        ("__u8", "new_state", "C", "new_state", "attr->qp_state if IB_QP_STATE set"),
        ("__u8", "cur_state", "C", "cur_state", "state after the call"),
        ("__u8", "path_mtu", "C", "path_mtu", "enum ib_mtu"),
        ("__u32", "dest_qpn", "C", "dest_qpn", None),
        ("__u32", "sq_psn", "C", "sq_psn", None),
        ("__u32", "rq_psn", "C", "rq_psn", None),
        ("__u8", "timeout", "C", "timeout", None),
        ("__u8", "retry_cnt", "C", "retry_cnt", None),
        ("__u8", "rnr_retry", "C", "rnr_retry", None),
        ("__u8", "min_rnr_timer", "H", None, None),
        ("__u32", "port", "C", "port", None),
        ("__u32", "qkey", "H", None, None),
        ("__u32", "max_rd_atomic", "H", None, None),
        ("__u32", "max_dest_rd_atomic", "H", None, None),
        DUR,
        ("__u8[16]", "dgid", "C", "dgid",
         "1.12: with IB_QP_AV when the path has a GRH (RoCE always): the peer's GID, and this "
         "QP's own (the source GID the core resolved).  gids says which are set (enum "
         "rdt_qp_gids)."),
        ("__u8[16]", "sgid", "C", "sgid", None),
        ("__u32", "gids", "H", None, None),
        ("__u32", "pad", "H", None, None),
    ]),
    "qp_destroy": (None, [
        ("__u32", "qpn", "U", "qpn", None),
        ("__s32", "ret", "I", "ret", None),
        ("__u32", "qp_type", "U", "qp_type", None),
        ("__u32", "pad", "H", None, None),
        DUR,
    ]),
    "mr": ("MR_REG, MR_DEREG", [
        ("__u32", "lkey", "X", "lkey", None),
        ("__u32", "rkey", "X", "rkey", None),
        ("__u64", "iova", "X", "iova", "user virtual address (user MRs)"),
        ("__u64", "length", "U", "length", None),
        ("__s32", "ret", "I", "ret", None),
        ("__u32", "access", "X", "access", "enum ib_access_flags"),
        ("__u32", "kind", "U", "kind", "enum rdt_mr_kind"),
        ("__u32", "pd_id", "U", "pd", None),
        DUR,
    ]),
    "post_send": (None, [
        ("__u64", "wr_id", "X", "wr_id", None),
        ("__u64", "remote_addr", "X", "raddr", "RDMA / atomic only", "$.rkey || $.remote_addr"),
        ("__u64", "total_len", "U", "len", "sum of the SGEs' lengths"),
        ("__u32", "qpn", "U", "qpn", None),
        ("__s32", "ret", "I", "ret", "0 since 1.4: see POST_FAIL"),
        ("__u32", "rkey", "X", "rkey", "RDMA / atomic only", "$.rkey || $.remote_addr"),
        ("__u32", "imm", "X", "imm", "imm_data (big endian) or invalidate", "$.imm"),
        ("__u8", "opcode", "E:rdt_wr_opcode_name", "opcode", "enum ib_wr_opcode"),
        ("__u8", "bad", "U", "bad", "0 since 1.4: see POST_FAIL"),
        ("__u16", "send_flags", "X", "flags", "enum ib_send_flags"),
        ("__u16", "num_sge", "U", "num_sge", None),
        ("__u16", "index", "U", "index", "position in the posted list"),
    ], ["qpn", "wr_id", "opcode", "len", "num_sge", "flags", "raddr", "rkey", "imm", "index",
        "ret", "bad"]),
    "post_send_db": ("empty WR list (doorbell)", [
        ("__u32", "qpn", "U", "qpn", None),
        ("__s32", "ret", "I", "ret", None),
        DUR,
    ]),
    "post_recv": (None, [
        ("__u64", "wr_id", "X", "wr_id", None),
        ("__u64", "total_len", "U", "len", None),
        ("__u32", "qpn", "U", "qpn", "0 for an SRQ post"),
        ("__u32", "srq_id", "U", "srq", "post_srq_recv only", "$.srq"),
        ("__s32", "ret", "I", "ret", None),
        ("__u16", "num_sge", "U", "num_sge", None),
        ("__u8", "srq", "H", None, "1: post_srq_recv"),
        ("__u8", "bad", "U", "bad", None),
        ("__u16", "index", "U", "index", None),
        ("__u16", "pad0", "H", None, None),
        ("__u32", "pad1", "H", None, None),
    ], ["qpn", "srq", "wr_id", "len", "num_sge", "index", "ret", "bad"]),
    "post_fail": (None, [
        ("__u32", "qpn", "U", "qpn", "0 for an SRQ post"),
        ("__u32", "srq_id", "U", "srq", "post_srq_recv only", "$.srq"),
        ("__s32", "ret", "I", "ret", "-errno"),
        ("__u16", "post_type", "E:rdt_post_type_name", "post", "RDT_EV_POST_SEND or RDT_EV_POST_RECV"),
        ("__u16", "nr_wr", "U", "nr_wr", "WRs in the list"),
        ("__u16", "bad_index", "U", "bad_index", "*bad_wr's index, or _UNKNOWN",
         "$.bad_index != RDT_BAD_INDEX_UNKNOWN"),
        ("__u8", "srq", "H", None, "1: post_srq_recv"),
        ("__u8", "pad0", "H", None, None),
        ("__u32", "pad1", "H", None, None),
    ], ["qpn", "srq", "post", "ret", "nr_wr", "bad_index"]),
    "poll_cq_wc": (None, [
        ("__u64", "wr_id", "X", "wr_id", None),
        ("__u32", "cq_id", "U", "cq", None),
        ("__u32", "status", "E:rdt_wc_status_name", "status", "enum ib_wc_status"),
        ("__u32", "opcode", "E:rdt_wc_opcode_name", "opcode", "enum ib_wc_opcode"),
        ("__u32", "byte_len", "U", "byte_len", None),
        ("__u32", "qpn", "U", "qpn", None),
        ("__u32", "src_qp", "U", "src_qp", None),
        ("__u32", "wc_flags", "X", "wc_flags", None),
        ("__u32", "imm", "H", None, None),
        ("__u32", "vendor_err", "X", "vendor_err", None, "$.status"),
        ("__u16", "index", "H", None, "position in the returned array"),
        ("__u16", "poll_requested", "H", None,
         "1.8: non-zero only on the last completion of a poll whose summary was asked for "
         "(POLL_CQ in the event mask): the poll's num_entries, 65535 if more.  That poll's "
         "POLL_CQ record is not written: cq_id, requested and ret (index + 1) are all here."),
    ], ["cq", "qpn", "wr_id", "status", "opcode", "byte_len", "src_qp", "wc_flags", "vendor_err"]),
    "poll_cq": (None, [
        ("__u32", "cq_id", "U", "cq", None),
        ("__s32", "requested", "I", "requested", "num_entries"),
        ("__s32", "ret", "I", "ret", "returned count or -errno"),
        ("__u32", "pad", "H", None, None),
    ]),
    "req_notify_cq": (None, [
        ("__u32", "cq_id", "U", "cq", None),
        ("__u32", "flags", "X", "flags", "enum ib_cq_notify_flags"),
        ("__s32", "ret", "I", "ret", None),
        ("__u32", "pad", "H", None, None),
        DUR,
    ]),
    "nccl_call": ("ts_ns = entry time", [
        ("__u64", "duration_ns", "U", "enqueue_ns", "entry -> return: enqueue time only"),
        ("__u64", "count", "U", "count", None),
        ("__u64", "comm", "X", "comm_ptr", "user-space ncclComm_t value"),
        ("__u64", "stream", "X", "stream", "user-space cudaStream_t value"),
        ("__u64", "comm_hash", "X", "comm_hash", "splitmix64 over the ncclUniqueId"),
        ("__u64", "seq", "U", "seq", "per-communicator call number"),
        ("__u32", "fn", "E:rdt_nccl_fn_name", "fn", "enum rdt_nccl_fn"),
        ("__s32", "ret", "I", "ret", "ncclResult_t"),
        ("__s32", "datatype", "I", "datatype", "ncclDataType_t, -1 if n/a"),
        ("__s32", "op", "I", "op", "ncclRedOp_t, -1 if n/a"),
        ("__s32", "root", "I", "root", "root or peer, -1 if n/a"),
        ("__s32", "rank", "I", "rank", "-1 if the comm is unknown"),
        ("__s32", "nranks", "I", "nranks", None),
        ("__u32", "pad", "H", None, None),
    ], ["fn", "count", "datatype", "op", "root", "comm_ptr", "comm_hash", "rank", "nranks",
        "seq", "stream", "enqueue_ns", "ret"]),
    "nccl_comm": (None, [
        ("__u64", "comm", "X", "comm_ptr", "user-space ncclComm_t value"),
        ("__u64", "comm_hash", "X", "comm_hash", None),
        ("__s32", "rank", "I", "rank", None),
        ("__s32", "nranks", "I", "nranks", None),
        ("__u32", "fn", "E:rdt_nccl_fn_name", "fn", "the init function that made it"),
        ("__s32", "ret", "I", "ret", None),
    ], ["fn", "comm_ptr", "comm_hash", "rank", "nranks", "ret"]),
    "rxe_cqe": (None, [
        ("__u64", "wr_id", "X", "wr_id", None),
        ("__u32", "qpn", "U", "qpn", None),
        ("__u32", "cq_id", "U", "cq", "rxe pool index of the CQ"),
        ("__u32", "status", "E:rdt_wc_status_name", "status", "enum ib_wc_status"),
        ("__u32", "opcode", "E:rdt_wc_opcode_name", "opcode", "enum ib_wc_opcode"),
        ("__u32", "byte_len", "U", "byte_len", None),
        ("__u32", "user", "U", "user", "1: CQ is mapped to userspace"),
        # 1.15: the QP's packets since its last RXE_CQE record, counted by
        # the xmit/rcv hooks in a map instead of a record each (--rxe;
        # --rxe=packets records them too).  Sums over a QP's records are
        # exact; a packet that races a completion counts in the next one.
        ("__u64", "tx_bytes", "U", "tx_bytes", "1.15: sent since its last CQE (BTH to ICRC)", "$.counted"),
        ("__u64", "rx_bytes", "U", "rx_bytes", "1.15: received since its last CQE", "$.counted"),
        ("__u32", "tx_pkts", "U", "tx_pkts", "1.15: packets sent since its last CQE", "$.counted"),
        ("__u32", "rx_pkts", "U", "rx_pkts", "1.15: packets received since its last CQE", "$.counted"),
        ("__u32", "tx_psn_first", "U", "tx_psn_first", "1.15: of those sent (best effort)", "$.tx_pkts"),
        ("__u32", "tx_psn_last", "U", "tx_psn_last", None, "$.tx_pkts"),
        ("__u32", "rx_psn_first", "U", "rx_psn_first", "1.15: of those received (best effort)", "$.rx_pkts"),
        ("__u32", "rx_psn_last", "U", "rx_psn_last", None, "$.rx_pkts"),
        ("__u32", "counted", "H", None, "1.15: 1: the packet fields above hold counts"),
        ("__u32", "pad", "H", None, None),
    ], ["cq", "qpn", "wr_id", "status", "opcode", "byte_len", "user",
        "tx_pkts", "tx_bytes", "tx_psn_first", "tx_psn_last",
        "rx_pkts", "rx_bytes", "rx_psn_first", "rx_psn_last"]),
    "rxe_rcv": (None, [
        ("__u32", "qpn", "U", "qpn", "destination QPN of the packet"),
        ("__u32", "psn", "U", "psn", None),
        ("__u32", "opcode", "U", "bth_opcode", "IB BTH opcode"),
        ("__u32", "length", "U", "length", "packet payload length"),
    ]),
    "rxe_xmit": (None, [
        ("__u8[16]", "saddr", "C", "saddr", "IPv4 in the first 4 bytes"),
        ("__u8[16]", "daddr", "C", "daddr", None),
        ("__u32", "qpn", "C", "qpn", "destination QPN (the BTH's)"),
        ("__u32", "psn", "C", "psn", None),
        ("__u32", "opcode", "C", "bth_opcode", "IB BTH opcode"),
        ("__u32", "length", "C", "length", "packet payload length"),
        ("__u32", "src_qpn", "C", "src_qpn", "the sending QP"),
        ("__u32", "family", "H", None, "AF_INET or AF_INET6"),
    ]),
    "rxe_retry": (None, [
        ("__u32", "qpn", "U", "qpn", None),
        ("__u32", "psn", "U", "psn", None),
        ("__u32", "kind", "E:rdt_rxe_retry_kind_name", "kind", "enum rdt_rxe_retry_kind"),
        ("__u32", "pad", "H", None, None),
    ]),
    "tcp_retransmit": (None, [
        ("__u8[16]", "saddr", "C", "saddr", "IPv4 in the first 4 bytes"),
        ("__u8[16]", "daddr", "C", "daddr", None),
        ("__u16", "sport", "C", "sport", "host order"),
        ("__u16", "dport", "C", "dport", None),
        ("__u16", "family", "H", None, "AF_INET / AF_INET6"),
        ("__u8", "state", "C", "state", "TCP state"),
        ("__u8", "pad", "H", None, None),
    ]),
    "coll_mark": (None, [
        ("__u64", "bytes", "U", "bytes", None),
        ("__u64", "seq", "U", "seq", None),
        ("__u32", "op", "U", "op", "1: allreduce"),
        ("__s32", "rank", "I", "rank", None),
        ("__s32", "nranks", "I", "nranks", None),
        ("__u32", "phase", "E:rdt_coll_phase_name", "phase", "0: begin, 1: end"),
    ], ["phase", "bytes", "seq", "op", "rank", "nranks"]),
    "coll_step": (None, [
        ("__u64", "seq", "U", "seq", None),
        ("__u32", "op", "U", "op", "as rdt_ev_coll_mark's"),
        ("__s32", "rank", "I", "rank", None),
        ("__s32", "nranks", "I", "nranks", None),
        ("__u32", "step", "U", "step", None),
        ("__u32", "steps", "U", "steps", None),
        ("__u32", "pad", "H", None, None),
    ], ["seq", "step", "steps", "op", "rank", "nranks"]),
    "np_comm": ("COMM_INIT, COMM_FINI", [
        IDS,
        ("char[RDT_NAME_LEN]", "name", "S", "name", "commName, \"\" if none"),
        ("__s32", "nnodes", "I", "nnodes", None),
        ("__s32", "nranks", "I", "nranks", None),
        ("__u32", "abi", "U", "abi", "ncclProfiler_vN NCCL called"),
        ("__u32", "pad", "H", None, None),
    ]),
    "np_group": ("GROUP, GROUP_API", [
        IDS,
        ("__u32", "graph_captured", "U", "graph_captured", None),
        ("__s32", "depth", "I", "depth", "GroupApi groupDepth"),
    ]),
    "np_api": ("COLL_API, P2P_API", [
        IDS,
        ("__u64", "count", "U", "count", None),
        ("__u64", "stream", "X", "stream", "cudaStream_t value"),
        ("char[RDT_NP_STR]", "func", "S", "func", None),
        ("char[RDT_NP_STR]", "datatype", "S", "datatype", None),
        ("__s32", "root", "I", "root", "-1 for P2P_API"),
        ("__u32", "graph_captured", "U", "graph_captured", None),
    ], ["*ids", "func", "count", "datatype", "root", "stream", "graph_captured"]),
    "np_kernel_launch": (None, [
        IDS,
        ("__u64", "stream", "X", "stream", None),
    ]),
    "np_coll": (None, [
        IDS,
        ("__u64", "seq", "U", "seq", "seqNumber"),
        ("__u64", "count", "U", "count", None),
        ("__u64", "send_buff", "X", "send_buff", None),
        ("__u64", "recv_buff", "X", "recv_buff", None),
        ("__u64", "parent_group", "X", "parent_group", "id of its Group event"),
        ("char[RDT_NP_STR]", "func", "S", "func", None),
        ("char[RDT_NP_STR]", "datatype", "S", "datatype", None),
        ("char[RDT_NP_STR]", "algo", "S", "algo", None),
        ("char[8]", "proto", "S", "proto", None),
        ("__s32", "root", "I", "root", None),
        ("__u8", "nchannels", "U", "nchannels", None),
        ("__u8", "nwarps", "U", "nwarps", None),
        ("__u16", "pad", "H", None, None),
    ], ["*ids", "seq", "func", "count", "datatype", "root", "algo", "proto", "nchannels",
        "nwarps", "send_buff", "recv_buff", "parent_group"]),
    "np_p2p": (None, [
        IDS,
        ("__u64", "count", "U", "count", None),
        ("__u64", "buff", "X", "buff", None),
        ("__u64", "parent_group", "X", "parent_group", None),
        ("char[RDT_NP_STR]", "func", "S", "func", None),
        ("char[RDT_NP_STR]", "datatype", "S", "datatype", None),
        ("__s32", "peer", "I", "peer", None),
        ("__u8", "nchannels", "U", "nchannels", None),
        ("__u8[3]", "pad", "H", None, None),
    ], ["*ids", "func", "count", "datatype", "peer", "nchannels", "buff", "parent_group"]),
    "np_proxy_op": (None, [
        IDS,
        ("__u32", "op_pid", "U", "op_pid", "process that posted it (PXN)"),
        ("__u32", "channel", "U", "channel", None),
        ("__s32", "peer", "I", "peer", None),
        ("__s32", "nsteps", "I", "nsteps", None),
        ("__s32", "chunk_size", "I", "chunk_size", None),
        ("__s32", "is_send", "I", "is_send", None),
    ]),
    "np_proxy_step": (None, [
        IDS,
        ("__s32", "step", "I", "step", None),
        ("__u32", "pad", "H", None, None),
    ]),
    "np_proxy_ctrl": (None, [IDS]),
    "np_kernel_ch": (None, [
        IDS,
        ("__u64", "gpu_start", "U", "gpu_start", "GPU globaltimer, ns of the GPU"),
        ("__u32", "channel", "U", "channel", None),
        ("__u32", "pad", "H", None, None),
    ], ["*ids", "channel", "gpu_start"]),
    "np_net_ib": ("post; its STOP is the completion", [
        IDS,
        ("__u64", "wr_id", "X", "wr_id", None),
        ("__u64", "length", "U", "length", None),
        ("__s32", "device", "I", "device", "NCCL's IB device index"),
        ("__u32", "qpn", "U", "qpn", None),
        ("__s32", "opcode", "I", "opcode", "enum ibv_wr_opcode"),
        ("__u32", "ib_type", "U", "ib_type", "1: QP event"),
    ], ["*ids", "device", "qpn", "wr_id", "opcode", "length", "ib_type"]),
    "np_net_sock": (None, [
        IDS,
        ("__u64", "length", "U", "length", None),
        ("__s32", "fd", "I", "fd", None),
        ("__s32", "op", "I", "op", None),
    ], ["*ids", "fd", "op", "length"]),
    "np_net": (None, [
        IDS,
        ("__s64", "plugin_id", "X", "plugin_id", "netPlugin.id: type << 16 | version"),
    ]),
    "np_state": (None, [
        ("struct rdt_np_ids", "ids", "C", None, None),
        ("__u64", "arg", "C", "arg", "transSize, appendedProxyOps, pTimer"),
        ("__u32", "state", "C", "state", "NCCL's ncclProfilerEventState_v5"),
        ("__s32", "steps", "C", "steps", "1.7: v1..v3 ProxyOp's, else 0"),
    ]),
    "np_stop": (None, [IDS]),
    "np_skip": ("ids.ntype: the descriptor's type", [
        IDS,
        ("__u64", "raw_type", "X", "raw_type", None),
        ("__u32", "why", "U", "why", "enum rdt_np_skip_why"),
        ("__u32", "pad", "H", None, None),
    ]),
    "np_coll_old": (None, [
        ("struct rdt_np_ids", "ids", "C", None, "its Coll's"),
        ("char[RDT_NP_STR]", "op", "C", "op", "ncclRedOp_t as nccl.h names it"),
        ("__u64", "traffic_bytes", "C", "traffic_bytes", "trafficBytes"),
        ("__u8", "is_collnet", "C", "is_collnet", None),
        ("__u8", "is_nvls", "C", "is_nvls", None),
        ("__u8", "has", "H", None, "RDT_NP_OLD_*"),
        ("__u8[5]", "pad", "H", None, None),
    ]),
}

# The module's tracepoints (system rdmatrace), each built from the layout
# of the record body its wrapper hands it, so that a field's C type comes
# from the one place the wire format is described.  The format files
# tracefs gives perf, trace-cmd and bpftrace are an ABI of their own
# older than this table: each entry says where an event differs from its
# layout, so that the events stay as they were.  name: (layout, fields[,
# print]), where
#   name    the TRACE_EVENT_FN, TRACE_EVENT or DECLARE_EVENT_CLASS of
#           kmod/rdmatrace_trace.h; gen.py makes its TP_STRUCT__entry,
#           TP_fast_assign and TP_printk as the macros RDT_TP_<NAME>_ENTRY,
#           _ASSIGN and _PRINTK (NAME without a class's rdt_) in
#           kmod/rdmatrace_trace_fields.h
#   fields  the layout's members the event has, in its entry's order; dev,
#           the record header's device index, comes first in every event
#   print   the order TP_printk shows them in, where not fields' order
# A member is printed as its layout shows it: U %u, I %d, X 0x%x (%llu,
# %lld, 0x%llx at 64 bits), E:rdt_<what>_name by rdt_show_<what>() (the
# kernel's enum names, kmod/rdmatrace_trace.h's __print_symbolic tables).
# "member:U", ":I", ":X" or ":rdt_show_<what>" says how where the event
# prints it otherwise, or where the layout hides it (H) or shows it by
# code (C).  Signed 32-bit fields are "int" in the events, the rest u8 ..
# u64, as the format files have always said.
TRACEPOINTS = {
    "post_send": ("post_send", [
        "qpn", "wr_id", "remote_addr", "total_len", "rkey", "imm", "opcode",
        "send_flags", "num_sge", "index",
    ], ["qpn", "index", "wr_id", "opcode", "send_flags", "num_sge", "total_len",
        "remote_addr", "rkey", "imm"]),
    "post_recv": ("post_recv", [
        "qpn", "srq_id", "wr_id", "total_len", "num_sge", "srq:U", "index",
    ], ["qpn", "srq", "srq_id", "index", "wr_id", "num_sge", "total_len"]),
    "poll_cq_wc": ("poll_cq_wc", [
        "cq_id", "wr_id", "status", "opcode", "byte_len", "qpn", "src_qp", "wc_flags",
        "imm:X", "vendor_err:U", "index:U",
    ], ["cq_id", "index", "wr_id", "status", "opcode", "byte_len", "qpn", "src_qp",
        "wc_flags", "imm", "vendor_err"]),
    "poll_cq": ("poll_cq", ["cq_id", "requested", "ret"]),
    "req_notify_cq": ("req_notify_cq", ["cq_id", "flags", "ret"]),
    "qp_create": ("qp_create", [
        "qpn", "ret", "qp_type", "send_cq_id", "recv_cq_id", "srq", "max_send_wr",
        "max_recv_wr", "max_send_sge", "max_recv_sge", "max_inline_data",
        "sq_sig_type:U", "pd_id", "user", "port",
    ]),
    # shown by code in the library (a GID formatted): every field says how
    "qp_modify": ("qp_modify", [
        "qpn:U", "ret:I", "attr_mask:X", "old_state:rdt_show_qp_state",
        "new_state:rdt_show_qp_state", "cur_state:rdt_show_qp_state", "path_mtu:U",
        "dest_qpn:U", "sq_psn:U", "rq_psn:U", "timeout:U", "retry_cnt:U", "rnr_retry:U",
        "min_rnr_timer:U", "port:U", "qkey:X", "max_rd_atomic:U", "max_dest_rd_atomic:U",
    ]),
    "qp_destroy": ("qp_destroy", ["qpn", "ret", "qp_type"]),
    "rdt_cq": ("cq", ["cq_id", "ret", "cqe", "comp_vector", "user"]),
    "rdt_mr": ("mr", ["lkey", "rkey", "iova", "length", "ret", "access", "kind", "pd_id"]),
    "rdt_pd": ("pd", ["pd_id", "ret", "user", "local_dma_lkey:X"]),
}
