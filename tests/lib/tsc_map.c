// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * lib/relay_clock.c's pairs, alone: a stamp between two pairs is on the
 * line between them (not at tsc_khz's rate), one outside is extrapolated
 * at tsc_khz, or at the nearest two's rate when that is unknown or they
 * are 100 ms apart; pairs come in any order and keep the map sorted; a
 * pair that disagrees with its neighbours is refused and counted (beyond
 * jitter), and one between two close pairs adds nothing; a live map
 * thins to its newest half when full; a sampled pair reads this machine's
 * clocks.  Built with ASan/UBSan against the library's sources.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int fails;

#define CHECK(c, ...) do {						\
	if (!(c)) {							\
		printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #c);	\
		printf(__VA_ARGS__);					\
		putchar('\n');						\
		fails++;						\
	}								\
} while (0)

static struct rdt_tsc_pair P(uint64_t tsc, uint64_t ns)
{
	return (struct rdt_tsc_pair){ tsc, ns };
}

int main(void)
{
	struct rdt_tsc_map m = { 0 };
	struct rdt_tsc_pair s1, s2;
	uint64_t ns;

	/* Empty: the TSC as ns, at tsc_khz if known; counted. */
	CHECK(rdt_tsc_map_ns(&m, 1000) == 1000 && m.guessed == 1, "empty");
	m.khz = 2000000;
	CHECK(rdt_tsc_map_ns(&m, 1000) == 500 && m.guessed == 2, "empty at 2 GHz");
	m.guessed = 0;

	/* 3 cycles a ns between the pairs; tsc_khz says 2 (wrong). */
	m.khz = 2000000;
	CHECK(!rdt_tsc_map_add(&m, P(3000000, 1000000)), "add");
	CHECK(!rdt_tsc_map_add(&m, P(3000000 + 3 * 400000000ull,
				     1000000 + 400000000)), "add 2");
	ns = rdt_tsc_map_ns(&m, 3000000 + 3 * 1000);
	CHECK(ns == 1001000, "interpolated %llu", (unsigned long long)ns);
	/* After the last, 400 ms apart: their rate (3), not tsc_khz's (2). */
	ns = rdt_tsc_map_ns(&m, 3000000 + 3 * 400001000ull);
	CHECK(ns == 401001000, "extrapolated late %llu", (unsigned long long)ns);
	/* Before the first. */
	ns = rdt_tsc_map_ns(&m, 3000000 - 3 * 500);
	CHECK(ns == 999500, "extrapolated early %llu", (unsigned long long)ns);

	/* Out of order: refused by add, placed by insert. */
	CHECK(rdt_tsc_map_add(&m, P(3000000 + 3 * 1000, 1001000)) == -EINVAL &&
	      m.refused == 1, "add out of order");
	m.refused = 0;
	CHECK(!rdt_tsc_map_insert(&m, P(3000000 + 3 * 300000000ull + 30,
					301000000)) && m.n == 3, "insert middle: %zu", m.n);
	/* The new pair moves the line: 10 ns later between it and the first. */
	ns = rdt_tsc_map_ns(&m, 3000000 + 3 * 300000000ull + 30);
	CHECK(ns == 301000000, "on the inserted pair %llu", (unsigned long long)ns);
	CHECK(m.v[0].tsc < m.v[1].tsc && m.v[1].tsc < m.v[2].tsc, "sorted");
	/* The same pair again: nothing. */
	CHECK(!rdt_tsc_map_insert(&m, m.v[1]) && m.n == 3, "duplicate");
	/* Disagrees: a later TSC, an earlier time, by a millisecond. */
	CHECK(rdt_tsc_map_insert(&m, P(3000000 + 3 * 350000000ull,
				       300000000)) == -EINVAL && m.refused == 1,
	      "disagreeing pair taken");
	/* By jitter only: not taken, not counted. */
	CHECK(rdt_tsc_map_insert(&m, P(3000000 + 3 * 300000000ull + 60,
				       301000000 - 5000)) == -EINVAL &&
	      m.refused == 1, "jitter counted: %llu", (unsigned long long)m.refused);
	/* Between two pairs 100 ms apart: adds nothing. */
	CHECK(!rdt_tsc_map_insert(&m, P(3000000 + 3 * 350000000ull,
					351000000)) && m.n == 3, "close pair kept: %zu", m.n);
	/* Before the first, after the last. */
	CHECK(!rdt_tsc_map_insert(&m, P(300, 100)) && m.v[0].tsc == 300, "insert first");
	CHECK(!rdt_tsc_map_insert(&m, P(3000000 + 3 * 900000000ull, 901000000)) &&
	      m.n == 5, "insert last");

	/* Stamps in order convert in order, wherever the hint was. */
	{
		uint64_t last = 0;

		for (uint64_t t = 0; t < 3000000 + 3 * 1000000000ull; t += 3 * 1000003)
			if ((ns = rdt_tsc_map_ns(&m, t)) < last)
				CHECK(0, "not monotonic at %llu", (unsigned long long)t);
			else
				last = ns;
		last = UINT64_MAX;
		for (uint64_t t = 3000000 + 3 * 1000000000ull; t > 3 * 1000003; t -= 3 * 1000003)
			if ((ns = rdt_tsc_map_ns(&m, t)) > last)
				CHECK(0, "not monotonic backwards at %llu", (unsigned long long)t);
			else
				last = ns;
	}
	rdt_tsc_map_free(&m);

	/* One pair, no tsc_khz: counted as guessed. */
	CHECK(!rdt_tsc_map_add(&m, P(1000, 5000)), "one");
	rdt_tsc_map_ns(&m, 2000);
	CHECK(m.guessed == 1, "one pair guessed %llu", (unsigned long long)m.guessed);
	m.khz = 1000000;	/* 1 GHz */
	ns = rdt_tsc_map_ns(&m, 3000);
	CHECK(ns == 7000 && m.guessed == 1, "one pair at tsc_khz %llu", (unsigned long long)ns);
	rdt_tsc_map_free(&m);

	/*
	 * Between two pairs, exact: floor of the line, whether the product
	 * of cycles and ns fits 64 bits (pairs a read apart: one divide) or
	 * not (pairs 100 s apart: 3e11 cycles times 1e11 ns, the 128-bit
	 * divide), at odd rates, inline (the last span) or not.
	 */
	{
		static const struct { uint64_t dtsc, dns; } span[] = {
			{ 2999999, 1000003 },			/* 1 ms at ~3 GHz */
			{ 300000000007ull, 100000000003ull },	/* 100 s */
			{ 7, 3 },
		};

		for (size_t i = 0; i < sizeof(span) / sizeof(span[0]); i++) {
			uint64_t t0 = 1000 + i, n0 = 5000000 + i;

			CHECK(!rdt_tsc_map_add(&m, P(t0, n0)) &&
			      !rdt_tsc_map_add(&m, P(t0 + span[i].dtsc, n0 + span[i].dns)),
			      "span %zu", i);
			for (uint64_t k = 0; k < 64; k++) {
				uint64_t x = span[i].dtsc / 64 * k + k % 7;
				unsigned __int128 want = (unsigned __int128)x * span[i].dns /
							 span[i].dtsc;

				if (x >= span[i].dtsc)
					continue;
				ns = rdt_tsc_map_ns(&m, t0 + x);
				CHECK(ns == n0 + (uint64_t)want, "span %zu at +%llu: %llu, not %llu",
				      i, (unsigned long long)x, (unsigned long long)ns,
				      (unsigned long long)(n0 + (uint64_t)want));
			}
			rdt_tsc_map_free(&m);
		}
	}

	/* A hostile stream's pairs make any rate: the stamps saturate. */
	CHECK(!rdt_tsc_map_add(&m, P(1, 0)) &&
	      !rdt_tsc_map_add(&m, P(2, 1ull << 62)), "steep pairs");
	CHECK(rdt_tsc_map_ns(&m, 1ull << 40) == UINT64_MAX, "not saturated late");
	CHECK(rdt_tsc_map_ns(&m, 0) == 0, "not saturated early");
	rdt_tsc_map_free(&m);

	/* A live map thins to its newest half; a capture's keeps all. */
	for (uint64_t i = 0; i < 70000; i++)
		if (rdt_tsc_map_add(&m, P(1000 + i * 1000, 1000 + i * 1000))) {
			CHECK(0, "live add %llu", (unsigned long long)i);
			break;
		}
	CHECK(m.n < 70000 && m.n >= 32768 && m.v[m.n - 1].tsc == 1000 + 69999 * 1000,
	      "live map %zu, last %llu", m.n, (unsigned long long)m.v[m.n - 1].tsc);
	rdt_tsc_map_free(&m);
	m.keep_all = true;
	for (uint64_t i = 0; i < 70000; i++)
		rdt_tsc_map_add(&m, P(1000 + i * 1000, 1000 + i * 1000));
	CHECK(m.n == 70000, "capture map %zu", m.n);
	rdt_tsc_map_free(&m);

	/* This machine: two samples, in order, on CLOCK_MONOTONIC. */
	if (rdt_tsc_sample(&s1)) {
		uint64_t now;

		CHECK(rdt_tsc_sample(&s2), "second sample");
		now = rdt_now_mono();
		CHECK(s2.tsc > s1.tsc && s2.ns >= s1.ns && now >= s2.ns &&
		      now - s2.ns < 1000000000ull, "samples %llu %llu, %llu %llu",
		      (unsigned long long)s1.tsc, (unsigned long long)s1.ns,
		      (unsigned long long)s2.tsc, (unsigned long long)s2.ns);
		printf("tsc_map: sampled pairs %llu cycles, %llu ns apart\n",
		       (unsigned long long)(s2.tsc - s1.tsc),
		       (unsigned long long)(s2.ns - s1.ns));
	}
	printf("tsc_map: %d failed\n", fails);
	return fails != 0;
}
