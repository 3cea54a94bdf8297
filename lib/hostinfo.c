// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Facts about this host for trace file headers and live sources. */
#include <errno.h>
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

RDT_EXPORT void rdt_local_file_hdr(struct rdt_file_hdr *h, const char *relay_dir)
{
	struct timespec rt, mono, rt2;
	struct utsname u;
	char path[512];

	memset(h, 0, sizeof(*h));
	memcpy(h->magic, RDT_FILE_MAGIC, sizeof(h->magic));
	h->abi_major = RDT_ABI_MAJOR;
	h->abi_minor = RDT_ABI_MINOR;
	h->hdr_size = sizeof(*h);
	/* Bracket the monotonic read to halve the offset's error. */
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &rt2);
	h->realtime_offset_ns =
		((int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec +
		 (int64_t)rt2.tv_sec * 1000000000 + rt2.tv_nsec) / 2 -
		((int64_t)mono.tv_sec * 1000000000 + mono.tv_nsec);
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
