// SPDX-License-Identifier: GPL-2.0
/* nccl-tests (all_reduce_perf) style table, so existing parsers read it. */
#include "report.h"
#include "ring.h"

void report_table_header(FILE *f)
{
	fprintf(f, "#\n");
	fprintf(f, "#                                                  out-of-place\n");
	fprintf(f, "#       size         count      type   redop     time   algbw   busbw  #wrong\n");
	fprintf(f, "#        (B)    (elements)                       (us)  (GB/s)  (GB/s)        \n");
}

void report_line(FILE *f, size_t bytes, double time_us, int nranks, uint64_t wrong)
{
	fprintf(f, "%12zu  %12zu  %8s  %6s  %7.*f  %6.2f  %6.2f  %6llu\n", bytes,
		bytes / sizeof(float), "float", "sum", time_us < 10000 ? 2 : 0, time_us,
		ring_algbw(bytes, time_us), ring_busbw(bytes, time_us, nranks),
		(unsigned long long)wrong);
	fflush(f);
}

void report_footer(FILE *f, uint64_t wrong, double busbw_sum, int nsizes)
{
	fprintf(f, "# Out of bounds values : %llu %s\n", (unsigned long long)wrong,
		wrong ? "FAILED" : "OK");
	fprintf(f, "# Avg bus bandwidth    : %g\n", nsizes ? busbw_sum / nsizes : 0.0);
	fprintf(f, "#\n");
}
