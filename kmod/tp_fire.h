/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmatrace: fire this module's tracepoints with no patched code in its
 * own text.
 *
 * trace_foo() and trace_foo_enabled() put a jump-label site (the
 * tracepoint's static key) and a static-call site into the caller's text,
 * and the kernel rewrites both with int3-based text_poke_bp() whenever a
 * probe comes or goes, while other CPUs may be executing them.  Switching
 * tracing on did the same to the rdt_on key in every data-path wrapper,
 * and that oopsed (issue 40: "Oops: int3" in rdt_post_send on 6.12 under
 * the test bed's TCG guests, the int3 of a site being rewritten reached a
 * CPU after the patching sequence had ended).  The same guests' 6.12
 * kernel oopsed alike in its own boot-time patching (tests/vm/run), so
 * the fault is in live cross-modification there, not in which key was
 * flipped; rdmatrace's part is that it rewrote code that user posts were
 * running, every time tracing was switched on or off.
 *
 * So nothing in this module patches its own text: a tracepoint's state is
 * read as its key's count (one load; static_key_enabled() never patches),
 * and a probe is called through the tracepoint's iterator, which walks the
 * probe array under preempt_disable_notrace() exactly as __DO_TRACE does
 * when the architecture has no static calls.  The wrappers that test these
 * are in device->ops only while something traces (wrap.c), so an untraced
 * verb pays nothing for the loads.  tests/kmod/style.test checks the built
 * module: no jump-label or static-call site of ours refers to a key or a
 * static call this module defines.
 */
#ifndef RDT_TP_FIRE_H
#define RDT_TP_FIRE_H

#include <linux/jump_label.h>
#include <linux/preempt.h>

#include "rdmatrace_trace.h"

/*
 * A probe is attached to tracepoint @name: its key's count, read as
 * static_key_enabled() reads it (a load, never a patched site; the key is
 * a struct static_key or, in newer kernels, a static_key_false, which
 * begins with one), without that helper's call to static_key_count(),
 * which was not inlined: 12 instructions a verb.
 */
#define rdt_tp_on(name)							\
	(atomic_read(&((struct static_key *)&__tracepoint_##name.key)->enabled) > 0)

/* trace_@name(args) without the patched key and static-call sites. */
#define rdt_tp_fire(name, ...)						\
	do {								\
		if (rdt_tp_on(name)) {					\
			preempt_disable_notrace();			\
			__traceiter_##name(NULL, __VA_ARGS__);		\
			preempt_enable_notrace();			\
		}							\
	} while (0)

#endif
