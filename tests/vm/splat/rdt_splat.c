// SPDX-License-Identifier: GPL-2.0
/*
 * A module that splats on purpose, to prove that tests/vm/run fails a run
 * whose guest kernel logged a warning even when the command succeeded.
 */
#include <linux/module.h>
#include <linux/bug.h>

static int __init rdt_splat_init(void)
{
	WARN(1, "rdt_splat: deliberate warning for the test bed's splat scan\n");
	return 0;
}

static void __exit rdt_splat_exit(void)
{
}

module_init(rdt_splat_init);
module_exit(rdt_splat_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("rdmatrace test bed: a deliberate kernel warning");
