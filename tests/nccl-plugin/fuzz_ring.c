// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target (issue 31): the NCCL plugin's ring file as another user
 * would leave it for a live reader, and changed between its reads.
 *
 * Input: 8 operation bytes, then the image of DIR/rdmatrace-nccl.<our pid>
 * (header and rings: the seeds are real ring files of np-driver), padded
 * with zeros to the 4096 bytes a reader waits for.  The header's pid, and
 * the pid of every record where the header says records are, are set to
 * ours: the file is the fuzzer's own process's, and its records are read
 * (a record of another pid is skipped as corrupt, a path of its own).
 * librdmatrace's real nccl-plugin source (lib/source_nccl_plugin.c, linked
 * in) follows the file live, through rdt_reader_next(), while each
 * operation changes it under the reader:
 *   0, 1  a pass of the reader (until it has nothing due)
 *   2     ftruncate() to 0 .. 31/16 of the image (shrunk or grown)
 *   3     the image written again (heads, tails and sizes back as they were)
 *   4     a ring's head moved on by 0 .. 31 (a producer, or a lie)
 *   5     one byte flipped
 *   6     the file unlinked and made again with the image (replaced)
 *   7     the reader stopped and drained, as at Ctrl-C
 * Each event also goes to the stats, --metrics (caps small enough that its
 * "other" series run) and the hang tracker.  Then the reader is stopped
 * and drained, and the summaries, the metrics page and the hang report
 * made.  A crash, a sanitizer report or a drain that does not end (abort)
 * is the failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdmatrace/rdmatrace.h>

#include "../../producers/nccl-profiler/np_ring.h"

#define NOPS	8
#define MIN_LEN	4096
/* Far more than a ring file of a fuzz input can hold records or passes. */
#define MAX_CALLS 200000

static char dir[64], path[128];
static FILE *devnull;

/* Every slot's rdt_hdr.pid, as far as the image's own geometry goes and
 * the image holds: at most len / RDT_NP_SLOT rings and slots. */
static void own_records(unsigned char *img, size_t len, uint32_t pid)
{
	struct rdt_np_shm h;
	uint64_t budget = len / RDT_NP_SLOT;

	memcpy(&h, img, sizeof(h));
	for (uint64_t i = 0; i < h.nrings && budget; i++) {
		uint64_t ring = h.hdr_size + i * h.ring_size;

		budget--;
		if (ring >= len)
			break;
		for (uint64_t k = 0; k < h.nslots && budget; k++) {
			uint64_t off = ring + sizeof(struct rdt_np_ring) +
				       k * RDT_NP_SLOT + offsetof(struct rdt_hdr, pid);

			budget--;
			if (off < ring || off + sizeof(pid) > len)
				break;
			memcpy(img + off, &pid, sizeof(pid));
		}
	}
}

static int make_file(const unsigned char *img, size_t len)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0)
		return -1;
	if (pwrite(fd, img, len, 0) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	return fd;
}

struct analyses {
	struct rdt_stats	*st;
	struct rdt_metrics	*m;	/* small caps: "other" and expiry run */
	struct rdt_stuck	*k;
};

/* Every call the reader is given, counted: a reader that never ends its
 * drain is a hang, reported as a crash with this frame. */
static void next_until(struct rdt_reader *r, struct analyses *a,
		       unsigned int *calls, bool to_end)
{
	struct rdt_event ev;
	int n;

	for (;;) {
		if (++*calls > MAX_CALLS) {
			fprintf(stderr, "fuzz_ring: the reader did not end its "
				"drain in %u calls\n", MAX_CALLS);
			abort();
		}
		n = rdt_reader_next(r, &ev, 0);
		if (n > 0) {
			rdt_stats_add(a->st, &ev);
			rdt_metrics_add(a->m, &ev);
			rdt_stuck_add(a->k, &ev);
			continue;
		}
		if (n == -EAGAIN && to_end)
			continue;
		return;
	}
}

static void remove_dir(void)
{
	unlink(path);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* RDT_FUZZ_DIR (a test's own directory, removed even after a
	 * crash), else tmpfs, where ring files live and churn is cheap */
	const char *base = getenv("RDT_FUZZ_DIR");

	snprintf(dir, sizeof(dir), "%.40s/rdt-fuzzring.XXXXXX",
		 base && *base ? base : "/dev/shm");
	if (!mkdtemp(dir)) {
		snprintf(dir, sizeof(dir), "/tmp/rdt-fuzzring.XXXXXX");
		if (!mkdtemp(dir))
			abort();
	}
	snprintf(path, sizeof(path), "%s/" RDT_NP_PREFIX "%d", dir,
		 (int)getpid());
	atexit(remove_dir);
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct rdt_reader_opts o = { .sz = sizeof(o), .follow = true,
				     .reorder_window_ns = 1 };
	static const struct rdt_metrics_opts mo = {
		.sz = sizeof(mo), .max_qps = 3, .max_colls = 2,
		.max_port_counters = 3, .qp_expire_ns = 1000,
	};
	struct analyses a = { 0 };
	struct rdt_reader *r;
	unsigned char *img;
	char *page;
	size_t plen;
	uint64_t now;
	unsigned int calls = 0;
	uint32_t pid = (uint32_t)getpid();
	size_t len;
	int fd;

	if (size < NOPS)
		return 0;
	len = size - NOPS < MIN_LEN ? MIN_LEN : size - NOPS;
	img = calloc(1, len);
	if (!img)
		return 0;
	memcpy(img, data + NOPS, size - NOPS);
	memcpy(img + offsetof(struct rdt_np_shm, pid), &pid, sizeof(pid));
	own_records(img, len, pid);
	fd = make_file(img, len);
	r = rdt_reader_new(&o);
	a.st = rdt_stats_new();
	a.m = rdt_metrics_new(&mo);
	a.k = rdt_stuck_new(1000);
	if (fd < 0 || !r || !a.st || !a.m || !a.k ||
	    rdt_reader_add_nccl_plugin(r, dir) < 0)
		goto out;
	rdt_metrics_watch_stuck(a.m, a.k);
	for (int i = 0; i < NOPS; i++) {
		unsigned int b = data[i], op = b & 7, arg = b >> 3;
		struct rdt_np_shm h;

		memcpy(&h, img, sizeof(h) < len ? sizeof(h) : len);
		switch (op) {
		case 0:
		case 1:
			next_until(r, &a, &calls, false);
			break;
		case 2:
			if (ftruncate(fd, (off_t)(len * arg / 16))) {
				/* the file as it was: nothing to fuzz */
			}
			break;
		case 3:
			if (pwrite(fd, img, len, 0) < 0) {
				/* as above */
			}
			break;
		case 4: {
			uint64_t off = (uint64_t)h.hdr_size +
				       (uint64_t)(arg & 1) * h.ring_size +
				       offsetof(struct rdt_np_ring, head);
			uint64_t head = 0;

			if (off < len &&
			    pread(fd, &head, sizeof(head), (off_t)off) >= 0) {
				head += arg;
				if (pwrite(fd, &head, sizeof(head), (off_t)off) < 0) {
					/* as above */
				}
			}
			break;
		}
		case 5: {
			off_t off = (off_t)(((uint64_t)arg * 4099 + i * 193) % len);
			unsigned char c = 0;

			if (pread(fd, &c, 1, off) == 1) {
				c ^= (unsigned char)(0x80 >> (arg & 7));
				if (pwrite(fd, &c, 1, off) < 0) {
					/* as above */
				}
			}
			break;
		}
		case 6:
			close(fd);
			unlink(path);
			fd = make_file(img, len);
			if (fd < 0)
				goto out;
			break;
		case 7:
			rdt_reader_stop(r);
			next_until(r, &a, &calls, true);
			break;
		}
	}
	rdt_reader_stop(r);
	next_until(r, &a, &calls, true);
	/* the drop report and the summaries, with what the reader counted;
	 * the metrics page and the hang report of what the rings held */
	rdt_stats_print(a.st, r, devnull);
	rdt_stats_print_json(a.st, r, devnull);
	rdt_metrics_finish(a.m);
	if (!rdt_metrics_render(a.m, r, 0, &page, &plen))
		free(page);
	now = rdt_reader_last_ts(r) + 5000;	/* past the 1 us limit */
	rdt_stuck_check(a.k, r, now, devnull);
	rdt_stuck_print(a.k, r, now, devnull);
	for (unsigned int i = 0; i < rdt_reader_nsources(r); i++)
		fputs(rdt_reader_source_status(r, i), devnull);
out:
	rdt_stuck_free(a.k);
	rdt_metrics_free(a.m);
	rdt_stats_free(a.st);
	rdt_reader_free(r);
	if (fd >= 0)
		close(fd);
	unlink(path);
	free(img);
	return 0;
}
