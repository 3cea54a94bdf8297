/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmatrace: every difference between the kernels we build for lives here.
 *
 * Checked against Debian's 6.1.192 and 6.12.117 trees and sid's 7.2.13
 * source: the ib_client API (add returns int since 5.8), the ib_device_ops
 * layout of the wrapped ops, the inline verbs helpers and relay are
 * unchanged but for create_cq, which takes a uverbs_attr_bundle instead of
 * an ib_udata from 6.11 on, relay's subbuf_start (3 arguments in 7.2),
 * reg_user_mr (a struct ib_dmah * more in 7.2) and the unaligned access
 * helpers' header (<linux/unaligned.h> from 6.12).  Differences are
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

/*
 * relay's rchan_callbacks.subbuf_start: 7.2 dropped the last argument,
 * prev_padding (rdt_subbuf_start() never read it).
 */
#if defined(RDT_HAVE_SUBBUF_START_PADDING)
#define RDT_SUBBUF_START_PREV	void *prev_subbuf, size_t prev_padding
#elif defined(RDT_HAVE_SUBBUF_START_NOPADDING)
#define RDT_SUBBUF_START_PREV	void *prev_subbuf
#else
#error "rdmatrace: unknown rchan_callbacks.subbuf_start (kmod/Kbuild.probes)"
#endif

/*
 * ib_device_ops.reg_user_mr: 7.2 passes a struct ib_dmah * (the DMA handle
 * of the MR, or NULL) before udata.  The wrapper hands it on untouched.
 */
#if defined(RDT_HAVE_REG_USER_MR_DMAH)
struct ib_dmah;
#define RDT_REG_USER_MR_DMAH		struct ib_dmah *dmah,
#define RDT_REG_USER_MR_DMAH_ARG	dmah,
#elif defined(RDT_HAVE_REG_USER_MR_UDATA)
#define RDT_REG_USER_MR_DMAH
#define RDT_REG_USER_MR_DMAH_ARG
#else
#error "rdmatrace: unknown ib_device_ops.reg_user_mr (kmod/Kbuild.probes)"
#endif

/*
 * The namespace rdt.h exports internals to rdmatrace_test.ko in, as
 * EXPORT_SYMBOL_NS_GPL() and MODULE_IMPORT_NS() take it: a string literal
 * from 6.13 on, a token they __stringify before.
 */
#if defined(RDT_HAVE_NS_STRING)
#define RDT_KUNIT_NS	"RDMATRACE_KUNIT"
#elif defined(RDT_HAVE_NS_TOKEN)
#define RDT_KUNIT_NS	RDMATRACE_KUNIT
#else
#error "rdmatrace: unknown MODULE_IMPORT_NS() (kmod/Kbuild.probes)"
#endif

/*
 * A variable the compiler must not zero under CONFIG_INIT_STACK_ALL_ZERO
 * (compiler_attributes.h, where the compiler has the attribute; nothing
 * where the header lacks the macro).
 */
#ifndef __uninitialized
#define __uninitialized
#endif

/*
 * The unaligned access helpers (encode.h's paired stores): <asm/...> until
 * 6.12 moved them, and last, after the #errors above, which a build with
 * no probe result reports before this header is missed.
 */
#ifdef RDT_HAVE_LINUX_UNALIGNED_H
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

#endif /* _RDT_COMPAT_H */
