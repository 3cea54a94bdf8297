/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmatrace: every difference between the kernels we build for lives here.
 *
 * Checked against Debian's 6.1.192 and 6.12.117 trees: the ib_client API
 * (add returns int since 5.8), the ib_device_ops layout of the wrapped ops,
 * the inline verbs helpers and relay are unchanged; create_cq takes a
 * uverbs_attr_bundle instead of an ib_udata from 6.11 on.  Differences are
 * detected by probing the target's headers (Kbuild sets RDT_HAVE_*), which
 * also covers distribution backports.
 */
#ifndef _RDT_COMPAT_H
#define _RDT_COMPAT_H

#ifdef RDT_HAVE_CREATE_CQ_ATTRS
/* create_cq(cq, attr, struct uverbs_attr_bundle *attrs): 6.11+ */
#define RDT_CREATE_CQ_ARG	struct uverbs_attr_bundle
#else
/* create_cq(cq, attr, struct ib_udata *udata) */
#define RDT_CREATE_CQ_ARG	struct ib_udata
#endif

#endif /* _RDT_COMPAT_H */
