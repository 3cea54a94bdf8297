// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The capture directory: what rdmatrace-record -D DIR saves and the relay
 * source reads back (rdmatrace-dump -d DIR).  The module's trace<cpu>
 * files as relay gave them (the recorder copies those itself, as they
 * come), and beside them the facts a reader of the module's own debugfs
 * directory would find there, as they were when the recording began and
 * ended: this host's trace file header (header.rdt, since the reader runs
 * elsewhere or later), the module's `version` and `n_subbufs`, its drop
 * counters at the start (dropped.start) and at the end (`dropped`,
 * written last: a capture without it did not finish), and the port
 * counters (counters.rdt, a trace file).  The names are this file's: the
 * recorder and the reader both come here for them.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

#include "internal.h"

/* What rdt_capture_begin() makes, in order (undone in any order). */
static const char *const begin_files[] = {
	RDT_SAVED_HEADER, "version", "n_subbufs", RDT_SAVED_DROPPED_START,
	RDT_SAVED_CLOCK, NULL,
};

/* A pair at most this often: between two, a stamp is interpolated. */
#define CLOCK_EVERY_NS	100000000ull

static int path_of(char *buf, size_t len, const char *dir, const char *name)
{
	int n = snprintf(buf, len, "%s/%s", dir, name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* @name of @from_dir as @to_name in @to_dir, created (never replaced);
 * missing in @from_dir: nothing (a module without that file). */
static int copy_file(const char *from_dir, const char *name,
		     const char *to_dir, const char *to_name)
{
	char from[600], to[600], buf[4096];
	FILE *in, *out;
	size_t n;
	int ret;

	if ((ret = path_of(from, sizeof(from), from_dir, name)) ||
	    (ret = path_of(to, sizeof(to), to_dir, to_name)))
		return ret;
	in = fopen(from, "r");
	if (!in)
		return errno == ENOENT ? 0 : -errno;
	out = fopen(to, "wx");
	if (!out) {
		ret = -errno;
		fclose(in);
		return ret;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n) {
			ret = -errno;
			break;
		}
	if (!ret && ferror(in))
		ret = -EIO;
	fclose(in);
	if (fclose(out) && !ret)
		ret = -errno;
	return ret;
}

static bool has_file(const char *dir, const char *name)
{
	char path[600];

	return !path_of(path, sizeof(path), dir, name) && !access(path, F_OK);
}

RDT_EXPORT bool rdt_capture_is_saved(const char *dir)
{
	return has_file(dir, RDT_SAVED_HEADER);
}

RDT_EXPORT int rdt_capture_find(const char *dir, char *name, size_t len)
{
	struct dirent *de;
	int found = 0;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while (!found && (de = readdir(d))) {
		/* trace<cpu>, dropped and dropped.start, and the rest */
		found = !strncmp(de->d_name, "trace", 5) ||
			!strncmp(de->d_name, "dropped", 7) ||
			!strcmp(de->d_name, RDT_SAVED_COUNTERS);
		for (size_t i = 0; !found && begin_files[i]; i++)
			found = !strcmp(de->d_name, begin_files[i]);
		if (found && name && len)
			snprintf(name, len, "%s", de->d_name);
	}
	closedir(d);
	return found;
}

/*
 * The clock pairs file (relay_clock.c reads it): its first line names the
 * module's tsc_khz, the first pair follows.  Where the TSC cannot be read
 * (not x86) the module never stamps raw: the file has no pairs.
 */
static int clock_begin(const char *dir, const char *relay_dir)
{
	char path[600];
	uint64_t last = 0;
	FILE *f;
	int ret;

	if ((ret = path_of(path, sizeof(path), dir, RDT_SAVED_CLOCK)))
		return ret;
	f = fopen(path, "wx");
	if (!f)
		return -errno;
	fprintf(f, "rdmatrace clock pairs 1 tsc_khz %llu\n",
		(unsigned long long)rdt_relay_clock_khz(relay_dir));
	if (fclose(f))
		return -errno;
	return rdt_capture_clock(dir, &last, true);
}

RDT_EXPORT int rdt_capture_clock(const char *dir, uint64_t *last_ns,
				 bool force)
{
	struct rdt_tsc_pair p;
	char path[600];
	FILE *f;
	int ret;

	if (!rdt_tsc_sample(&p))
		return 0;
	if (!force && p.ns < *last_ns + CLOCK_EVERY_NS)
		return 0;
	if ((ret = path_of(path, sizeof(path), dir, RDT_SAVED_CLOCK)))
		return ret;
	f = fopen(path, "a");
	if (!f)
		return -errno;
	fprintf(f, "%llu %llu\n", (unsigned long long)p.tsc,
		(unsigned long long)p.ns);
	if (fclose(f))
		return -errno;
	*last_ns = p.ns;
	return 0;
}

RDT_EXPORT int rdt_capture_begin(const char *dir, const char *relay_dir)
{
	char path[600];
	FILE *f;
	int ret;

	if ((ret = path_of(path, sizeof(path), dir, RDT_SAVED_HEADER)))
		return ret;
	f = fopen(path, "wbx");
	if (!f)
		return -errno;
	ret = rdt_write_local_header(f, relay_dir);
	if (fclose(f) && !ret)
		ret = -errno;
	if (!ret)
		ret = copy_file(relay_dir, "version", dir, "version");
	if (!ret)
		ret = copy_file(relay_dir, "n_subbufs", dir, "n_subbufs");
	/* Loss before the capture is not its loss. */
	if (!ret)
		ret = copy_file(relay_dir, "dropped", dir,
				RDT_SAVED_DROPPED_START);
	if (!ret)
		ret = clock_begin(dir, relay_dir);
	return ret;
}

RDT_EXPORT int rdt_capture_end(const char *dir, const char *relay_dir)
{
	uint64_t last = 0;
	int ret = rdt_capture_clock(dir, &last, true);

	return ret ? ret : copy_file(relay_dir, "dropped", dir, "dropped");
}

RDT_EXPORT void rdt_capture_undo(const char *dir)
{
	char path[600];

	for (size_t i = 0; begin_files[i]; i++)
		if (!path_of(path, sizeof(path), dir, begin_files[i]))
			unlink(path);
	if (!path_of(path, sizeof(path), dir, RDT_SAVED_COUNTERS))
		unlink(path);
}

FILE *rdt_capture_open_header(const char *dir, char *path, size_t len)
{
	int ret = path_of(path, len, dir, RDT_SAVED_HEADER);

	if (ret) {
		errno = -ret;
		return NULL;
	}
	return fopen(path, "rb");
}

uint64_t rdt_capture_n_subbufs(const char *dir)
{
	unsigned long long n = 0;
	char path[600];
	FILE *f;

	if (path_of(path, sizeof(path), dir, "n_subbufs"))
		return 0;
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &n) != 1)
		n = 0;
	fclose(f);
	return n;
}

int rdt_capture_dropped_start(const char *dir, char *path, size_t len)
{
	/* none: the live module's directory, counted from now */
	return path_of(path, len, dir, has_file(dir, RDT_SAVED_DROPPED_START) ?
		       RDT_SAVED_DROPPED_START : "dropped");
}

bool rdt_capture_finished(const char *dir)
{
	return has_file(dir, "dropped");
}

int rdt_capture_clock_path(const char *dir, char *path, size_t len)
{
	return path_of(path, len, dir, RDT_SAVED_CLOCK);
}
