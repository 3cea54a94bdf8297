/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmatrace: the data path's clock.  A record's stamp is the raw TSC,
 * RDT_TS_RAW set (<rdmatrace/wire.h>): the reader converts it to
 * CLOCK_MONOTONIC from (TSC, CLOCK_MONOTONIC) pairs it samples around its
 * own reads, so the writer pays a TSC read and an or, not a conversion.
 *
 * ktime_get_ns() was about 42 of a traced post_send's ~277 added guest
 * instructions (bench/PROFILE.md); a per-CPU anchor (TSC, ktime) scaled by
 * tsc_khz, which ABI 1's relay form needed, still cost ~18 of ~200: a
 * load of the anchor, a span test, a multiply, a store of the CPU's last
 * stamp (bench/NOTES.md, "What a traced verb's instructions buy").
 *
 * Each CPU's stream stays in stamp order: the TSC read is ordered, and
 * a CPU's TSC does not go back.  Across CPUs the stamps are one clock only
 * where the kernel trusts the TSC (constant_tsc, nonstop_tsc, not marked
 * unstable: its clocksource then keeps the CPUs' TSCs in step), or where
 * the user forced it (clock=tsc, as the tests and bench/ do in QEMU's TCG
 * guests, which lack both flags).  Otherwise every stamp is
 * ktime_get_ns(), CLOCK_MONOTONIC itself.  The clocksource watchdog may
 * distrust the TSC later: the module then stamps ktime_get_ns() from its
 * next sub-buffer switch on (rdt_clk_check()), and the reader keeps each
 * CPU's converted stamps in order across the change.
 *
 * Interrupts must be off: the stamp must be taken on the CPU whose buffer
 * takes the record (slot.h).
 */
#ifndef _RDT_CLOCK_H
#define _RDT_CLOCK_H

#include <linux/ktime.h>
#include <linux/timekeeping.h>
#include <rdmatrace/wire.h>
#ifdef CONFIG_X86_TSC
#include <asm/msr.h>
#endif

/* Stamps are the raw TSC (RDT_TS_RAW); false: ktime_get_ns(). */
extern bool rdt_clk_tsc;

enum rdt_clk_mode {
	RDT_CLK_AUTO,		/* the TSC where the kernel trusts it */
	RDT_CLK_TSC,		/* the TSC, forced */
	RDT_CLK_KTIME,		/* ktime_get_ns() for every stamp */
};

int rdt_clk_set(enum rdt_clk_mode mode);
enum rdt_clk_mode rdt_clk_get(void);
bool rdt_clk_check(void);
/* "tsc" or "ktime", and why: for debugfs and the load message. */
const char *rdt_clk_name(void);
const char *rdt_clk_why(void);
/* The TSC's frequency the kernel calibrated, 0 if none: for the reader. */
u64 rdt_clk_khz(void);
/* TSC cycles between a CPU's clock pairs (emit.c's RDT_EV_CLOCK): 1 s. */
static inline u64 rdt_clk_pair_every(void)
{
	return rdt_clk_khz() * MSEC_PER_SEC;
}

int rdt_clk_parse(const char *s, enum rdt_clk_mode *mode);
extern const char *const rdt_clk_modes[];

/*
 * Ordered: a TSC read may not run ahead of the code before it, so a later
 * record never reads an earlier TSC than the one before it.
 */
static __always_inline u64 rdt_clk_read_tsc(void)
{
#ifdef CONFIG_X86_TSC
	return rdtsc_ordered();
#else
	return 0;
#endif
}

/* A record's stamp: the raw TSC with RDT_TS_RAW, or CLOCK_MONOTONIC ns. */
static __always_inline u64 rdt_stamp(void)
{
	if (likely(READ_ONCE(rdt_clk_tsc)))
		return rdt_clk_read_tsc() | RDT_TS_RAW;
	return ktime_get_ns();
}

/*
 * CLOCK_MONOTONIC ns at a stamp taken just now: a control-path verb's
 * duration (its entry is ktime_get_ns()).
 */
static inline u64 rdt_stamp_now_ns(u64 stamp)
{
	return stamp & RDT_TS_RAW ? ktime_get_ns() : stamp;
}

#endif /* _RDT_CLOCK_H */
