/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The BPF cookie of an ibv_cq_ex read_* probe: which field of the current
 * completion the call's return value is.  verbs_attach.c attaches with
 * these, verbs.bpf.c's verbs_cqx_read switches on them.
 */
#ifndef RDT_VERBS_COOKIES_H
#define RDT_VERBS_COOKIES_H

enum rdt_cqx_field {
	CQX_OPCODE = 1, CQX_VENDOR_ERR, CQX_BYTE_LEN, CQX_IMM, CQX_QP_NUM, CQX_SRC_QP,
	CQX_WC_FLAGS
};

#endif
