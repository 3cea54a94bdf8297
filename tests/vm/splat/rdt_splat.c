// SPDX-License-Identifier: GPL-2.0
/*
 * A module that splats on purpose, to prove that tests/vm/run fails a run
 * whose guest kernel logged a warning even when the command succeeded.
 * With leak=1 it warns of nothing and leaks an object instead, which only
 * kmemleak's scan at the end of the run can find.  With race=1 one thread
 * increments a plain int while another reads it, for two seconds:
 * scripts/kcsan.sh's proof that KCSAN reports a race and that its sorting
 * finds it outside rdmatrace.
 */
#include <linux/module.h>
#include <linux/bug.h>
#include <linux/compiler.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/slab.h>
#include <linux/string.h>

static bool leak;
module_param(leak, bool, 0444);
MODULE_PARM_DESC(leak, "leak one object instead of warning");
static bool race;
module_param(race, bool, 0444);
MODULE_PARM_DESC(race, "race a writer and a reader on a plain int instead of warning");

static int rdt_splat_shared;
static int rdt_splat_sink;

/*
 * An unmarked read-modify-write against unmarked reads of a changing
 * value: what KCSAN reports in its default mode (it takes aligned plain
 * writes for atomic, so two writers alone would not do).
 */
static int rdt_splat_writer(void *arg)
{
	unsigned long end = jiffies + 2 * HZ;
	unsigned int i = 0;

	while (time_before(jiffies, end)) {
		rdt_splat_shared++;
		if (!(++i % 1024))
			cond_resched();
	}
	return 0;
}

static int rdt_splat_reader(void *arg)
{
	unsigned long end = jiffies + 2 * HZ;
	unsigned int i = 0;

	while (time_before(jiffies, end)) {
		rdt_splat_sink += rdt_splat_shared;
		if (!(++i % 1024))
			cond_resched();
	}
	return 0;
}

/* Waits out the threads' two seconds either way: they run module text. */
static int rdt_splat_race(void)
{
	struct task_struct *t;
	int err = 0;

	t = kthread_run(rdt_splat_writer, NULL, "rdt_splat_w");
	if (IS_ERR(t))
		return PTR_ERR(t);
	t = kthread_run(rdt_splat_reader, NULL, "rdt_splat_r");
	if (IS_ERR(t))
		err = PTR_ERR(t);
	msleep(2500);
	return err;
}

/*
 * kmalloc()'s frames below ours held the object's address, and that stack
 * outlives insmod: an exiting task's stack is cached for the next fork,
 * and kmemleak scans it, so a stale copy there can hide the leak until
 * some fork takes that stack (vm/testbed failed so, now and then).
 * Overwrite the dead area once the allocation returned.
 */
static noinline void rdt_splat_scrub(void)
{
	char buf[1536];

	memzero_explicit(buf, sizeof(buf));
}

/*
 * On the 7.2 debug kernel kmemleak did not report the leaked object at
 * all (two scans, 25 s later too) until objects of its size were freed
 * after it.  Most likely slab's per-CPU object arrays (sheaves, new since
 * 6.x), themselves allocated like any object and so scanned by kmemleak,
 * keep the address in the slot it was popped from.  Frees of the same
 * size write over those slots.  (A kmemleak blind spot on 7.2: a real
 * leak hides the same way until its slot is reused.)
 */
static noinline void rdt_splat_churn(void)
{
	void *v[64];
	int i;

	for (i = 0; i < 64; i++)
		v[i] = kmalloc(192, GFP_KERNEL);
	for (i = 0; i < 64; i++)
		kfree(v[i]);
	memzero_explicit(v, sizeof(v));
}

static int __init rdt_splat_init(void)
{
	void *p;

	if (race)
		return rdt_splat_race();
	if (!leak) {
		WARN(1, "rdt_splat: deliberate warning for the test bed's splat scan\n");
		return 0;
	}
	p = kmalloc(192, GFP_KERNEL);
	/* Keep the allocation: the compiler may not drop an unused one. */
	OPTIMIZER_HIDE_VAR(p);
	if (!p)
		return -ENOMEM;
	rdt_splat_scrub();
	rdt_splat_churn();
	return 0;
}

static void __exit rdt_splat_exit(void)
{
}

module_init(rdt_splat_init);
module_exit(rdt_splat_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("rdmatrace test bed: a deliberate kernel warning or leak");
