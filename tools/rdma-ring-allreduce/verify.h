/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Input data and result check.
 *
 * Rank r's element i is g(i) * (r + 1) with g(i) in 1..1024 from a hash of i.
 * The sum over n ranks is g(i) * n(n+1)/2: every partial sum on the way is an
 * integer below 2^24, so float32 adds it exactly in any order and the check
 * can be an exact compare. A missing, doubled or misplaced contribution
 * changes the value (the hash makes misplacement by any offset visible, and
 * the (r+1) factor tells ranks apart).
 */
#ifndef RRA_VERIFY_H
#define RRA_VERIFY_H

#include <stddef.h>
#include <stdint.h>

float verify_input(int rank, size_t i);
float verify_expected(int nranks, size_t i);
void verify_fill_input(float *buf, size_t count, int rank);
/* Poison the output (NaN) so stale results of an earlier run cannot pass. */
void verify_poison(float *buf, size_t count);
/* Number of wrong elements in buf[0..count). */
uint64_t verify_check(const float *buf, size_t count, int nranks);

#endif
