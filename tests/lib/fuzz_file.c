// SPDX-License-Identifier: GPL-2.0
/* libFuzzer target: arbitrary bytes as a trace file, through every sink
 * that needs no disk (text, JSON, Perfetto) and the stats. */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdmatrace/rdmatrace.h>

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
	close(fd);
	return 0;
}
