// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Growing message strings: a source's status, clock alignment's report.
 * Their own file so that the modules that write such text (sources,
 * analyses) do not reach into the merge for it.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

void rdt_str_vappend(char **buf, const char *end, const char *fmt, va_list ap)
{
	char *line, *all;

	if (vasprintf(&line, fmt, ap) < 0)
		return;
	if (asprintf(&all, "%s%s%s", *buf ? *buf : "", line, end) >= 0) {
		free(*buf);
		*buf = all;
	}
	free(line);
}
