// SPDX-License-Identifier: GPL-2.0
/* Deterministic input and exact result check, see verify.h. */
#include <string.h>

#include "verify.h"

static uint32_t g(size_t i)
{
	/* splitmix-style mixer: no short period, so shifted data shows. */
	uint64_t x = (uint64_t)i + 0x9e3779b97f4a7c15ull;

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	x ^= x >> 31;
	return (uint32_t)(x & 1023) + 1;
}

float verify_input(int rank, size_t i)
{
	return (float)(g(i) * (uint32_t)(rank + 1));
}

float verify_expected(int nranks, size_t i)
{
	return (float)(g(i) * (uint32_t)(nranks * (nranks + 1) / 2));
}

void verify_fill_input(float *buf, size_t count, int rank)
{
	for (size_t i = 0; i < count; i++)
		buf[i] = verify_input(rank, i);
}

void verify_poison(float *buf, size_t count)
{
	memset(buf, 0xff, count * sizeof(*buf)); /* all-ones is a NaN */
}

uint64_t verify_check(const float *buf, size_t count, int nranks)
{
	uint64_t wrong = 0;

	for (size_t i = 0; i < count; i++)
		if (buf[i] != verify_expected(nranks, i)) /* NaN != anything */
			wrong++;
	return wrong;
}
