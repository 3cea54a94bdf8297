// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The output buffer's writers (internal.h, sink_common.c) against the
 * plain ways to say the same: rdt_ob_json_str() against a byte-at-a-time
 * escape (its fast path tests 8 bytes at a time, so every length around
 * a word and every byte class at every place), the numbers against
 * printf, and the key-and-value forms against key, then value.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static unsigned long bad, checked;

/* An rdt_ob whose output collects in memory. */
struct out {
	struct rdt_ob	o;
	char		*mem;
	size_t		len;
};

static void out_open(struct out *w)
{
	memset(w, 0, sizeof(*w));
	w->o.f = open_memstream(&w->mem, &w->len);
	w->o.buf = malloc(RDT_OB_OWN);
	w->o.cap = RDT_OB_OWN;
	w->o.own = true;
	if (!w->o.f || !w->o.buf) {
		perror("writers");
		exit(2);
	}
}

/* What was written since the last call, NUL-terminated. */
static const char *out_take(struct out *w)
{
	rdt_ob_flush(&w->o);
	fflush(w->o.f);
	fclose(w->o.f);
	w->o.f = NULL;
	return w->mem;
}

static void out_close(struct out *w)
{
	if (w->o.f)
		fclose(w->o.f);
	free(w->o.buf);
	free(w->mem);
}

static void same(const char *what, const char *got, const char *want)
{
	checked++;
	if (strcmp(got, want)) {
		if (bad++ < 20)
			printf("%s: got [%s], want [%s]\n", what, got, want);
	}
}

/* JSON of s[0..min(strlen, max)), one byte at a time. */
static void ref_json(char *d, const char *s, size_t max)
{
	*d++ = '"';
	for (size_t i = 0; i < max && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			d += sprintf(d, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			d += sprintf(d, "\\u%04x", c);
		else
			*d++ = (char)c;
	}
	*d++ = '"';
	*d = 0;
}

static void json_one(const char *s, size_t max)
{
	char want[6 * 600 + 3];
	struct out w;

	out_open(&w);
	rdt_ob_json_str(&w.o, s, max);
	ref_json(want, s, max);
	same("json", out_take(&w), want);
	out_close(&w);
}

static void json_all(void)
{
	static const unsigned char special[] = {
		'"', '\\', 0x01, 0x1f, 0x7f, 0x80, 0xc3, 0xff, '\t',
	};
	char s[600];

	/* every length to past two words, a special byte at every place */
	for (size_t n = 0; n <= 40; n++) {
		memset(s, 'a', n);
		s[n] = 0;
		json_one(s, 64);
		json_one(s, n / 2);		/* cut by max, not NUL */
		for (size_t at = 0; at < n; at++)
			for (size_t k = 0; k < sizeof(special); k++) {
				memset(s, 'x', n);
				s[at] = (char)special[k];
				s[n] = 0;
				json_one(s, 64);
			}
	}
	/* the bytes next to the classes' edges, alone and among others */
	for (unsigned int c = 1; c < 256; c++) {
		memset(s, ' ', 17);
		s[17] = 0;
		s[c % 17] = (char)c;
		json_one(s, 64);
		s[0] = (char)c;
		s[1] = 0;
		json_one(s, 64);
	}
	/* longer than the fast path takes, and random bytes */
	memset(s, 'b', 599);
	s[599] = 0;
	json_one(s, 599);
	srand(1);
	for (int i = 0; i < 20000; i++) {
		size_t n = (size_t)rand() % 48;

		for (size_t j = 0; j < n; j++)
			s[j] = (char)(rand() % 255 + 1);
		s[n] = 0;
		json_one(s, (size_t)rand() % 64);
	}
}

static void num_one(uint64_t v)
{
	char want[128];
	struct out w;

	out_open(&w);
	rdt_ob_u(&w.o, v);
	rdt_ob_c(&w.o, ' ');
	rdt_ob_i(&w.o, (int64_t)v);
	rdt_ob_c(&w.o, ' ');
	rdt_ob_x(&w.o, v);
	rdt_ob_ku(&w.o, " u=", 3, v);
	rdt_ob_ki(&w.o, " i=", 3, (int64_t)v);
	rdt_ob_kx(&w.o, " x=\"0x", 6, v);
	snprintf(want, sizeof(want), "%" PRIu64 " %" PRId64 " %" PRIx64
		 " u=%" PRIu64 " i=%" PRId64 " x=\"0x%" PRIx64 "\"",
		 v, (int64_t)v, v, v, (int64_t)v, v);
	same("numbers", out_take(&w), want);
	out_close(&w);
}

static void num_all(void)
{
	uint64_t p = 1;

	for (uint64_t v = 0; v < 70000; v++)
		num_one(v);
	for (int k = 0; k < 64; k++) {	/* each bit length's ends */
		num_one(1ull << k);
		num_one((1ull << k) - 1);
		num_one(~0ull >> k);
		num_one(-(1ull << k));
	}
	for (int k = 0; k < 20; k++, p *= 10) {	/* each digit count's */
		num_one(p - 1);
		num_one(p);
		num_one(p + 1);
	}
	srand(2);
	for (int i = 0; i < 100000; i++)
		num_one((uint64_t)rand() << 42 ^ (uint64_t)rand() << 21 ^
			(uint64_t)rand());
}

static void name_all(void)
{
	static const char *const names[] = {
		"", "a", "ab", "abc", "abcd", "RDMA_WRITE", "SUCCESS",
		"MASKED_ATOMIC_FETCH_ADD",
		"0123456789012345678901234567890123456789012345678901234567890123",
		"0123456789012345678901234567890123456789012345678901234567890123xyz",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char want[200];
		struct out w;

		out_open(&w);
		rdt_ob_name(&w.o, names[i]);
		rdt_ob_kname(&w.o, ",\"k\":", 5, names[i]);
		snprintf(want, sizeof(want), "\"%.64s\",\"k\":\"%.64s\"",
			 names[i], names[i]);
		same("name", out_take(&w), want);
		out_close(&w);
	}
}

int main(void)
{
	json_all();
	num_all();
	name_all();
	printf("%lu checked, %lu wrong\n", checked, bad);
	return bad != 0 || checked < 100000;
}
