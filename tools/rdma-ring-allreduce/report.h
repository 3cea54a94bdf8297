/* SPDX-License-Identifier: GPL-2.0 */
/* nccl-tests style output, printed by rank 0 only. */
#ifndef RRA_REPORT_H
#define RRA_REPORT_H

#include <stdint.h>
#include <stdio.h>

void report_table_header(FILE *f);
void report_line(FILE *f, size_t bytes, double time_us, int nranks, uint64_t wrong);
void report_footer(FILE *f, uint64_t wrong, double busbw_sum, int nsizes);

#endif
