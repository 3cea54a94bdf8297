// SPDX-License-Identifier: GPL-2.0
/*
 * rdmatrace: trace every verb that passes through device->ops on every RDMA
 * device, present or hot-added, into per-CPU relay buffers.
 *
 * Lifecycle, modelled on blktrace: load (devices wrapped, tracing off
 * unless enable=1), enable/disable through debugfs (the relay channel
 * opened at the first enable, kept for readers after a disable), unload
 * (devices unwrapped, every in-flight wrapper waited for, channel closed).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/rcupdate.h>

#include "clock.h"
#include "rdt.h"

unsigned long rdt_param_subbuf_size = 256 * 1024;
module_param_named(buffer_size, rdt_param_subbuf_size, ulong, 0444);
MODULE_PARM_DESC(buffer_size, "relay sub-buffer size in bytes (per CPU, default 262144)");

unsigned long rdt_param_n_subbufs = 8;
module_param_named(n_subbufs, rdt_param_n_subbufs, ulong, 0444);
MODULE_PARM_DESC(n_subbufs, "relay sub-buffers per CPU, one kept free (default 8)");

module_param_named(stack_check_ms, rdt_stack_check_ms, uint, 0444);
MODULE_PARM_DESC(stack_check_ms,
		 "how often to look for another module's wrappers over ours, which keep this module loaded (0: never; an unload then waits for them to go)");

/* clock=auto|tsc|ktime: how records are stamped (clock.h). */
static enum rdt_clk_mode rdt_param_clock;

static int rdt_clock_param_set(const char *val, const struct kernel_param *kp)
{
	enum rdt_clk_mode mode;

	if (rdt_clk_parse(val, &mode))
		return -EINVAL;
	rdt_param_clock = mode;
	return 0;
}

static int rdt_clock_param_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", rdt_clk_modes[rdt_param_clock]);
}

static const struct kernel_param_ops rdt_clock_param_ops = {
	.set = rdt_clock_param_set,
	.get = rdt_clock_param_get,
};

module_param_cb(clock, &rdt_clock_param_ops, NULL, 0444);
MODULE_PARM_DESC(clock, "record stamps: auto (the TSC where the kernel trusts it, else ktime), tsc (forced), ktime (default auto)");

static bool rdt_param_enable;
module_param_named(enable, rdt_param_enable, bool, 0444);
MODULE_PARM_DESC(enable, "start tracing at load (default 0)");

static int rdt_client_add(struct ib_device *ibdev);
static void rdt_client_remove(struct ib_device *ibdev, void *data);
static void rdt_client_rename(struct ib_device *ibdev, void *data);

static struct ib_client rdt_client = {
	.name		= "rdmatrace",
	.add		= rdt_client_add,
	.remove		= rdt_client_remove,
	.rename		= rdt_client_rename,
	.no_kverbs_req	= 1,
};

/*
 * Existing devices arrive here under devices_rwsem and clients_rwsem held
 * for write: take neither.  An error only leaves this device untraced: an
 * error returned to ib_core would fail the device's registration (or this
 * module's load), and a tracer must never take a device away.
 */
static int rdt_client_add(struct ib_device *ibdev)
{
	struct rdt_dev *rd = rdt_dev_wrap(ibdev);

	if (IS_ERR(rd)) {
		pr_warn("%s: not traced: cannot wrap its ops (%ld)\n",
			dev_name(&ibdev->dev), PTR_ERR(rd));
		return 0;
	}
	ib_set_client_data(ibdev, &rdt_client, rd);
	return 0;
}

static void rdt_client_remove(struct ib_device *ibdev, void *data)
{
	if (data)
		rdt_dev_unwrap(ibdev, data);
}

static void rdt_client_rename(struct ib_device *ibdev, void *data)
{
	if (data)
		rdt_dev_rename(ibdev, data);
}

/*
 * After the client is gone (every device unwrapped, or a failed load's
 * few): wait until no CPU can still run a wrapper's instructions, then
 * free what the wrappers read.
 */
static void rdt_teardown(void)
{
	/*
	 * Callers that loaded a wrapper's address but did not enter it yet,
	 * and the data path's wrappers, which take no SRCU section: tasks,
	 * then interrupts (RCU Tasks does not wait for an idle CPU's).
	 */
	synchronize_rcu_tasks();
	synchronize_rcu();
	/* PREEMPT_RT: data path wrappers blocked in a driver's lock. */
	rdt_dp_wait();
	/* Wrappers inside their SRCU section, possibly sleeping. */
	synchronize_srcu(&rdt_srcu);
	/* The last instructions of each wrapper after srcu_read_unlock(). */
	synchronize_rcu_tasks();
	rdt_restrack_exit();
	rdt_dev_free_all();
	rdt_debugfs_exit();
}

static int __init rdt_init(void)
{
	int ret;

	if (rdt_check_geometry(rdt_param_subbuf_size, rdt_param_n_subbufs)) {
		pr_err("bad module parameters: not loaded\n");
		return -EINVAL;
	}
	ret = rdt_clk_set(rdt_param_clock);
	if (ret) {
		pr_err("clock=tsc: this machine has no TSC frequency: not loaded\n");
		return ret;
	}
	rdt_encode_init();
	ret = rdt_debugfs_init(rdt_param_enable);
	if (ret)
		goto out;

	rdt_set_enabled(rdt_param_enable);
	ret = ib_register_client(&rdt_client);
	if (ret) {
		pr_err("ib_register_client failed (%d)\n", ret);
		goto out_client;
	}
	rdt_stack_watch_start();
	pr_info("version %s (ABI %d.%d) loaded, tracing %s, clock %s (%s)\n",
		RDT_VERSION, RDT_RELAY_ABI_MAJOR, RDT_ABI_MINOR,
		rdt_param_enable ? "on" : "off", rdt_clk_name(), rdt_clk_why());
	return 0;

out_client:
	/* A device may have been wrapped before the failure. */
	rdt_teardown();
out:
	pr_err("not loaded (%d)\n", ret);
	return ret;
}

static void __exit rdt_exit(void)
{
	/* No reference of our own is held, or exit would not run. */
	rdt_stack_watch_stop();
	/*
	 * Unwraps every device (remove runs LIFO, other clients still live),
	 * waiting where another module's wrapper sits over ours.
	 */
	ib_unregister_client(&rdt_client);
	rdt_teardown();
	pr_info("unloaded\n");
}

module_init(rdt_init);
module_exit(rdt_exit);

MODULE_AUTHOR("rdmatrace developers");
MODULE_DESCRIPTION("Trace RDMA verbs through device->ops into relay buffers");
MODULE_LICENSE("GPL");
MODULE_VERSION(RDT_VERSION);
