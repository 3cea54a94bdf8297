// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites for rdmatrace.ko: record encoding, wrap/unwrap of a fake ops
 * table, filter logic, exact drop accounting on a real relay channel and
 * the data path's clock against ktime_get_ns().
 */
#include <kunit/test.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/hash.h>
#include <linux/module.h>
#include <linux/preempt.h>
#include <linux/relay.h>
#include <linux/slab.h>
#ifdef CONFIG_X86_TSC
#include <asm/cpufeature.h>
#include <asm/tsc.h>
#endif

#include "clock.h"
#include "rdt.h"

MODULE_IMPORT_NS(RDT_KUNIT_NS);

/* ---- rdt_encode ------------------------------------------------------- */

static void rdt_test_sizes(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sizeof(struct rdt_hdr), 32);
	KUNIT_EXPECT_EQ(test, sizeof(struct rdt_ev_subbuf) % 8, 0);
	KUNIT_EXPECT_EQ(test, sizeof(struct rdt_ev_comm) % 8, 0);
	KUNIT_EXPECT_EQ(test, sizeof(struct rdt_ev_device) % 8, 0);
	KUNIT_EXPECT_EQ(test, sizeof(struct rdt_ev_qp_create) % 8, 0);
	KUNIT_EXPECT_EQ(test, sizeof(struct rdt_ev_qp_modify) % 8, 0);
	KUNIT_EXPECT_EQ(test, sizeof(struct rdt_ev_mr) % 8, 0);
	KUNIT_EXPECT_EQ(test, sizeof(struct rdt_ev_post_send) % 8, 0);
	KUNIT_EXPECT_EQ(test, sizeof(struct rdt_ev_post_recv) % 8, 0);
	KUNIT_EXPECT_EQ(test, sizeof(struct rdt_ev_post_fail), 56);
	KUNIT_EXPECT_EQ(test, sizeof(struct rdt_ev_poll_cq_wc) % 8, 0);
	/* 20 kmod types, DEVICE_ADD (64) .. POST_FAIL (83, ABI 1.4). */
	KUNIT_EXPECT_EQ(test, RDT_EVMASK_ALL, (1ULL << 20) - 1);
	KUNIT_EXPECT_NE(test, RDT_EVMASK_ALL & RDT_EVMASK(RDT_EV_DEVICE_STATE),
			0);
	KUNIT_EXPECT_NE(test, RDT_EVMASK_ALL & RDT_EVMASK(RDT_EV_POST_FAIL), 0);
}

static void rdt_test_hdr(struct kunit *test)
{
	struct rdt_ev_poll_cq ev = {};

	rdt_fill_hdr(&ev.hdr, RDT_EV_POLL_CQ, sizeof(ev), 3, 123456789ULL, 1,
		     42, 43);
	KUNIT_EXPECT_EQ(test, ev.hdr.magic, RDT_REC_MAGIC);
	KUNIT_EXPECT_EQ(test, ev.hdr.version, RDT_RELAY_FORM);
	KUNIT_EXPECT_EQ(test, ev.hdr.source, RDT_SRC_KMOD);
	KUNIT_EXPECT_EQ(test, ev.hdr.type, RDT_EV_POLL_CQ);
	KUNIT_EXPECT_EQ(test, ev.hdr.size, sizeof(ev));
	KUNIT_EXPECT_EQ(test, ev.hdr.ts_ns, 123456789ULL);
	KUNIT_EXPECT_EQ(test, ev.hdr.dev, 3);
	KUNIT_EXPECT_EQ(test, ev.hdr.cpu, 1);
	KUNIT_EXPECT_EQ(test, ev.hdr.pid, 42);
	KUNIT_EXPECT_EQ(test, ev.hdr.tid, 43);
}

static void rdt_test_send_wr(struct kunit *test)
{
	struct ib_sge sg[2] = {
		{ .addr = 0x1000, .length = 100, .lkey = 1 },
		{ .addr = 0x2000, .length = 28, .lkey = 1 },
	};
	struct ib_rdma_wr rw = {
		.wr = {
			.wr_id = 77,
			.sg_list = sg,
			.num_sge = 2,
			.opcode = IB_WR_RDMA_WRITE_WITH_IMM,
			.send_flags = IB_SEND_SIGNALED | IB_SEND_FENCE,
			.ex.imm_data = cpu_to_be32(0xabcd),
		},
		.remote_addr = 0xdead0000,
		.rkey = 0x1234,
	};
	struct ib_atomic_wr aw = {
		.wr = { .opcode = IB_WR_ATOMIC_FETCH_AND_ADD },
		.remote_addr = 0xbeef0000,
		.rkey = 0x99,
	};
	struct ib_send_wr sw = {
		.opcode = IB_WR_SEND_WITH_INV,
		.ex.invalidate_rkey = 0x55,
	};
	struct rdt_ev_post_send ev;

	/* The data path encodes over an older record's bytes. */
	memset(&ev, 0xa5, sizeof(ev));
	rdt_enc_send_wr(&ev, &rw.wr, false);
	KUNIT_EXPECT_EQ(test, ev.ret, 0);
	KUNIT_EXPECT_EQ(test, ev.bad, 0);
	KUNIT_EXPECT_EQ(test, ev.wr_id, 77);
	KUNIT_EXPECT_EQ(test, ev.total_len, 128);
	KUNIT_EXPECT_EQ(test, ev.num_sge, 2);
	KUNIT_EXPECT_EQ(test, ev.opcode, IB_WR_RDMA_WRITE_WITH_IMM);
	KUNIT_EXPECT_EQ(test, ev.send_flags, IB_SEND_SIGNALED | IB_SEND_FENCE);
	KUNIT_EXPECT_EQ(test, ev.remote_addr, 0xdead0000);
	KUNIT_EXPECT_EQ(test, ev.rkey, 0x1234);
	KUNIT_EXPECT_EQ(test, ev.imm, (__force u32)cpu_to_be32(0xabcd));

	memset(&ev, 0xa5, sizeof(ev));
	rdt_enc_send_wr(&ev, &aw.wr, false);
	KUNIT_EXPECT_EQ(test, ev.remote_addr, 0xbeef0000);
	KUNIT_EXPECT_EQ(test, ev.rkey, 0x99);
	KUNIT_EXPECT_EQ(test, ev.imm, 0);
	KUNIT_EXPECT_EQ(test, ev.total_len, 0);
	KUNIT_EXPECT_EQ(test, ev.num_sge, 0);
	KUNIT_EXPECT_EQ(test, ev.send_flags, 0);

	memset(&ev, 0xa5, sizeof(ev));
	rdt_enc_send_wr(&ev, &sw, false);
	KUNIT_EXPECT_EQ(test, ev.remote_addr, 0);
	KUNIT_EXPECT_EQ(test, ev.rkey, 0);
	KUNIT_EXPECT_EQ(test, ev.imm, 0x55);
	KUNIT_EXPECT_EQ(test, ev.opcode, IB_WR_SEND_WITH_INV);
}

static void rdt_test_recv_wc(struct kunit *test)
{
	struct ib_sge sg = { .length = 4096 };
	struct ib_recv_wr rw = { .wr_id = 5, .sg_list = &sg, .num_sge = 1 };
	struct ib_qp qp = { .qp_num = 0x11 };
	struct ib_wc wc = {
		.wr_id = 9,
		.status = IB_WC_REM_ACCESS_ERR,
		.opcode = IB_WC_RECV_RDMA_WITH_IMM,
		.byte_len = 321,
		.qp = &qp,
		.src_qp = 0x22,
		.wc_flags = IB_WC_WITH_IMM,
		.ex.imm_data = cpu_to_be32(7),
	};
	struct rdt_ev_post_recv rv;
	struct rdt_ev_poll_cq_wc ev;

	memset(&rv, 0xa5, sizeof(rv));
	rdt_enc_recv_wr(&rv, &rw, true);
	KUNIT_EXPECT_EQ(test, rv.wr_id, 5);
	KUNIT_EXPECT_EQ(test, rv.total_len, 4096);
	KUNIT_EXPECT_EQ(test, rv.num_sge, 1);
	KUNIT_EXPECT_EQ(test, rv.ret, 0);
	KUNIT_EXPECT_EQ(test, rv.bad, 0);
	KUNIT_EXPECT_EQ(test, rv.pad0, 0);
	KUNIT_EXPECT_EQ(test, rv.pad1, 0);

	memset(&ev, 0xa5, sizeof(ev));
	rdt_enc_wc(&ev, &wc, true);
	KUNIT_EXPECT_EQ(test, ev.wc_flags, IB_WC_WITH_IMM);
	KUNIT_EXPECT_EQ(test, ev.vendor_err, 0);
	KUNIT_EXPECT_EQ(test, ev.wr_id, 9);
	KUNIT_EXPECT_EQ(test, ev.status, IB_WC_REM_ACCESS_ERR);
	KUNIT_EXPECT_EQ(test, ev.opcode, IB_WC_RECV_RDMA_WITH_IMM);
	KUNIT_EXPECT_EQ(test, ev.byte_len, 321);
	KUNIT_EXPECT_EQ(test, ev.qpn, 0x11);
	KUNIT_EXPECT_EQ(test, ev.src_qp, 0x22);
	KUNIT_EXPECT_EQ(test, ev.imm, (__force u32)cpu_to_be32(7));

	wc.qp = NULL;
	wc.wc_flags = IB_WC_WITH_INVALIDATE;
	wc.ex.invalidate_rkey = 0x77;
	rdt_enc_wc(&ev, &wc, true);
	KUNIT_EXPECT_EQ(test, ev.qpn, 0);
	KUNIT_EXPECT_EQ(test, ev.imm, 0x77);
}

static void rdt_test_wr_id(struct kunit *test)
{
	u64 ptr = (u64)(unsigned long)test;
	u64 h = rdt_wr_id(ptr, false);

	/* Kernel pointers on kernel queues never cross the ABI. */
	KUNIT_EXPECT_NE(test, h, ptr);
	KUNIT_EXPECT_EQ(test, h >> 48, 0xfffe);
	KUNIT_EXPECT_EQ(test, rdt_wr_id(ptr, false), h);
	KUNIT_EXPECT_NE(test, rdt_wr_id(ptr + 64, false), h);
	/* Numbers, and anything from userspace, pass unchanged. */
	KUNIT_EXPECT_EQ(test, rdt_wr_id(0x5e000001, false), 0x5e000001);
	KUNIT_EXPECT_EQ(test, rdt_wr_id(ptr, true), ptr);
}

/*
 * The per-CPU cache answers as siphash does: a pool of requests larger
 * than the cache (slots shared and evicted) posted and completed over and
 * over.
 */
static void rdt_test_wr_id_cache(struct kunit *test)
{
	const unsigned int pool = 3 << RDT_WR_ID_CACHE_BITS;
	u64 base = (u64)(uintptr_t)test, p;
	unsigned int i;

	for (i = 0; i < 3 * pool; i++) {
		p = base + (i % pool) * 192;
		KUNIT_EXPECT_EQ(test, rdt_wr_id(p, false), rdt_wr_id_hash(p));
	}
	/* Two values in one slot take turns in it. */
	for (i = 1; i < 1u << 16; i++)
		if (hash_64(base + i * 64, RDT_WR_ID_CACHE_BITS) ==
		    hash_64(base, RDT_WR_ID_CACHE_BITS))
			break;
	KUNIT_ASSERT_LT(test, i, 1u << 16);
	p = base + i * 64;
	KUNIT_EXPECT_EQ(test, rdt_wr_id(base, false), rdt_wr_id_hash(base));
	KUNIT_EXPECT_EQ(test, rdt_wr_id(p, false), rdt_wr_id_hash(p));
	KUNIT_EXPECT_EQ(test, rdt_wr_id(base, false), rdt_wr_id_hash(base));
	KUNIT_EXPECT_NE(test, rdt_wr_id_hash(base), rdt_wr_id_hash(p));
}

static struct kunit_case rdt_encode_cases[] = {
	KUNIT_CASE(rdt_test_sizes),
	KUNIT_CASE(rdt_test_hdr),
	KUNIT_CASE(rdt_test_send_wr),
	KUNIT_CASE(rdt_test_recv_wc),
	KUNIT_CASE(rdt_test_wr_id),
	KUNIT_CASE(rdt_test_wr_id_cache),
	{}
};

static struct kunit_suite rdt_encode_suite = {
	.name = "rdmatrace_encode",
	.test_cases = rdt_encode_cases,
};

/* ---- rdt_wrap: a fake ops table ------------------------------------- */

static int fake_post_send(struct ib_qp *qp, const struct ib_send_wr *wr,
			  const struct ib_send_wr **bad)
{
	return 1;
}

static int fake_poll_cq(struct ib_cq *cq, int n, struct ib_wc *wc)
{
	return 2;
}

static int fake_dereg_mr(struct ib_mr *mr, struct ib_udata *udata)
{
	return 3;
}

static int wrap_post_send(struct ib_qp *qp, const struct ib_send_wr *wr,
			  const struct ib_send_wr **bad)
{
	return 11;
}

static int wrap_poll_cq(struct ib_cq *cq, int n, struct ib_wc *wc)
{
	return 12;
}

static int wrap_dereg_mr(struct ib_mr *mr, struct ib_udata *udata)
{
	return 13;
}

static int wrap_alloc_pd(struct ib_pd *pd, struct ib_udata *udata)
{
	return 14;
}

static int other_poll_cq(struct ib_cq *cq, int n, struct ib_wc *wc)
{
	return 22;
}

struct rdt_fake {
	rdt_ops_t live, before, saved, saved2;
	rdt_ops_t wrappers;
};

static struct rdt_fake *rdt_fake_new(struct kunit *test)
{
	struct rdt_fake *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, f);
	/* alloc_pd stays NULL in the device: it must never be wrapped. */
	f->live.post_send = fake_post_send;
	f->live.poll_cq = fake_poll_cq;
	f->live.dereg_mr = fake_dereg_mr;
	f->before = f->live;
	f->wrappers.post_send = wrap_post_send;
	f->wrappers.poll_cq = wrap_poll_cq;
	f->wrappers.dereg_mr = wrap_dereg_mr;
	f->wrappers.alloc_pd = wrap_alloc_pd;
	return f;
}

static void rdt_test_wrap_null_rule(struct kunit *test)
{
	struct rdt_fake *f = rdt_fake_new(test);
	unsigned long mask;

	mask = rdt_ops_save(&f->live, &f->saved, &f->wrappers, rdt_ops,
			    rdt_nr_ops);
	KUNIT_EXPECT_EQ(test, hweight_long(mask), 3);
	KUNIT_EXPECT_EQ(test, rdt_ops_install(&f->live, &f->saved,
					      &f->wrappers, rdt_ops,
					      rdt_nr_ops, &mask), 3);
	KUNIT_EXPECT_EQ(test, hweight_long(mask), 3);
	KUNIT_EXPECT_PTR_EQ(test, f->live.post_send, &wrap_post_send);
	KUNIT_EXPECT_PTR_EQ(test, f->live.poll_cq, &wrap_poll_cq);
	KUNIT_EXPECT_PTR_EQ(test, f->live.dereg_mr, &wrap_dereg_mr);
	KUNIT_EXPECT_NULL(test, f->live.alloc_pd);
	KUNIT_EXPECT_NULL(test, f->live.post_recv);
	KUNIT_EXPECT_PTR_EQ(test, f->saved.post_send, &fake_post_send);
	KUNIT_EXPECT_PTR_EQ(test, f->saved.poll_cq, &fake_poll_cq);
	KUNIT_EXPECT_NULL(test, f->saved.alloc_pd);
}

static void rdt_test_wrap_roundtrip(struct kunit *test)
{
	struct rdt_fake *f = rdt_fake_new(test);
	unsigned long mask, foreign;

	mask = rdt_ops_save(&f->live, &f->saved, &f->wrappers, rdt_ops,
			    rdt_nr_ops);
	rdt_ops_install(&f->live, &f->saved, &f->wrappers, rdt_ops, rdt_nr_ops,
			&mask);
	KUNIT_EXPECT_EQ(test, rdt_ops_uninstall(&f->live, &f->saved,
						&f->wrappers, rdt_ops,
						rdt_nr_ops, mask, &foreign), 3);
	KUNIT_EXPECT_EQ(test, foreign, 0ul);
	KUNIT_EXPECT_EQ(test, memcmp(&f->live, &f->before, sizeof(f->live)), 0);
}

static void rdt_test_wrap_double(struct kunit *test)
{
	struct rdt_fake *f = rdt_fake_new(test);
	unsigned long mask, mask2;

	mask = rdt_ops_save(&f->live, &f->saved, &f->wrappers, rdt_ops,
			    rdt_nr_ops);
	rdt_ops_install(&f->live, &f->saved, &f->wrappers, rdt_ops, rdt_nr_ops,
			&mask);
	/* A second wrap must not take our wrappers for originals. */
	mask2 = rdt_ops_save(&f->live, &f->saved2, &f->wrappers, rdt_ops,
			     rdt_nr_ops);
	KUNIT_EXPECT_EQ(test, mask2, 0);
	KUNIT_EXPECT_NULL(test, f->saved2.post_send);
	KUNIT_EXPECT_EQ(test, rdt_ops_install(&f->live, &f->saved2,
					      &f->wrappers, rdt_ops,
					      rdt_nr_ops, &mask2), 0);
	KUNIT_EXPECT_PTR_EQ(test, f->live.post_send, &wrap_post_send);
	KUNIT_EXPECT_PTR_EQ(test, f->saved.post_send, &fake_post_send);
}

static void rdt_test_unwrap_changed(struct kunit *test)
{
	struct rdt_fake *f = rdt_fake_new(test);
	unsigned long mask, foreign;

	mask = rdt_ops_save(&f->live, &f->saved, &f->wrappers, rdt_ops,
			    rdt_nr_ops);
	rdt_ops_install(&f->live, &f->saved, &f->wrappers, rdt_ops, rdt_nr_ops,
			&mask);
	f->live.poll_cq = other_poll_cq;	/* someone else wrapped us */
	KUNIT_EXPECT_EQ(test, rdt_ops_uninstall(&f->live, &f->saved,
						&f->wrappers, rdt_ops,
						rdt_nr_ops, mask, &foreign), 2);
	/* Named by its bit: the op that still runs our wrapper. */
	KUNIT_ASSERT_EQ(test, hweight_long(foreign), 1);
	KUNIT_EXPECT_STREQ(test, rdt_ops[__ffs(foreign)].name, "poll_cq");
	KUNIT_EXPECT_PTR_EQ(test, f->live.poll_cq, &other_poll_cq);
	KUNIT_EXPECT_PTR_EQ(test, f->live.post_send, &fake_post_send);
	KUNIT_EXPECT_PTR_EQ(test, f->live.dereg_mr, &fake_dereg_mr);
}

/* Changed between save and install: left alone, as uninstall would. */
static void rdt_test_install_changed(struct kunit *test)
{
	struct rdt_fake *f = rdt_fake_new(test);
	unsigned long mask, foreign;

	mask = rdt_ops_save(&f->live, &f->saved, &f->wrappers, rdt_ops,
			    rdt_nr_ops);
	f->live.poll_cq = other_poll_cq;
	KUNIT_EXPECT_EQ(test, rdt_ops_install(&f->live, &f->saved,
					      &f->wrappers, rdt_ops,
					      rdt_nr_ops, &mask), 2);
	KUNIT_EXPECT_EQ(test, hweight_long(mask), 2);
	KUNIT_EXPECT_PTR_EQ(test, f->live.poll_cq, &other_poll_cq);
	KUNIT_EXPECT_PTR_EQ(test, f->live.post_send, &wrap_post_send);
	KUNIT_EXPECT_EQ(test, rdt_ops_uninstall(&f->live, &f->saved,
						&f->wrappers, rdt_ops,
						rdt_nr_ops, mask, &foreign), 2);
	KUNIT_EXPECT_EQ(test, foreign, 0ul);
	KUNIT_EXPECT_PTR_EQ(test, f->live.poll_cq, &other_poll_cq);
	KUNIT_EXPECT_PTR_EQ(test, f->live.post_send, &fake_post_send);
}

static void rdt_test_ops_table(struct kunit *test)
{
	static const char * const want[] = {
		"post_send", "post_recv", "post_srq_recv", "poll_cq",
		"req_notify_cq", "alloc_pd", "dealloc_pd", "create_cq",
		"destroy_cq", "create_qp", "modify_qp", "destroy_qp",
		"reg_user_mr", "get_dma_mr", "alloc_mr", "dereg_mr",
	};
	unsigned int i;

	KUNIT_ASSERT_EQ(test, rdt_nr_ops, ARRAY_SIZE(want));
	for (i = 0; i < rdt_nr_ops; i++) {
		KUNIT_EXPECT_STREQ(test, rdt_ops[i].name, want[i]);
		KUNIT_EXPECT_NE(test, rdt_ops[i].off,
				offsetof(rdt_ops_t, dealloc_driver));
	}
}

static struct kunit_case rdt_wrap_cases[] = {
	KUNIT_CASE(rdt_test_wrap_null_rule),
	KUNIT_CASE(rdt_test_wrap_roundtrip),
	KUNIT_CASE(rdt_test_wrap_double),
	KUNIT_CASE(rdt_test_unwrap_changed),
	KUNIT_CASE(rdt_test_install_changed),
	KUNIT_CASE(rdt_test_ops_table),
	{}
};

static struct kunit_suite rdt_wrap_suite = {
	.name = "rdmatrace_wrap",
	.test_cases = rdt_wrap_cases,
};

/* ---- rdt_filter ------------------------------------------------------- */

static void rdt_test_filter(struct kunit *test)
{
	struct rdt_filter f = { .evmask = RDT_EVMASK_ALL, .dev = RDT_NO_DEV };

	KUNIT_EXPECT_TRUE(test, rdt_filter_pass(&f, RDT_EV_POST_SEND, 0, 9, true));
	KUNIT_EXPECT_TRUE(test, rdt_filter_pass(&f, RDT_EV_POLL_CQ_WC, 3, 0, false));

	f.evmask = RDT_EVMASK(RDT_EV_POST_RECV);
	KUNIT_EXPECT_FALSE(test, rdt_filter_pass(&f, RDT_EV_POST_SEND, 0, 9, true));
	KUNIT_EXPECT_TRUE(test, rdt_filter_pass(&f, RDT_EV_POST_RECV, 0, 9, true));
	/* Bookkeeping is never filtered. */
	KUNIT_EXPECT_TRUE(test, rdt_filter_pass(&f, RDT_EV_COMM, RDT_NO_DEV, 9, true));

	f.evmask = RDT_EVMASK_ALL;
	f.dev = 2;
	KUNIT_EXPECT_FALSE(test, rdt_filter_pass(&f, RDT_EV_POST_SEND, 1, 9, true));
	KUNIT_EXPECT_TRUE(test, rdt_filter_pass(&f, RDT_EV_POST_SEND, 2, 9, true));
	KUNIT_EXPECT_FALSE(test, rdt_filter_pass(&f, RDT_EV_DEVICE_ADD, 1, 9, true));

	f.dev = RDT_NO_DEV;
	f.pid = 100;
	KUNIT_EXPECT_FALSE(test, rdt_filter_pass(&f, RDT_EV_POST_SEND, 0, 9, true));
	KUNIT_EXPECT_TRUE(test, rdt_filter_pass(&f, RDT_EV_POST_SEND, 0, 100, true));
	/* No pid outside task context: a pid filter refuses. */
	KUNIT_EXPECT_FALSE(test, rdt_filter_pass(&f, RDT_EV_POLL_CQ_WC, 0, 0, false));
	/* Device events come from kworkers: they pass a pid filter. */
	KUNIT_EXPECT_TRUE(test, rdt_filter_pass(&f, RDT_EV_DEVICE_REMOVE, 0, 9, true));
}

/*
 * The lean wrappers' mask: exactly the verbs whose record needs nothing
 * of the full wrapper.  The inputs are set directly (not through
 * rdt_set_enabled(), which installs wrappers) and put back after.
 */
static void rdt_test_lean(struct kunit *test)
{
	struct rdt_filter saved = rdt_cur_filter;
	bool on = READ_ONCE(rdt_enabled);
	int users = READ_ONCE(rdt_tp_users);
	bool tsc = READ_ONCE(rdt_clk_tsc);
	const u32 poll = RDT_LEAN_POLL | RDT_LEAN_WC | RDT_LEAN_POLL_SUM;
	const u32 all = RDT_LEAN_ON | RDT_LEAN_SEND | RDT_LEAN_RECV | poll;

	WRITE_ONCE(rdt_tp_users, 0);
	WRITE_ONCE(rdt_clk_tsc, true);
	rdt_cur_filter.evmask = RDT_EVMASK_ALL;
	rdt_cur_filter.pid = 0;
	rdt_cur_filter.dev = RDT_NO_DEV;
	WRITE_ONCE(rdt_enabled, false);
	rdt_lean_update();
	KUNIT_EXPECT_EQ(test, READ_ONCE(rdt_lean), 0);
	WRITE_ONCE(rdt_enabled, true);
	rdt_lean_update();
	KUNIT_EXPECT_EQ(test, READ_ONCE(rdt_lean), all);

	rdt_cur_filter.evmask = RDT_EVMASK_ALL & ~RDT_EVMASK(RDT_EV_POST_SEND);
	rdt_lean_update();
	KUNIT_EXPECT_EQ(test, READ_ONCE(rdt_lean), RDT_LEAN_ON | RDT_LEAN_RECV | poll);
	rdt_cur_filter.evmask = RDT_EVMASK(RDT_EV_POST_SEND);
	rdt_lean_update();
	KUNIT_EXPECT_EQ(test, READ_ONCE(rdt_lean),
			RDT_LEAN_ON | RDT_LEAN_SEND | RDT_LEAN_POLL);
	/* A poll's records, each on its own: the lean poll writes only those. */
	rdt_cur_filter.evmask = RDT_EVMASK(RDT_EV_POLL_CQ_WC);
	rdt_lean_update();
	KUNIT_EXPECT_EQ(test, READ_ONCE(rdt_lean),
			RDT_LEAN_ON | RDT_LEAN_POLL | RDT_LEAN_WC);
	rdt_cur_filter.evmask = RDT_EVMASK(RDT_EV_POLL_CQ);
	rdt_lean_update();
	KUNIT_EXPECT_EQ(test, READ_ONCE(rdt_lean),
			RDT_LEAN_ON | RDT_LEAN_POLL | RDT_LEAN_POLL_SUM);
	rdt_cur_filter.evmask = RDT_EVMASK_ALL;

	/* ktime_get_ns() stamps: the lean wrappers built for them instead. */
	WRITE_ONCE(rdt_clk_tsc, false);
	rdt_lean_update();
	KUNIT_EXPECT_EQ(test, READ_ONCE(rdt_lean),
			RDT_LEAN_ON | RDT_LEAN_SEND_KT | RDT_LEAN_RECV_KT |
			RDT_LEAN_POLL_KT | RDT_LEAN_WC | RDT_LEAN_POLL_SUM);
	WRITE_ONCE(rdt_clk_tsc, true);

	rdt_cur_filter.pid = 7;
	rdt_lean_update();
	KUNIT_EXPECT_EQ(test, READ_ONCE(rdt_lean), RDT_LEAN_ON);
	rdt_cur_filter.pid = 0;
	rdt_cur_filter.dev = 1;
	rdt_lean_update();
	KUNIT_EXPECT_EQ(test, READ_ONCE(rdt_lean), RDT_LEAN_ON);
	rdt_cur_filter.dev = RDT_NO_DEV;
	WRITE_ONCE(rdt_tp_users, 1);
	rdt_lean_update();
	KUNIT_EXPECT_EQ(test, READ_ONCE(rdt_lean), RDT_LEAN_ON);

	WRITE_ONCE(rdt_tp_users, users);
	WRITE_ONCE(rdt_clk_tsc, tsc);
	rdt_cur_filter = saved;
	WRITE_ONCE(rdt_enabled, on);
	rdt_lean_update();
}

static struct kunit_case rdt_filter_cases[] = {
	KUNIT_CASE(rdt_test_filter),
	KUNIT_CASE(rdt_test_lean),
	{}
};

static struct kunit_suite rdt_filter_suite = {
	.name = "rdmatrace_filter",
	.test_cases = rdt_filter_cases,
};

/* ---- rdt_restrack: creations parked until their id is given ---------- */

/*
 * Objects restrack never validated (an add not yet run, or failed): the
 * module's work item and resolves leave them parked, and take them only
 * by object or by device.  Devices 90-92 are no real device's index.
 */
static void rdt_test_parked(struct kunit *test)
{
	static struct ib_cq cq[RDT_PARKED + 1];
	static struct ib_pd pd;
	struct rdt_ev_cq ev = { .cqe = 7 };
	struct rdt_ev_pd pev = { .local_dma_lkey = 3 };
	struct rdt_parked p;
	unsigned int i, n;

	/* A device not opened parks nothing. */
	KUNIT_EXPECT_FALSE(test, rdt_restrack_park(&cq[0], RDT_EV_CQ_CREATE,
						   90, &ev));
	for (i = 90; i <= 92; i++)
		rdt_restrack_open(i);
	for (i = 0; i < RDT_PARKED; i++) {
		bool parked;

		ev.cqe = 7 + i;
		parked = rdt_restrack_park(&cq[i], RDT_EV_CQ_CREATE,
					   90 + (i & 1), &ev);
		KUNIT_ASSERT_TRUE(test, parked);
	}
	/* Full: the wrapper emits at once instead. */
	KUNIT_EXPECT_FALSE(test, rdt_restrack_park(&cq[RDT_PARKED],
						   RDT_EV_CQ_CREATE, 92, &ev));
	/* A resolve leaves what has no id yet. */
	rdt_restrack_resolve();
	/* By object: its own fields and creator, and only once. */
	KUNIT_ASSERT_TRUE(test, rdt_restrack_take(&cq[5], 0, &p));
	KUNIT_EXPECT_PTR_EQ(test, p.obj, (void *)&cq[5]);
	KUNIT_EXPECT_EQ(test, p.dev, 91U);
	KUNIT_EXPECT_EQ(test, p.type, RDT_EV_CQ_CREATE);
	KUNIT_EXPECT_EQ(test, p.ev.cq.cqe, 12U);
	KUNIT_EXPECT_EQ(test, p.who.tid, (u32)task_pid_nr(current));
	KUNIT_EXPECT_STREQ(test, p.who.comm, current->comm);
	KUNIT_EXPECT_FALSE(test, rdt_restrack_take(&cq[5], 0, &p));
	/* The freed slot parks the next one. */
	KUNIT_EXPECT_TRUE(test, rdt_restrack_park(&pd, RDT_EV_PD_ALLOC, 92,
						  &pev));
	/* By device: that device's, every one, no other. */
	for (n = 0; rdt_restrack_take(NULL, 91, &p); n++)
		KUNIT_EXPECT_EQ(test, p.dev, 91U);
	KUNIT_EXPECT_EQ(test, n, RDT_PARKED / 2 - 1);
	/* A closed device: emitted (id 0), none left, none parks again. */
	rdt_restrack_close(90);
	KUNIT_EXPECT_FALSE(test, rdt_restrack_take(NULL, 90, &p));
	KUNIT_EXPECT_FALSE(test, rdt_restrack_park(&cq[0], RDT_EV_CQ_CREATE,
						   90, &ev));
	KUNIT_ASSERT_TRUE(test, rdt_restrack_take(NULL, 92, &p));
	KUNIT_EXPECT_EQ(test, p.type, RDT_EV_PD_ALLOC);
	KUNIT_EXPECT_EQ(test, p.ev.pd.local_dma_lkey, 3U);
	KUNIT_EXPECT_FALSE(test, rdt_restrack_take(&pd, 0, &p));
	for (i = 91; i <= 92; i++)
		rdt_restrack_close(i);
}

static struct kunit_case rdt_restrack_cases[] = {
	KUNIT_CASE(rdt_test_parked),
	{}
};

static struct kunit_suite rdt_restrack_suite = {
	.name = "rdmatrace_restrack",
	.test_cases = rdt_restrack_cases,
};

/* ---- rdt_drops: a real relay channel in a private directory ---------- */

#define DROP_SUBBUF	4096
#define DROP_NSUB	3
#define DROP_N		500

static void rdt_test_drops(struct kunit *test)
{
	const size_t rec = sizeof(struct rdt_ev_post_recv);
	const size_t per = (DROP_SUBBUF - sizeof(struct rdt_ev_subbuf) -
			    sizeof(struct rdt_ev_comm)) / rec;
	struct rdt_ev_post_recv ev = {};
	struct rdt_ev_subbuf *sb;
	struct rchan_buf *buf;
	struct rdt_trace *t;
	unsigned int i, ok = 0, nospc = 0;
	enum rdt_clk_mode old = rdt_clk_get();
	struct dentry *dir;
	u64 dropped = 0;
	int cpu;

	/*
	 * ktime stamps: with the TSC the channel's first sub-buffer would
	 * also hold a clock pair (RDT_EV_CLOCK), and one record fewer.
	 */
	KUNIT_ASSERT_EQ(test, rdt_clk_set(RDT_CLK_KTIME), 0);
	dir = debugfs_create_dir("rdmatrace_kunit", NULL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(dir));
	t = rdt_trace_open(dir, DROP_SUBBUF, DROP_NSUB);
	if (IS_ERR(t))
		debugfs_remove(dir);
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));

	/* One CPU, so per-CPU accounting is exact and predictable. */
	preempt_disable();
	cpu = smp_processor_id();
	for (i = 0; i < DROP_N; i++) {
		ev.index = i;
		if (rdt_trace_write(t, &ev, RDT_EV_POST_RECV, rec, 0, i))
			nospc++;
		else
			ok++;
	}
	preempt_enable();

	/*
	 * All sub-buffers but one are used (the last stays free for
	 * relay's sake, see rdt_subbuf_start()), each: SUBBUF header, COMM,
	 * then records.
	 */
	KUNIT_EXPECT_EQ(test, ok, (DROP_NSUB - 1) * per);
	KUNIT_EXPECT_EQ(test, nospc, DROP_N - (DROP_NSUB - 1) * per);
	KUNIT_EXPECT_EQ(test, rdt_trace_dropped(t, cpu), nospc);

	buf = *per_cpu_ptr(t->chan->buf, cpu);
	sb = buf->start;
	KUNIT_EXPECT_EQ(test, sb->hdr.type, RDT_EV_SUBBUF);
	KUNIT_EXPECT_EQ(test, sb->seq, 0);
	KUNIT_EXPECT_EQ(test, sb->lost_total, 0);
	sb = buf->start + DROP_SUBBUF;
	KUNIT_EXPECT_EQ(test, sb->hdr.type, RDT_EV_SUBBUF);
	KUNIT_EXPECT_EQ(test, sb->seq, 1);
	/*
	 * The free one: a header a racing reader drops, and padding that
	 * keeps such a reader from reading past it.
	 */
	sb = buf->start + 2 * DROP_SUBBUF;
	KUNIT_EXPECT_EQ(test, sb->hdr.magic, RDT_REC_MAGIC);
	KUNIT_EXPECT_EQ(test, sb->hdr.type, RDT_EV_SUBBUF);
	KUNIT_EXPECT_EQ(test, sb->seq, RDT_SUBBUF_SEQ_UNUSED);
	KUNIT_EXPECT_EQ(test, buf->padding[2], DROP_SUBBUF - sizeof(*sb));

	/* A reader frees a sub-buffer: the next one carries the loss. */
	relay_subbufs_consumed(t->chan, cpu, 1);
	preempt_disable();
	KUNIT_EXPECT_EQ(test, rdt_trace_write(t, &ev, RDT_EV_POST_RECV, rec,
					      0, 0), 0);
	dropped = rdt_trace_dropped(t, smp_processor_id());
	buf = *per_cpu_ptr(t->chan->buf, smp_processor_id());
	preempt_enable();
	if (buf == *per_cpu_ptr(t->chan->buf, cpu)) {
		sb = buf->start + 2 * DROP_SUBBUF;
		KUNIT_EXPECT_EQ(test, sb->hdr.type, RDT_EV_SUBBUF);
		KUNIT_EXPECT_EQ(test, sb->seq, 2);
		KUNIT_EXPECT_EQ(test, sb->lost_total, dropped);
		KUNIT_EXPECT_EQ(test, dropped, nospc);
		/* Sub-buffer 0 is the free one now: its old header stays. */
		KUNIT_EXPECT_EQ(test, buf->padding[0],
				DROP_SUBBUF - sizeof(*sb));
		KUNIT_EXPECT_EQ(test, ((struct rdt_ev_subbuf *)buf->start)->seq, 0);
	}
	rdt_trace_close(t);
	debugfs_remove(dir);
	rdt_clk_set(old);
}

/*
 * rdt_fast_forget(): the words that lead into a trace's CPUs are cleared,
 * tagged or not, those of another trace kept, and every word for NULL.
 * The words are set here as the general path arms them, only while
 * tracing is off (no wrapper is in an ops table to read them), and put
 * back after.
 */
static void rdt_test_fast_forget(struct kunit *test)
{
	struct rdt_trace a = {}, b = {};
	unsigned long *saved;
	int cpu;

	if (READ_ONCE(rdt_enabled))
		kunit_skip(test, "tracing is on: its data path reads the words");
	saved = kunit_kcalloc(test, nr_cpu_ids, sizeof(*saved), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, saved);
	a.cpu = alloc_percpu(struct rdt_cpu);
	b.cpu = alloc_percpu(struct rdt_cpu);
	if (!a.cpu || !b.cpu) {
		free_percpu(a.cpu);
		free_percpu(b.cpu);
		KUNIT_FAIL(test, "alloc_percpu");
		return;
	}
	for_each_possible_cpu(cpu) {
		saved[cpu] = per_cpu(rdt_fast_cpu, cpu);
		per_cpu(rdt_fast_cpu, cpu) =
			(unsigned long)per_cpu_ptr(a.cpu, cpu) |
			(cpu & 1 ? RDT_FAST_RAW : 0);
	}
	rdt_fast_forget(&b);
	for_each_possible_cpu(cpu)
		KUNIT_EXPECT_EQ(test, per_cpu(rdt_fast_cpu, cpu) & ~RDT_FAST_RAW,
				(unsigned long)per_cpu_ptr(a.cpu, cpu));
	rdt_fast_forget(&a);
	for_each_possible_cpu(cpu)
		KUNIT_EXPECT_EQ(test, per_cpu(rdt_fast_cpu, cpu), 0UL);
	for_each_possible_cpu(cpu)
		per_cpu(rdt_fast_cpu, cpu) =
			(unsigned long)per_cpu_ptr(b.cpu, cpu) | RDT_FAST_RAW;
	rdt_fast_forget(NULL);
	for_each_possible_cpu(cpu) {
		KUNIT_EXPECT_EQ(test, per_cpu(rdt_fast_cpu, cpu), 0UL);
		per_cpu(rdt_fast_cpu, cpu) = saved[cpu];
	}
	free_percpu(a.cpu);
	free_percpu(b.cpu);
}

static struct kunit_case rdt_drop_cases[] = {
	KUNIT_CASE(rdt_test_drops),
	KUNIT_CASE(rdt_test_fast_forget),
	{}
};

static struct kunit_suite rdt_drop_suite = {
	.name = "rdmatrace_drops",
	.test_cases = rdt_drop_cases,
};

/* ---- rdt_stamp: the data path's stamps ---------------------------------- */

/*
 * With the TSC, a stamp is the TSC itself, flagged raw: between two TSC
 * reads around it, on this CPU.  With ktime, ktime_get_ns() itself.  The
 * conversion to CLOCK_MONOTONIC is the reader's (tests/lib/relay-clock.test)
 * and the whole chain is held to ktime_get_ns() around each post by
 * tests/kmod/clock.test.
 */
static void rdt_test_clock_tsc(struct kunit *test)
{
	enum rdt_clk_mode old = rdt_clk_get();
	u64 t0, a, t1, b;
	unsigned long flags;
	int i;

	if (rdt_clk_set(RDT_CLK_TSC))
		kunit_skip(test, "no TSC frequency on this machine");
	KUNIT_EXPECT_STREQ(test, rdt_clk_name(), "tsc");
	KUNIT_EXPECT_GT(test, rdt_clk_khz(), 0);
	for (i = 0; i < 5; i++) {
		local_irq_save(flags);
		t0 = rdt_clk_read_tsc();
		a = rdt_stamp();
		b = rdt_stamp();
		t1 = rdt_clk_read_tsc();
		local_irq_restore(flags);
		KUNIT_EXPECT_TRUE(test, a & RDT_TS_RAW);
		KUNIT_EXPECT_TRUE(test, b & RDT_TS_RAW);
		KUNIT_EXPECT_GE(test, a & ~RDT_TS_RAW, t0);
		KUNIT_EXPECT_GE(test, b, a);
		KUNIT_EXPECT_LE(test, b & ~RDT_TS_RAW, t1);
	}
	rdt_clk_set(old);
}

/* ktime: CLOCK_MONOTONIC itself; a control path's "now" of either stamp. */
static void rdt_test_clock_ktime(struct kunit *test)
{
	enum rdt_clk_mode old = rdt_clk_get();
	u64 k0, a, k1, n;

	KUNIT_EXPECT_EQ(test, rdt_clk_set(RDT_CLK_KTIME), 0);
	k0 = ktime_get_ns();
	a = rdt_stamp();
	k1 = ktime_get_ns();
	KUNIT_EXPECT_FALSE(test, a & RDT_TS_RAW);
	KUNIT_EXPECT_GE(test, a, k0);
	KUNIT_EXPECT_LE(test, a, k1);
	KUNIT_EXPECT_EQ(test, rdt_stamp_now_ns(a), a);
	/* A raw stamp's "now" is ktime_get_ns() read then. */
	k0 = ktime_get_ns();
	n = rdt_stamp_now_ns(RDT_TS_RAW | 12345);
	k1 = ktime_get_ns();
	KUNIT_EXPECT_GE(test, n, k0);
	KUNIT_EXPECT_LE(test, n, k1);
	rdt_clk_set(old);
}

static void rdt_test_clock_modes(struct kunit *test)
{
	enum rdt_clk_mode old = rdt_clk_get(), m = RDT_CLK_TSC;

	KUNIT_EXPECT_EQ(test, rdt_clk_parse("bogus", &m), -EINVAL);
	KUNIT_EXPECT_EQ(test, rdt_clk_parse("", &m), -EINVAL);
	KUNIT_EXPECT_EQ(test, m, RDT_CLK_TSC);
	KUNIT_EXPECT_EQ(test, rdt_clk_parse("ktime\n", &m), 0);
	KUNIT_EXPECT_EQ(test, m, RDT_CLK_KTIME);
	KUNIT_EXPECT_EQ(test, rdt_clk_parse("auto", &m), 0);
	KUNIT_EXPECT_EQ(test, m, RDT_CLK_AUTO);

	KUNIT_EXPECT_EQ(test, rdt_clk_set(RDT_CLK_KTIME), 0);
	KUNIT_EXPECT_STREQ(test, rdt_clk_name(), "ktime");
	KUNIT_EXPECT_FALSE(test, READ_ONCE(rdt_clk_tsc));
	KUNIT_EXPECT_EQ(test, rdt_clk_set(RDT_CLK_AUTO), 0);
#ifdef CONFIG_X86_TSC
	/* auto takes the TSC exactly where the kernel trusts it. */
	KUNIT_EXPECT_EQ(test, !strcmp(rdt_clk_name(), "tsc"),
			tsc_khz && boot_cpu_has(X86_FEATURE_CONSTANT_TSC) &&
			boot_cpu_has(X86_FEATURE_NONSTOP_TSC) &&
			!check_tsc_unstable());
#else
	KUNIT_EXPECT_STREQ(test, rdt_clk_name(), "ktime");
#endif
	KUNIT_EXPECT_GT(test, strlen(rdt_clk_why()), 0);
	rdt_clk_set(old);
}

static struct kunit_case rdt_clock_cases[] = {
	KUNIT_CASE(rdt_test_clock_tsc),
	KUNIT_CASE(rdt_test_clock_ktime),
	KUNIT_CASE(rdt_test_clock_modes),
	{}
};

static struct kunit_suite rdt_clock_suite = {
	.name = "rdmatrace_clock",
	.test_cases = rdt_clock_cases,
};

kunit_test_suites(&rdt_encode_suite, &rdt_wrap_suite, &rdt_filter_suite,
		  &rdt_restrack_suite, &rdt_drop_suite, &rdt_clock_suite);

MODULE_DESCRIPTION("KUnit suites for rdmatrace");
MODULE_LICENSE("GPL");
