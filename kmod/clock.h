/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmatrace: the data path's clock.  Every record carries CLOCK_MONOTONIC
 * nanoseconds (ABI 1, unchanged); this is how a record gets them cheaply.
 *
 * ktime_get_ns() was about 42 of a traced post_send's ~277 added guest
 * instructions (bench/PROFILE.md): the timekeeper's seqcount, an indirect
 * call to the clocksource's read and its scaling.  Here each CPU keeps an
 * anchor, a (TSC, ktime_get_ns()) pair taken on that CPU, and a stamp is
 * the anchor's time plus the TSC cycles since it, scaled by tsc_khz: a
 * TSC read, a subtraction, a compare and a multiply.  An anchor serves
 * for RDT_CLK_ANCHOR_US; the next stamp after that takes a fresh one (out
 * of line, clock.c).  So a stamp is off CLOCK_MONOTONIC by at most that
 * span times the rate error of tsc_khz against the timekeeper (NTP slews
 * CLOCK_MONOTONIC by at most 500 ppm: 0.5 us; tens of ns in practice).
 * Anchors are per CPU, so TSCs that are not synchronized across CPUs
 * still give each CPU its right time.
 *
 * Stamps never go back on a CPU (each CPU's relay stream must be in time
 * order: the reader merges the CPUs on it): within an anchor's span they
 * grow with the TSC, and a fresh anchor that reads earlier than the last
 * stamp is moved up to it.
 *
 * The TSC is used only where it ticks at one rate through idle and
 * frequency changes and the kernel trusts it (constant_tsc, nonstop_tsc,
 * not marked unstable), or where the user forced it (clock=tsc, as the
 * tests and bench/ do in QEMU's TCG guests, which lack both flags).
 * Otherwise rdt_clk_span is 0 and every stamp is ktime_get_ns(), inline:
 * the clock as it was, plus a test of the span and the order check.
 *
 * Interrupts must be off: the anchor is this CPU's, and the stamp must be
 * taken on the CPU whose buffer takes the record (slot.h).
 */
#ifndef _RDT_CLOCK_H
#define _RDT_CLOCK_H

#include <linux/ktime.h>
#include <linux/percpu.h>
#include <linux/timekeeping.h>
#ifdef CONFIG_X86_TSC
#include <asm/msr.h>
#endif

/* How long one anchor serves (its error grows with it). */
#define RDT_CLK_ANCHOR_US	1000

struct rdt_clk {
	u64	tsc;		/* the anchor: the TSC at mono */
	u64	mono;		/* the anchor: CLOCK_MONOTONIC ns */
	u64	last;		/* the last stamp of this CPU */
};

DECLARE_PER_CPU(struct rdt_clk, rdt_clk);

/*
 * TSC cycles one anchor serves; 0: no TSC, every stamp is ktime_get_ns().
 * ns = cycles * rdt_clk_mult >> RDT_CLK_SHIFT.  Cycles are fewer than the
 * span, 1 ms, so the product is below 1e6 << 32 and fits a u64: a plain
 * multiply, no 128-bit one.
 */
#define RDT_CLK_SHIFT		32
extern u64 rdt_clk_span;
extern u64 rdt_clk_mult;

enum rdt_clk_mode {
	RDT_CLK_AUTO,		/* the TSC where the kernel trusts it */
	RDT_CLK_TSC,		/* the TSC, forced */
	RDT_CLK_KTIME,		/* ktime_get_ns() for every stamp */
};

u64 rdt_clk_anchor(u64 tsc);
int rdt_clk_set(enum rdt_clk_mode mode);
enum rdt_clk_mode rdt_clk_get(void);
/* "tsc" or "ktime", and why: for debugfs and the load message. */
const char *rdt_clk_name(void);
const char *rdt_clk_why(void);
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

/* Without the TSC: ktime_get_ns(), never earlier than the CPU's last stamp. */
static __always_inline u64 rdt_clock_ktime(void)
{
	u64 ns = ktime_get_ns();
	u64 last = __this_cpu_read(rdt_clk.last);

	/* Only after the TSC was given up for ktime can last be ahead. */
	if (unlikely(ns < last))
		ns = last;
	__this_cpu_write(rdt_clk.last, ns);
	return ns;
}

/* This CPU's CLOCK_MONOTONIC ns, never earlier than its last; irqs off. */
static __always_inline u64 rdt_clock_ns(void)
{
	u64 span = READ_ONCE(rdt_clk_span);
	u64 tsc, d, ns;

	if (unlikely(!span))
		return rdt_clock_ktime();
	tsc = rdt_clk_read_tsc();
	d = tsc - __this_cpu_read(rdt_clk.tsc);
	if (unlikely(d >= span))
		return rdt_clk_anchor(tsc);
	ns = __this_cpu_read(rdt_clk.mono) +
	     ((d * READ_ONCE(rdt_clk_mult)) >> RDT_CLK_SHIFT);
	__this_cpu_write(rdt_clk.last, ns);
	return ns;
}

#endif /* _RDT_CLOCK_H */
