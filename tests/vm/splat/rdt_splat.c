// SPDX-License-Identifier: GPL-2.0
/*
 * A module that splats on purpose, to prove that tests/vm/run fails a run
 * whose guest kernel logged a warning even when the command succeeded.
 * With leak=1 it warns of nothing and leaks an object instead, which only
 * kmemleak's scan at the end of the run can find.
 */
#include <linux/module.h>
#include <linux/bug.h>
#include <linux/compiler.h>
#include <linux/slab.h>

static bool leak;
module_param(leak, bool, 0444);
MODULE_PARM_DESC(leak, "leak one object instead of warning");

static int __init rdt_splat_init(void)
{
	void *p;

	if (!leak) {
		WARN(1, "rdt_splat: deliberate warning for the test bed's splat scan\n");
		return 0;
	}
	p = kmalloc(192, GFP_KERNEL);
	/* Keep the allocation: the compiler may not drop an unused one. */
	OPTIMIZER_HIDE_VAR(p);
	return p ? 0 : -ENOMEM;
}

static void __exit rdt_splat_exit(void)
{
}

module_init(rdt_splat_init);
module_exit(rdt_splat_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("rdmatrace test bed: a deliberate kernel warning or leak");
