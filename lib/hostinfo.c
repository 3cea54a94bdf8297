// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Facts about this host for trace file headers and live sources. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

extern char **environ;

static void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	buf[0] = 0;
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

static int64_t ts_ns(clockid_t id)
{
	return (int64_t)rdt_clock_ns(id);
}

/*
 * CLOCK_REALTIME - CLOCK_MONOTONIC from the tightest of several brackets
 * (realtime, monotonic, realtime): one bracket is off by as much as the
 * reader was preempted inside it, a scheduler tick (4 ms at HZ=250) on a
 * busy host, and every cross-host alignment inherits that error.
 */
static int64_t realtime_offset_ns(void)
{
	int64_t best = 0, width = INT64_MAX;

	for (int i = 0; i < 64 && width > 1000; i++) {
		int64_t r1 = ts_ns(CLOCK_REALTIME);
		int64_t m = ts_ns(CLOCK_MONOTONIC);
		int64_t r2 = ts_ns(CLOCK_REALTIME);

		/* A step of the realtime clock inside the bracket: retry. */
		if (r2 < r1 || r2 - r1 >= width)
			continue;
		width = r2 - r1;
		best = r1 + width / 2 - m;
	}
	if (width == INT64_MAX)	/* stepped every time: take one read */
		best = ts_ns(CLOCK_REALTIME) - ts_ns(CLOCK_MONOTONIC);
	return best;
}

RDT_EXPORT void rdt_local_file_hdr(struct rdt_file_hdr *h, const char *relay_dir)
{
	struct utsname u;
	char path[512];

	memset(h, 0, sizeof(*h));
	memcpy(h->magic, RDT_FILE_MAGIC, sizeof(h->magic));
	h->abi_major = RDT_ABI_MAJOR;
	h->abi_minor = RDT_ABI_MINOR;
	h->hdr_size = sizeof(*h);
	h->realtime_offset_ns = realtime_offset_ns();
	h->ncpus = (uint32_t)sysconf(_SC_NPROCESSORS_CONF);
	if (!uname(&u)) {
		/* Keep the NUL: readers treat these as C strings. */
		memcpy(h->host, u.nodename, strnlen(u.nodename, sizeof(h->host) - 1));
		memcpy(h->kernel, u.release, strnlen(u.release, sizeof(h->kernel) - 1));
	}
	if (relay_dir) {
		/* The debugfs file says "abi X.Y\nmodule V\n": keep V. */
		FILE *f;
		char line[128];

		snprintf(path, sizeof(path), "%s/version", relay_dir);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			if (!strncmp(line, "module ", 7)) {
				line[strcspn(line, "\n")] = 0;
				memcpy(h->module_version, line + 7,
				       strnlen(line + 7, sizeof(h->module_version) - 1));
			}
		if (f)
			fclose(f);
	}
	if (!h->module_version[0])
		read_line("/sys/module/rdmatrace/version", h->module_version,
			  sizeof(h->module_version));
	read_line("/proc/sys/kernel/random/boot_id", h->boot_id,
		  sizeof(h->boot_id));
}

/* Append "PREFIXVAR\n" to the metadata text *m of *len bytes. */
static void meta_add(char **m, size_t *len, const char *prefix, const char *var)
{
	size_t pl = strlen(prefix), l = strlen(var);
	char *n;

	if (!*m || strncmp(var, "NCCL_", 5) || !strchr(var, '=') ||
	    strchr(var, '\n'))
		return;
	n = realloc(*m, *len + pl + l + 2);
	if (!n)
		return;
	memcpy(n + *len, prefix, pl);
	memcpy(n + *len + pl, var, l);
	*len += pl + l;
	n[(*len)++] = '\n';
	n[*len] = 0;
	*m = n;
}

/* NCCL_* of this process: the tool usually shares the job's environment. */
char *rdt_local_meta(void)
{
	size_t len = 0;
	char *m = calloc(1, 1);

	for (char **e = environ; m && e && *e; e++)
		meta_add(&m, &len, "", *e);
	return m;
}

/*
 * NCCL_* of a traced process, as "pid<PID>.NCCL_X=VALUE" lines appended to
 * meta: the job's settings are what explain its collectives, and they
 * need not be the tool's.  Returns -errno when /proc/<pid>/environ cannot
 * be read (another user's process without the privilege, or gone).
 */
int rdt_meta_add_pid(char **meta, int pid)
{
	char path[64], prefix[32], *var = NULL;
	size_t cap = 0, mlen = *meta ? strlen(*meta) : 0;
	FILE *f;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	snprintf(prefix, sizeof(prefix), "pid%d.", pid);
	/* environ is NUL-separated "VAR=VALUE" strings. */
	while (getdelim(&var, &cap, '\0', f) > 0)
		meta_add(meta, &mlen, prefix, var);
	err = ferror(f) ? -EIO : 0;
	free(var);
	fclose(f);
	return err;
}
