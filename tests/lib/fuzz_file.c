// SPDX-License-Identifier: GPL-2.0
/* libFuzzer target: arbitrary bytes as a trace file, through every sink
 * that needs no disk (text, JSON, Perfetto) and the stats; then read by
 * reference (what -f -o --metrics does: records counted where they lie in
 * the reader's buffer) into the binary writer, the metrics engine with
 * caps small enough that its "other" series and expiry run, and the hang
 * tracker, with a page rendered and a report printed at the end. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdmatrace/rdmatrace.h>

/* The by-reference read, with the analyses a live reader runs. */
static void by_ref(const char *path)
{
	static const struct rdt_metrics_opts mo = {
		.sz = sizeof(mo), .max_qps = 3, .max_colls = 2,
		.max_port_counters = 3, .qp_expire_ns = 1000,
	};
	struct rdt_reader *r = rdt_reader_new(NULL);
	struct rdt_metrics *m = rdt_metrics_new(&mo);
	struct rdt_stuck *k = rdt_stuck_new(1000);
	struct rdt_pipeline *p = NULL;
	struct rdt_sink *s = NULL;
	struct rdt_rec_ref ref;
	struct rdt_event ev;
	/* Opened on first use: stress/hostile calls this target without
	 * libFuzzer's LLVMFuzzerInitialize(). */
	static FILE *null;
	char err[256], *page = NULL;
	uint64_t now;
	size_t plen;
	bool took;

	if (!null)
		null = fopen("/dev/null", "w");
	if (!r || !m || !k || rdt_reader_add_file(r, path) < 0)
		goto out;
	s = rdt_sink_open(RDT_FMT_BINARY, "/dev/null", r, err, sizeof(err));
	p = rdt_pipeline_new(r);
	if (s && p)
		rdt_pipeline_add_sink(p, s);
	rdt_metrics_watch_stuck(m, k);
	while (rdt_reader_next_ref(r, &ev, &ref, -1) > 0) {
		if (p)
			rdt_pipeline_write_ref(p, &ev, &ref);
		took = rdt_metrics_add_rec(m, &ev, ref.rec, ref.len);
		/* The whole event for the tracker, and for the metrics
		 * where the record was not counted in place. */
		rdt_reader_ref_event(r, &ev, &ref);
		if (!took)
			rdt_metrics_add(m, &ev);
		rdt_stuck_add(k, &ev);
	}
	rdt_metrics_finish(m);
	if (!rdt_metrics_render(m, r, 0, &page, &plen))
		free(page);
	now = rdt_reader_last_ts(r) + 5000;	/* past the 1 us limit */
	if (null) {
		rdt_stuck_check(k, r, now, null);
		rdt_stuck_print(k, r, now, null);
		rdt_stuck_print_summary(k, null);
	}
out:
	rdt_pipeline_free(p);
	rdt_sink_close(s, r);
	rdt_stuck_free(k);
	rdt_metrics_free(m);
	rdt_reader_free(r);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t len)
{
	static const enum rdt_format fmts[] = { RDT_FMT_TEXT, RDT_FMT_JSON,
						RDT_FMT_PERFETTO };
	int fd = memfd_create("fuzz", 0);
	char path[64], err[256];

	if (fd < 0)
		return 0;
	if (write(fd, data, len) != (ssize_t)len) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	for (size_t f = 0; f < sizeof(fmts) / sizeof(*fmts); f++) {
		struct rdt_reader *r = rdt_reader_new(NULL);
		struct rdt_stats *st = rdt_stats_new();
		struct rdt_sink *s = NULL;
		struct rdt_event ev;

		if (r && rdt_reader_add_file(r, path) >= 0) {
			s = rdt_sink_open(fmts[f], "/dev/null", r, err, sizeof(err));
			while (rdt_reader_next(r, &ev, -1) > 0) {
				if (s)
					rdt_sink_write(s, &ev);
				rdt_stats_add(st, &ev);
			}
			rdt_sink_close(s, r);
		}
		rdt_stats_free(st);
		rdt_reader_free(r);
	}
	by_ref(path);
	close(fd);
	return 0;
}
