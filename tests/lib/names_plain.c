// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The JSON and Perfetto sinks write the library's own names (an E field's
 * namer's, a record type's) without an escape pass (rdt_ob_name()).  That
 * holds while every such name is printable ASCII with no '"' or '\\', at
 * most 64 bytes and never NULL: checked here of every namer schema/gen.py
 * lists in lib/namers.inc, over every value of its field's width and
 * more, and of every record type's name.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static unsigned long bad;

/* Whether @s may go out unescaped; says why not. */
static int plain(const char *fn, unsigned int v, const char *s)
{
	size_t n;

	if (!s) {
		printf("%s(%u): NULL\n", fn, v);
		return 0;
	}
	n = strnlen(s, 65);
	if (n > 64) {
		printf("%s(%u): longer than 64 bytes\n", fn, v);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
			printf("%s(%u): byte 0x%02x at %zu of \"%s\"\n", fn, v,
			       c, i, s);
			return 0;
		}
	}
	return 1;
}

static void check(const char *fn, const char *(*name)(unsigned int))
{
	static const unsigned int far[] = { 0x10000u, 0x7fffffffu, UINT_MAX };
	unsigned long before = bad;

	for (unsigned int v = 0; v < 0x10000; v++)
		bad += !plain(fn, v, name(v));
	for (size_t i = 0; i < sizeof(far) / sizeof(far[0]); i++)
		bad += !plain(fn, far[i], name(far[i]));
	printf("%s: %s\n", fn, bad == before ? "plain" : "NOT PLAIN");
}

int main(void)
{
	unsigned int types = 0;

	/* The checker itself: what it must refuse. */
	if (plain("self", 0, "a\"b") || plain("self", 0, "a\\b") ||
	    plain("self", 0, "a\nb") || plain("self", 0, "caf\xc3\xa9") ||
	    plain("self", 0, NULL) || !plain("self", 0, "RDMA_WRITE")) {
		printf("the checker is wrong\n");
		return 1;
	}
#define RDT_NAMER(fn) check(#fn, fn);
#include "namers.inc"
#undef RDT_NAMER
	for (unsigned int t = 0; t <= RDT_EV_MAX; t++) {
		const char *s = rdt_type_name(t);

		if (s) {
			types++;
			bad += !plain("rdt_type_name", t, s);
		}
	}
	printf("rdt_type_name: %u types\n", types);
	if (types < 10)
		bad++;
	printf("%lu not plain\n", bad);
	return bad != 0;
}
