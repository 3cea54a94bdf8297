// SPDX-License-Identifier: GPL-2.0
/*
 * rdmatrace: verb arguments -> record bodies.  The data path's encoders
 * are inline (encode.h); here are their exported copies, which the KUnit
 * suites check field by field and the tracepoints use, the keyed hash of
 * kernel addresses, and the control path's encoders.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bits.h>
#include <linux/hash.h>
#include <linux/irqflags.h>
#include <linux/percpu.h>
#include <linux/random.h>
#include <linux/siphash.h>
#include <linux/string.h>

#include "rdt.h"
#include "encode.h"

static siphash_key_t rdt_hash_key __read_mostly;

void rdt_encode_init(void)
{
	get_random_bytes(&rdt_hash_key, sizeof(rdt_hash_key));
}

/*
 * Kernel consumers using the CQ API put a struct ib_cqe pointer in the
 * wr_id union (wr_cqe), and on devices that use virtual DMA addresses (rxe,
 * siw) a kernel MR's iova and a kernel QP's remote_addr are kernel virtual
 * addresses.  No kernel pointer may cross the ABI, so on kernel-owned
 * objects a value with bit 63 set (the kernel half of the address space on
 * x86-64, 4- or 5-level, and arm64) is replaced by a keyed hash, stable
 * for the module's lifetime (posts still match their completions) and
 * marked by the top 16 bits 0xfffe.  Smaller numbers and every userspace
 * value pass unchanged.
 */
u64 rdt_wr_id_hash(u64 wr_id)
{
	return (siphash_1u64(wr_id, &rdt_hash_key) & GENMASK_ULL(47, 0)) |
	       (0xfffeULL << 48);
}
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_wr_id_hash);

/*
 * A kernel ULP posts the same few hundred ib_cqe addresses over and over
 * (its request pool, 128 per queue for NVMe-oF), each one twice (post and
 * completion): a per-CPU direct-mapped cache of 256 (4 KiB) answers those
 * in ~40 instructions; a miss adds siphash's ~120 (bench: enabled_cqe).
 * Wrappers run in task, softirq and hardirq context, and an interrupt
 * between a slot's key and value would pair them wrongly: interrupts are
 * off for the lookup (they already are on the relay path).
 */
struct rdt_wr_id_cache {
	struct {
		u64	key;	/* 0: empty (bit 63 is set on every key) */
		u64	val;
	} slot[1 << RDT_WR_ID_CACHE_BITS];
};

static DEFINE_PER_CPU(struct rdt_wr_id_cache, rdt_wr_id_cache);

/* encode.h's rdt_wr_id() of a kernel address (bit 63 set) */
u64 rdt_wr_id_kernel(u64 wr_id)
{
	struct rdt_wr_id_cache *c;
	unsigned long flags;
	unsigned int i;
	u64 val;

	i = hash_64(wr_id, RDT_WR_ID_CACHE_BITS);
	local_irq_save(flags);
	c = this_cpu_ptr(&rdt_wr_id_cache);
	if (c->slot[i].key == wr_id) {
		val = c->slot[i].val;
	} else {
		val = rdt_wr_id_hash(wr_id);
		c->slot[i].key = wr_id;
		c->slot[i].val = val;
	}
	local_irq_restore(flags);
	return val;
}

u64 rdt_wr_id(u64 wr_id, bool user)
{
	return __rdt_wr_id(wr_id, user);
}
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_wr_id);

/*
 * The encoders for the KUnit suites and the tracepoints: encode.h's, with
 * the fields the caller set before (qpn, index, srq_id, srq) kept.
 */
void rdt_enc_send_wr(struct rdt_ev_post_send *ev, const struct ib_send_wr *wr,
		     bool user)
{
	__rdt_enc_send_wr(ev, wr, ev->qpn, ev->index, user);
}
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_enc_send_wr);

void rdt_enc_recv_wr(struct rdt_ev_post_recv *ev, const struct ib_recv_wr *wr,
		     bool user)
{
	__rdt_enc_recv_wr(ev, wr, ev->qpn, ev->srq_id, ev->srq, ev->index,
			  user);
}
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_enc_recv_wr);

void rdt_enc_wc(struct rdt_ev_poll_cq_wc *ev, const struct ib_wc *wc,
		bool user)
{
	__rdt_enc_wc(ev, wc, user);
}
EXPORT_SYMBOL_IF_RDT_KUNIT(rdt_enc_wc);

/*
 * name: the device's name as saved under rdt_dev_mutex; dev_name() may be
 * read only under the devices_rwsem that ib_core holds around add, remove
 * and rename, not when tracing goes on.
 */
void rdt_enc_device(struct rdt_ev_device *ev, struct ib_device *ibdev,
		    const char *name)
{
	strscpy_pad(ev->name, name, sizeof(ev->name));
	ev->node_guid = (__force u64)ibdev->node_guid;
	ev->node_type = ibdev->node_type;
	ev->phys_port_cnt = ibdev->phys_port_cnt;
	ev->driver_id = ibdev->ops.driver_id;
}
