// SPDX-License-Identifier: GPL-2.0
/*
 * rdmatrace: /sys/kernel/debug/rdmatrace/, the control side.
 *
 *   trace0..N    per-CPU relay files (read them), there from the first
 *                enable on (or from load with enable=1)
 *   enable       0/1
 *   events       mask of kmod record types, bit n = type 64 + n
 *   filter_pid   thread group id to keep, 0 = every process
 *   filter_dev   device index to keep, -1 = every device
 *   buffer_size  relay sub-buffer size in bytes \ per CPU, settable only
 *   n_subbufs    number of sub-buffers           / while disabled
 *   dropped      events lost because a buffer was full, per CPU and total
 *   version      ABI and module version
 *
 * Every file is root-only.  A bad write fails with -EINVAL and says why.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/threads.h>
#include <linux/uaccess.h>

#include "clock.h"
#include "rdt.h"

/* Serialises control writes and channel replacement. */
DEFINE_MUTEX(rdt_ctl_mutex);
struct dentry *rdt_dir;

int rdt_check_geometry(size_t subbuf_size, size_t n_subbufs)
{
	if (subbuf_size < RDT_SUBBUF_MIN || subbuf_size > RDT_SUBBUF_MAX ||
	    !IS_ALIGNED(subbuf_size, 8)) {
		pr_err("buffer_size %zu: must be a multiple of 8 in [%lu, %lu]\n",
		       subbuf_size, RDT_SUBBUF_MIN, RDT_SUBBUF_MAX);
		return -EINVAL;
	}
	if (n_subbufs < RDT_NSUBBUF_MIN || n_subbufs > RDT_NSUBBUF_MAX) {
		pr_err("n_subbufs %zu: must be in [%lu, %lu]\n", n_subbufs,
		       RDT_NSUBBUF_MIN, RDT_NSUBBUF_MAX);
		return -EINVAL;
	}
	return 0;
}

static struct rdt_trace *rdt_trace_locked(void)
{
	return rcu_dereference_protected(rdt_cur_trace,
					 lockdep_is_held(&rdt_ctl_mutex));
}

/*
 * The channel is opened when tracing is first switched on, not at load,
 * as blktrace allocates at setup: a loaded module that never traces
 * holds no buffers (n_subbufs x buffer_size on every possible CPU).  It
 * stays when tracing goes off, for readers to drain, until a geometry
 * write replaces it or unload frees it.  Under rdt_ctl_mutex.
 */
static int rdt_trace_alloc(void)
{
	struct rdt_trace *t;

	if (rdt_trace_locked())
		return 0;
	t = rdt_trace_open(rdt_dir, rdt_param_subbuf_size,
			   rdt_param_n_subbufs);
	if (IS_ERR(t))
		return PTR_ERR(t);
	rcu_assign_pointer(rdt_cur_trace, t);
	return 0;
}

/*
 * Replace the channel, if there is one yet; the caller holds
 * rdt_ctl_mutex, tracing is off.
 */
int rdt_reconfigure(size_t subbuf_size, size_t n_subbufs)
{
	struct rdt_trace *old = rdt_trace_locked();
	struct rdt_trace *t;

	if (!old) {
		rdt_param_subbuf_size = subbuf_size;
		rdt_param_n_subbufs = n_subbufs;
		return 0;
	}
	/* The files of both channels would be called trace<cpu>. */
	RCU_INIT_POINTER(rdt_cur_trace, NULL);
	rdt_trace_close(old);	/* after its writers: rdt_trace_close() */

	t = rdt_trace_open(rdt_dir, subbuf_size, n_subbufs);
	if (IS_ERR(t)) {
		int ret = PTR_ERR(t);

		t = rdt_trace_open(rdt_dir, rdt_param_subbuf_size,
				   rdt_param_n_subbufs);
		if (!IS_ERR(t))
			rcu_assign_pointer(rdt_cur_trace, t);
		return ret;
	}
	rcu_assign_pointer(rdt_cur_trace, t);
	rdt_param_subbuf_size = subbuf_size;
	rdt_param_n_subbufs = n_subbufs;
	return 0;
}

/* ---- attributes ------------------------------------------------------- */

struct rdt_attr {
	const char	*name;
	umode_t		mode;
	void		(*show)(struct seq_file *m);
	int		(*store)(const char *buf);
};

static void rdt_enable_show(struct seq_file *m)
{
	seq_printf(m, "%d\n", READ_ONCE(rdt_enabled));
}

static int rdt_enable_store(const char *buf)
{
	unsigned int on;

	/* Exactly 0 or 1: kstrtobool() would take "10" or "yes2" as on. */
	if (kstrtouint(buf, 10, &on) || on > 1) {
		pr_warn_ratelimited("enable: '%s' is not 0 or 1\n", buf);
		return -EINVAL;
	}
	if (on) {
		/* rdt_trace_open() said why it failed. */
		int ret = rdt_trace_alloc();

		if (ret)
			return ret;
	}
	if (on && !READ_ONCE(rdt_enabled)) {
		rdt_set_enabled(true);
		rdt_dev_statedump();
		return 0;
	}
	rdt_set_enabled(on);
	/*
	 * Off once every record begun is written: the control path's
	 * wrappers test the flag in their SRCU section, the data path's
	 * reserve with interrupts off.
	 */
	if (!on) {
		synchronize_srcu(&rdt_srcu);
		synchronize_rcu();
	}
	return 0;
}

static void rdt_events_show(struct seq_file *m)
{
	seq_printf(m, "0x%llx\n", READ_ONCE(rdt_cur_filter.evmask));
}

static int rdt_events_store(const char *buf)
{
	u64 mask;

	if (kstrtou64(buf, 0, &mask) || (mask & ~RDT_EVMASK_ALL)) {
		pr_warn_ratelimited("events: '%s' is not a mask within 0x%llx (bit n = record type %d + n)\n",
				    buf, RDT_EVMASK_ALL, RDT_KMOD_TYPE_FIRST);
		return -EINVAL;
	}
	WRITE_ONCE(rdt_cur_filter.evmask, mask);
	rdt_lean_update();
	return 0;
}

static void rdt_filter_pid_show(struct seq_file *m)
{
	seq_printf(m, "%u\n", READ_ONCE(rdt_cur_filter.pid));
}

static int rdt_filter_pid_store(const char *buf)
{
	u32 pid;

	if (kstrtou32(buf, 10, &pid) || pid > PID_MAX_LIMIT) {
		pr_warn_ratelimited("filter_pid: '%s' is not a pid (0 = every process)\n",
				    buf);
		return -EINVAL;
	}
	WRITE_ONCE(rdt_cur_filter.pid, pid);
	rdt_lean_update();
	return 0;
}

static void rdt_filter_dev_show(struct seq_file *m)
{
	u32 dev = READ_ONCE(rdt_cur_filter.dev);

	if (dev == RDT_NO_DEV)
		seq_puts(m, "-1\n");
	else
		seq_printf(m, "%u\n", dev);
}

static int rdt_filter_dev_store(const char *buf)
{
	u32 dev;

	if (!strcmp(buf, "-1")) {
		dev = RDT_NO_DEV;
	} else if (kstrtou32(buf, 10, &dev) || dev == RDT_NO_DEV) {
		pr_warn_ratelimited("filter_dev: '%s' is not a device index (-1 = every device)\n",
				    buf);
		return -EINVAL;
	}
	WRITE_ONCE(rdt_cur_filter.dev, dev);
	rdt_lean_update();
	return 0;
}

static void rdt_buffer_size_show(struct seq_file *m)
{
	seq_printf(m, "%lu\n", rdt_param_subbuf_size);
}

static void rdt_n_subbufs_show(struct seq_file *m)
{
	seq_printf(m, "%lu\n", rdt_param_n_subbufs);
}

static int rdt_geometry_store(const char *name, const char *buf, bool size)
{
	unsigned long v;

	if (kstrtoul(buf, 0, &v)) {
		pr_warn_ratelimited("%s: '%s' is not a number\n", name, buf);
		return -EINVAL;
	}
	if (READ_ONCE(rdt_enabled)) {
		pr_warn_ratelimited("%s: write 0 to enable first\n", name);
		return -EBUSY;
	}
	if (size ? rdt_check_geometry(v, rdt_param_n_subbufs) :
		   rdt_check_geometry(rdt_param_subbuf_size, v))
		return -EINVAL;
	return size ? rdt_reconfigure(v, rdt_param_n_subbufs) :
		      rdt_reconfigure(rdt_param_subbuf_size, v);
}

static int rdt_buffer_size_store(const char *buf)
{
	return rdt_geometry_store("buffer_size", buf, true);
}

static int rdt_n_subbufs_store(const char *buf)
{
	return rdt_geometry_store("n_subbufs", buf, false);
}

static void rdt_dropped_show(struct seq_file *m)
{
	struct rdt_trace *t = rdt_trace_locked();
	u64 total = 0, d;
	int cpu;

	/* No channel yet: nothing was ever lost. */
	for_each_possible_cpu(cpu) {
		d = t ? rdt_trace_dropped(t, cpu) : 0;
		total += d;
		seq_printf(m, "cpu%d %llu\n", cpu, d);
	}
	seq_printf(m, "total %llu\n", total);
}

static void rdt_version_show(struct seq_file *m)
{
	seq_printf(m, "abi %d.%d\nmodule %s\n", RDT_RELAY_ABI_MAJOR,
		   RDT_ABI_MINOR, RDT_VERSION);
}

/*
 * The clock records are stamped with and why: "clock tsc|ktime", "mode
 * auto|tsc|ktime", "reason ...", "tsc_khz N" (the kernel's calibration,
 * 0 if none: what a reader scales raw stamps by when it has no pairs
 * around them).  A mode is written while tracing is off.
 */
static void rdt_clock_show(struct seq_file *m)
{
	seq_printf(m, "clock %s\nmode %s\nreason %s\ntsc_khz %llu\n",
		   rdt_clk_name(), rdt_clk_modes[rdt_clk_get()],
		   rdt_clk_why(), rdt_clk_khz());
}

static int rdt_clock_store(const char *buf)
{
	enum rdt_clk_mode mode;
	int ret;

	if (rdt_clk_parse(buf, &mode))
		return -EINVAL;
	if (READ_ONCE(rdt_enabled)) {
		pr_warn_ratelimited("clock: write 0 to enable first\n");
		return -EBUSY;
	}
	ret = rdt_clk_set(mode);
	if (ret)
		pr_warn_ratelimited("clock: tsc: this machine has no TSC frequency\n");
	return ret;
}

static const struct rdt_attr rdt_attrs[] = {
	{ "enable", 0600, rdt_enable_show, rdt_enable_store },
	{ "events", 0600, rdt_events_show, rdt_events_store },
	{ "filter_pid", 0600, rdt_filter_pid_show, rdt_filter_pid_store },
	{ "filter_dev", 0600, rdt_filter_dev_show, rdt_filter_dev_store },
	{ "buffer_size", 0600, rdt_buffer_size_show, rdt_buffer_size_store },
	{ "n_subbufs", 0600, rdt_n_subbufs_show, rdt_n_subbufs_store },
	{ "dropped", 0400, rdt_dropped_show, NULL },
	{ "version", 0400, rdt_version_show, NULL },
	{ "clock", 0600, rdt_clock_show, rdt_clock_store },
};

static int rdt_attr_seq_show(struct seq_file *m, void *v)
{
	const struct rdt_attr *a = m->private;

	mutex_lock(&rdt_ctl_mutex);
	a->show(m);
	mutex_unlock(&rdt_ctl_mutex);
	return 0;
}

static int rdt_attr_open(struct inode *inode, struct file *file)
{
	return single_open(file, rdt_attr_seq_show, inode->i_private);
}

static ssize_t rdt_attr_write(struct file *file, const char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	const struct rdt_attr *a = ((struct seq_file *)file->private_data)->private;
	char buf[32];
	int ret;

	if (!a->store)
		return -EPERM;
	if (!count || count >= sizeof(buf)) {
		pr_warn_ratelimited("%s: write 1..%zu bytes\n", a->name,
				    sizeof(buf) - 1);
		return -EINVAL;
	}
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';

	mutex_lock(&rdt_ctl_mutex);
	ret = a->store(strim(buf));
	mutex_unlock(&rdt_ctl_mutex);
	return ret ? ret : count;
}

static const struct file_operations rdt_attr_fops = {
	.owner		= THIS_MODULE,
	.open		= rdt_attr_open,
	.read		= seq_read,
	.write		= rdt_attr_write,
	.llseek		= seq_lseek,
	.release	= single_release,
};

/* The channel is opened now only if tracing starts at load. */
int rdt_debugfs_init(bool open_channel)
{
	unsigned int i;
	int ret = 0;

	rdt_dir = debugfs_create_dir("rdmatrace", NULL);
	if (IS_ERR(rdt_dir)) {
		pr_err("cannot create debugfs directory rdmatrace (%ld): is debugfs enabled and not locked down?\n",
		       PTR_ERR(rdt_dir));
		return PTR_ERR(rdt_dir);
	}
	/* Without every control file the tracer could not be driven. */
	for (i = 0; i < ARRAY_SIZE(rdt_attrs); i++) {
		struct dentry *d;

		d = debugfs_create_file(rdt_attrs[i].name, rdt_attrs[i].mode,
					rdt_dir, (void *)&rdt_attrs[i],
					&rdt_attr_fops);
		if (IS_ERR(d)) {
			pr_err("cannot create debugfs file %s (%ld)\n",
			       rdt_attrs[i].name, PTR_ERR(d));
			debugfs_remove_recursive(rdt_dir);
			return PTR_ERR(d);
		}
	}

	if (open_channel) {
		mutex_lock(&rdt_ctl_mutex);
		ret = rdt_trace_alloc();
		mutex_unlock(&rdt_ctl_mutex);
		if (ret)
			debugfs_remove_recursive(rdt_dir);
	}
	return ret;
}

/* After every wrapper is gone for good. */
void rdt_debugfs_exit(void)
{
	struct rdt_trace *t;

	mutex_lock(&rdt_ctl_mutex);
	rdt_set_enabled(false);
	t = rdt_trace_locked();
	RCU_INIT_POINTER(rdt_cur_trace, NULL);
	mutex_unlock(&rdt_ctl_mutex);
	/* relay removes its files itself: close it before the directory. */
	rdt_trace_close(t);
	debugfs_remove_recursive(rdt_dir);
}
