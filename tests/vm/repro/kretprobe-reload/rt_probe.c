// SPDX-License-Identifier: GPL-2.0
/*
 * The reload oops of the 7.2 debug kernel without rdmatrace: one kretprobe
 * on rdma_restrack_add(), as kmod/restrack.c has (entry handler, return
 * handler, data, maxactive), and nothing else.
 */
#include <linux/kprobes.h>
#include <linux/module.h>

static atomic_t rt_hits;

static int rt_enter(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	atomic_inc(&rt_hits);
	return 0;
}

static int rt_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	return 0;
}

static struct kretprobe rt_probe = {
	.kp.symbol_name	= "rdma_restrack_add",
	.entry_handler	= rt_enter,
	.handler	= rt_return,
	.data_size	= sizeof(void *),
	.maxactive	= 64,
};

static int __init rt_init(void)
{
	return register_kretprobe(&rt_probe);
}

static void __exit rt_exit(void)
{
	unregister_kretprobe(&rt_probe);
	pr_info("rt_probe: %d hits\n", atomic_read(&rt_hits));
}

module_init(rt_init);
module_exit(rt_exit);
MODULE_LICENSE("GPL");
