// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The module's relay directory besides its trace<cpu> files: the `enable`
 * switch, the `dropped` counters, and the header a saved capture keeps
 * (rdmatrace-record), shared by the live reader and the recorder.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* "abi 1.0" anywhere in the version file; absent: rely on record headers. */
RDT_EXPORT int rdt_relay_abi_major(const char *dir, char *text, size_t len)
{
	char path[600];
	const char *a;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/version", dir);
	text[0] = 0;
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(text, 1, len - 1, f);
	text[n] = 0;
	fclose(f);
	text[strcspn(text, "\n")] = 0;
	a = strstr(text, "abi");
	if (!a)
		a = strstr(text, "ABI");
	if (!a)
		return -1;
	while (*a && !isdigit((unsigned char)*a))
		a++;
	return *a ? atoi(a) : -1;
}

RDT_EXPORT int rdt_relay_set_enable(const char *dir, bool on)
{
	char path[600], cur[8] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/enable", dir);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (!fgets(cur, sizeof(cur), f))
		cur[0] = 0;
	fclose(f);
	if (cur[0] == (on ? '1' : '0'))
		return 0;
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fputs(on ? "1" : "0", f);
	if (fclose(f))
		return -errno;
	return 1;
}

/* Lines name a CPU ("cpu3 12", or "3: 12" as older modules wrote it) or
 * the total ("total 12"). */
RDT_EXPORT long long rdt_relay_read_dropped(const char *path, uint64_t **v,
				 unsigned int *nv)
{
	long long total = -1, sum = 0;
	char line[256];
	FILE *f;

	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *q = line, *last = NULL;
		unsigned long long num = 0, cpu;
		bool is_cpu = false;

		while (isspace((unsigned char)*q))
			q++;
		if (!strncmp(q, "cpu", 3) && isdigit((unsigned char)q[3])) {
			cpu = strtoull(q + 3, &q, 10);
			is_cpu = true;
		} else if (isdigit((unsigned char)*q) && strchr(q, ':')) {
			cpu = strtoull(q, &q, 10);
			is_cpu = true;
		} else {
			cpu = 0;
		}
		for (char *t = q; *t; t++)
			if (isdigit((unsigned char)*t) &&
			    (t == q || !isalnum((unsigned char)t[-1])))
				last = t;
		if (!last)
			continue;
		num = strtoull(last, NULL, 10);
		if (is_cpu && cpu < RDT_RELAY_MAX_CPUS) {
			if (cpu >= *nv) {
				uint64_t *n = realloc(*v, (cpu + 1) * sizeof(*n));

				if (!n)
					continue;
				memset(n + *nv, 0, (cpu + 1 - *nv) * sizeof(*n));
				*v = n;
				*nv = (unsigned int)cpu + 1;
			}
			(*v)[cpu] = num;
			sum += (long long)num;
		} else if (strstr(line, "total") || total < 0) {
			total = (long long)num;
		}
	}
	fclose(f);
	return total >= 0 ? total : sum;
}

/* The same header a live relay source synthesises, so a saved capture
 * decoded elsewhere still names the host, kernel and time base it came
 * from. */
RDT_EXPORT int rdt_write_local_header(FILE *f, const char *relay_dir)
{
	static const char zeros[8];
	struct rdt_file_hdr h;
	char *meta = rdt_local_meta();
	size_t mlen, pad;
	int ret = 0;

	if (!meta)
		return -ENOMEM;
	rdt_local_file_hdr(&h, relay_dir);
	mlen = strlen(meta);
	pad = (8 - mlen % 8) % 8;
	h.hdr_size = (__u32)(sizeof(h) + mlen + pad);
	if (fwrite(&h, sizeof(h), 1, f) != 1 ||
	    (mlen && fwrite(meta, mlen, 1, f) != 1) ||
	    (pad && fwrite(zeros, pad, 1, f) != 1) || fflush(f))
		ret = -(errno ? errno : EIO);
	free(meta);
	return ret;
}
