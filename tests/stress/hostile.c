// SPDX-License-Identifier: GPL-2.0
/*
 * hostile: every way a trace file can be wrong, through librdmatrace (built
 * with ASan+UBSan by tests/stress/hostile.test) and every disk-free sink
 * (the libFuzzer target tests/lib/fuzz_file.c, linked in).  Each mutated
 * file must end in a clean end of stream, a counted skip of unknown
 * records, or an error with a message; a crash is a sanitizer report.
 *
 *   hostile FILE FLIPS SEED
 *
 * Prints one line per class (cases, clean ends, errors, counted skips) and
 * "hostile: N cases, 0 crashes"; exit 1 on a case that broke its contract.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdmatrace/rdmatrace.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t len);

struct tally { const char *name; unsigned long cases, clean, errors, skips; };

static unsigned long bad;

/* Decode all of buf; 0 clean end, 1 error (with message), -1 broken. */
static int run(const unsigned char *buf, size_t len, unsigned long *unknown,
	       char *msg, size_t msglen)
{
	int fd = memfd_create("hostile", 0), n, ret;
	struct rdt_reader *r;
	struct rdt_event ev;
	char path[64];

	if (fd < 0 || write(fd, buf, len) != (ssize_t)len)
		exit(2);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	r = rdt_reader_new(NULL);
	if (rdt_reader_add_file(r, path) < 0) {
		n = -1;
	} else {
		while ((n = rdt_reader_next(r, &ev, -1)) > 0)
			;
	}
	*unknown = rdt_reader_unknown(r);
	snprintf(msg, msglen, "%s", rdt_reader_error(r) ? rdt_reader_error(r) : "");
	ret = n < 0 ? (msg[0] ? 1 : -1) : 0;
	rdt_reader_free(r);
	close(fd);
	return ret;
}

static int sinks = 1;

static void check(struct tally *t, const unsigned char *buf, size_t len,
		  int want_error, int want_skip)
{
	unsigned long unknown;
	char msg[512];
	int r = run(buf, len, &unknown, msg, sizeof(msg));

	/* The same bytes through the text, JSON and Perfetto sinks. */
	if (sinks)
		LLVMFuzzerTestOneInput(buf, len);

	t->cases++;
	if (r < 0) {
		fprintf(stderr, "%s case %lu: failed without an error message\n",
			t->name, t->cases);
		bad++;
		return;
	}
	if (r == 1)
		t->errors++;
	else if (unknown)
		t->skips++;
	else
		t->clean++;
	if ((want_error && r != 1) || (want_skip && (r != 0 || !unknown))) {
		fprintf(stderr, "%s case %lu: %s (unknown %lu), want %s\n", t->name,
			t->cases, r ? msg : "clean end", unknown,
			want_error ? "an error" : "a counted skip");
		bad++;
	}
}

static void report(const struct tally *t)
{
	printf("%-14s %8lu cases: %8lu clean, %8lu clear errors, %8lu counted skips\n",
	       t->name, t->cases, t->clean, t->errors, t->skips);
}

int main(int argc, char **argv)
{
	unsigned char *d, *m;
	size_t len, hdr, nrec = 0, *offs = NULL;
	unsigned long flips, total = 0;
	FILE *f;

	if (argc != 4) {
		fprintf(stderr, "usage: hostile FILE FLIPS SEED\n");
		return 2;
	}
	flips = strtoul(argv[2], NULL, 0);
	srandom((unsigned int)strtoul(argv[3], NULL, 0));
	f = fopen(argv[1], "rb");
	if (!f)
		return 2;
	fseek(f, 0, SEEK_END);
	len = (size_t)ftell(f);
	rewind(f);
	d = malloc(len);
	m = malloc(len);
	if (!d || !m || fread(d, 1, len, f) != len)
		return 2;
	fclose(f);
	memcpy(&hdr, d + 12, 4);
	hdr &= 0xffffffff;
	for (size_t o = hdr; o + 8 <= len; ) {
		uint16_t sz;

		memcpy(&sz, d + o + 6, 2);
		offs = realloc(offs, (nrec + 1) * sizeof(*offs));
		offs[nrec++] = o;
		if (!sz)
			return 2;
		o += sz;
	}

	struct tally whole = { .name = "intact" };
	check(&whole, d, len, 0, 0);
	if (whole.clean != 1) {
		fprintf(stderr, "the intact file does not read cleanly\n");
		return 1;
	}
	report(&whole);

	/* Every truncation offset: inside the header or a record -> error. */
	struct tally tr = { .name = "truncation" };
	size_t next = 0;
	for (size_t cut = 0; cut < len; cut++) {
		int boundary = cut >= hdr && (next < nrec && offs[next] == cut);

		if (boundary)
			next++;
		/* The sinks on every 16th cut: the reader on all of them. */
		sinks = !(cut % 16);
		check(&tr, d, cut, !boundary && cut != hdr, 0);
		sinks = 1;
	}
	report(&tr);

	/* Random byte flips (1..8 bytes each): anything but a crash. */
	struct tally fl = { .name = "byte flips" };
	for (unsigned long i = 0; i < flips; i++) {
		memcpy(m, d, len);
		for (int k = 1 + random() % 8; k > 0; k--)
			m[random() % len] ^= (unsigned char)(1 + random() % 255);
		check(&fl, m, len, 0, 0);
	}
	report(&fl);

	/* Oversized and impossible record sizes -> error. */
	struct tally sz = { .name = "record sizes" };
	static const uint16_t sizes[] = { 0, 1, 7, 8, 31, 0xfff8, 0xffff };
	for (size_t i = 0; i < nrec; i += 1 + nrec / 64) {
		for (size_t s = 0; s < sizeof(sizes) / sizeof(*sizes); s++) {
			memcpy(m, d, len);
			memcpy(m + offs[i] + 6, &sizes[s], 2);
			check(&sz, m, len, 1, 0);
		}
		/* Bigger than what is left of the file. */
		memcpy(m, d, len);
		uint16_t big = (uint16_t)((len - offs[i] + 8) > 0xfff8 ? 0xfff8 : ((len - offs[i] + 15) & ~7u));
		memcpy(m + offs[i] + 6, &big, 2);
		check(&sz, m, len, 1, 0);
	}
	/* The file header's hdr_size: past the end, inside the header. */
	static const uint32_t hsz[] = { 0, 8, 255, 0x7fffffff, 0xffffffff };
	for (size_t s = 0; s < sizeof(hsz) / sizeof(*hsz); s++) {
		memcpy(m, d, len);
		memcpy(m + 12, &hsz[s], 4);
		check(&sz, m, len, 1, 0);
	}
	report(&sz);

	/* Unknown record types at their own size -> counted skip. */
	struct tally un = { .name = "unknown types" };
	/* Just past each range's last type, the gaps, and out of range.
	 * A type the ABI gains must leave this list (82 became
	 * RDT_EV_DEVICE_STATE in ABI 1.1, 200 an NCCL plugin record in 1.3, 4
	 * RDT_EV_CLOCK in 1.16):
	 * checked here, not assumed. */
	static const uint16_t types[] = { 0, RDT_EV_CLOCK + 1, 63, RDT_KMOD_TYPE_LAST + 1, 127,
					  RDT_EV_COLL_STEP + 1, 191, RDT_NP_TYPE_LAST + 1,
					  254, 255,
					  1000, 0xffff };
	for (size_t t = 0; t < sizeof(types) / sizeof(*types); t++)
		if (rdt_type_name(types[t])) {
			fprintf(stderr, "hostile: type %u is known (%s): not an unknown type\n",
				types[t], rdt_type_name(types[t]));
			return 2;
		}
	for (size_t i = 0; i < nrec; i += 1 + nrec / 64) {
		uint16_t type;

		memcpy(&type, d + offs[i] + 4, 2);
		if (type == RDT_EV_SUBBUF || type == RDT_EV_COMM)
			continue;
		for (size_t t = 0; t < sizeof(types) / sizeof(*types); t++) {
			memcpy(m, d, len);
			memcpy(m + offs[i] + 4, &types[t], 2);
			check(&un, m, len, 0, 1);
		}
	}
	report(&un);

	/* Wrong magic (file and record), future versions -> error. */
	struct tally mv = { .name = "magic/version" };
	memcpy(m, d, len); m[0] ^= 0xff; check(&mv, m, len, 1, 0);
	memcpy(m, d, len); memcpy(m, "RDMATRC1", 8); check(&mv, m, len, 1, 0);
	memset(m, 0, len); check(&mv, m, len, 1, 0);
	for (uint16_t major = RDT_ABI_MAJOR + 1; major < RDT_ABI_MAJOR + 4; major++) {
		memcpy(m, d, len); memcpy(m + 8, &major, 2); check(&mv, m, len, 1, 0);
	}
	memcpy(m, d, len); m[8] = 0xff; m[9] = 0xff; check(&mv, m, len, 1, 0);
	for (size_t i = 0; i < nrec; i += 1 + nrec / 32) {
		memcpy(m, d, len); m[offs[i]] ^= 0x5a; check(&mv, m, len, 1, 0);
		memcpy(m, d, len); m[offs[i] + 2] = RDT_ABI_MAJOR + 1; check(&mv, m, len, 1, 0);
		memcpy(m, d, len); m[offs[i] + 2] = 0xff; check(&mv, m, len, 1, 0);
	}
	report(&mv);

	total = whole.cases + tr.cases + fl.cases + sz.cases + un.cases + mv.cases;
	printf("hostile: %lu cases on %zu bytes (%zu records), %lu broke the contract, 0 crashes\n",
	       total, len, nrec, bad);
	free(offs);
	free(m);
	free(d);
	return bad ? 1 : 0;
}
