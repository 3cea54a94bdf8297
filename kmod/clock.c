// SPDX-License-Identifier: GPL-2.0
/*
 * rdmatrace: the data path clock's choice of TSC or ktime_get_ns()
 * (clock.h says why and how a stamp is made).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/string.h>
#ifdef CONFIG_X86_TSC
#include <asm/cpufeature.h>
#include <asm/tsc.h>
#endif

#include "clock.h"
#include "rdt.h"

bool rdt_clk_tsc;
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_clk_tsc);
static enum rdt_clk_mode rdt_clk_mode;
static const char *rdt_clk_reason = "not set up";

const char *const rdt_clk_modes[] = {
	[RDT_CLK_AUTO] = "auto",
	[RDT_CLK_TSC] = "tsc",
	[RDT_CLK_KTIME] = "ktime",
};

/*
 * The TSC's frequency if the kernel trusts it to tick at that rate on
 * every CPU through idle and frequency changes; 0 and why not otherwise.
 */
static u64 rdt_tsc_khz(bool trusted_only, const char **why)
{
#ifdef CONFIG_X86_TSC
	if (!tsc_khz) {
		*why = "the TSC's frequency is unknown";
		return 0;
	}
	if (!trusted_only)
		return tsc_khz;
	if (!boot_cpu_has(X86_FEATURE_CONSTANT_TSC))
		*why = "the CPU lacks constant_tsc";
	else if (!boot_cpu_has(X86_FEATURE_NONSTOP_TSC))
		*why = "the CPU lacks nonstop_tsc";
	else if (check_tsc_unstable())
		*why = "the kernel marked the TSC unstable";
	else
		return tsc_khz;
	return 0;
#else
	*why = "no TSC on this architecture";
	return 0;
#endif
}

static bool rdt_tsc_unstable(void)
{
#ifdef CONFIG_X86_TSC
	return check_tsc_unstable();
#else
	return true;
#endif
}

/*
 * The clocksource watchdog may distrust the TSC at any time: stamp
 * ktime_get_ns() from then on.  At each sub-buffer switch (emit.c), out of
 * the data path.  True when this call took the TSC away.
 */
bool rdt_clk_check(void)
{
	if (READ_ONCE(rdt_clk_mode) == RDT_CLK_AUTO &&
	    READ_ONCE(rdt_clk_tsc) && unlikely(rdt_tsc_unstable())) {
		WRITE_ONCE(rdt_clk_tsc, false);
		WRITE_ONCE(rdt_clk_reason, "the kernel marked the TSC unstable");
		return true;
	}
	return false;
}

u64 rdt_clk_khz(void)
{
#ifdef CONFIG_X86_TSC
	return tsc_khz;
#else
	return 0;
#endif
}
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_clk_khz);

/*
 * Choose the clock.  Only while nothing stamps: at load, or from debugfs
 * while tracing is off (every writer has left by then).  -EOPNOTSUPP for
 * clock=tsc where there is no TSC frequency.
 */
int rdt_clk_set(enum rdt_clk_mode mode)
{
	const char *why = "clock=ktime";
	u64 khz = 0;

	if (mode == RDT_CLK_TSC) {
		khz = rdt_tsc_khz(false, &why);
		if (!khz)
			return -EOPNOTSUPP;
		why = "clock=tsc";
	} else if (mode == RDT_CLK_AUTO) {
		khz = rdt_tsc_khz(true, &why);
		if (khz)
			why = "constant_tsc, nonstop_tsc, stable";
	}
	WRITE_ONCE(rdt_clk_tsc, khz != 0);
	WRITE_ONCE(rdt_clk_mode, mode);
	WRITE_ONCE(rdt_clk_reason, why);
	return 0;
}
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_clk_set);

enum rdt_clk_mode rdt_clk_get(void)
{
	return READ_ONCE(rdt_clk_mode);
}
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_clk_get);

const char *rdt_clk_name(void)
{
	return READ_ONCE(rdt_clk_tsc) ? "tsc" : "ktime";
}
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_clk_name);

const char *rdt_clk_why(void)
{
	return READ_ONCE(rdt_clk_reason);
}
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_clk_why);

/* The parameter's and debugfs' parse; a bad value is said once, here. */
int rdt_clk_parse(const char *s, enum rdt_clk_mode *mode)
{
	int i = sysfs_match_string(rdt_clk_modes, s);

	if (i < 0) {
		pr_warn_ratelimited("clock: '%.*s' is not auto, tsc or ktime\n",
				    (int)strcspn(s, "\n"), s);
		return -EINVAL;
	}
	*mode = i;
	return 0;
}
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_clk_parse);
