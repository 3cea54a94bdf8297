/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Ring files whose process is gone: the one place that decides it, for the
 * plugin (its own file at exit, other processes' at init) and the reader
 * (librdmatrace's nccl-plugin source: when a process it reads is gone,
 * what to remove at its start).  Static functions in a header, as
 * np_ring.h's: the plugin links against libc only, and the reader's
 * library is built from its own folder.
 *
 * A ring file is DIR/rdmatrace-nccl.<pid>; its header records the
 * process's start time (/proc/PID/stat field 22) and its pid namespace
 * (the inode of /proc/self/ns/pid).  The pid alone is not an identity: a
 * pid is reused, and a /dev/shm shared by containers holds the pids of
 * several namespaces.  So a file's process is gone when its pid is free,
 * or held by a process that started at another time; a file of another
 * pid namespace is never judged.  DIR is world-writable: nothing here
 * follows a link, opens anything but a regular file without blocking, or
 * removes a file of another user (root: of any user; the sweep's other
 * checks are the same), of a live process, or one a reader holds.
 */
#ifndef RDT_NP_STALE_H
#define RDT_NP_STALE_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "np_ring.h"

/* The pid a ring file's name gives, 0: not a ring file's name. */
static inline uint32_t rdt_np_name_pid(const char *name)
{
	const char *n = name + strlen(RDT_NP_PREFIX);
	unsigned long pid;
	char *end;

	if (strncmp(name, RDT_NP_PREFIX, strlen(RDT_NP_PREFIX)) ||
	    *n < '1' || *n > '9')
		return 0;
	errno = 0;
	pid = strtoul(n, &end, 10);
	return *end || errno || pid > INT_MAX ? 0 : (uint32_t)pid;
}

/* This process's pid namespace, 0 if /proc cannot tell. */
static inline uint64_t rdt_np_pidns(void)
{
	struct stat st;

	return stat("/proc/self/ns/pid", &st) ? 0 : (uint64_t)st.st_ino;
}

/* The start of /proc/@pid/@name, NUL-terminated in @buf; false if it
 * cannot be read (no such process, or /proc hides it). */
static inline bool rdt_np_proc_read(uint32_t pid, const char *name,
				    char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/%s", pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	return true;
}

/* When process @pid started (clock ticks after boot), 0 if it cannot be
 * read: no such process, or /proc hides it. */
static inline uint64_t rdt_np_start_time(uint32_t pid)
{
	char buf[1024], *p;

	if (!rdt_np_proc_read(pid, "stat", buf, sizeof(buf)))
		return 0;
	/* The name (field 2) may hold spaces and ')': count after its end.
	 * Field 3 follows ") "; 22 is 19 fields further. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return 0;
	p += 2;
	for (int f = 3; f < 22; f++) {
		p = strchr(p, ' ');
		if (!p)
			return 0;
		p++;
	}
	return strtoull(p, NULL, 10);
}

/*
 * Whether the process that made a ring file is gone: @start_time and
 * @pidns as its header has them (0: not recorded, as in layout 1, or not
 * known to the plugin).  Unknowns never make a process gone that kill()
 * finds: false means alive or cannot tell.
 */
static inline bool rdt_np_gone(uint32_t pid, uint64_t start_time,
			       uint64_t pidns)
{
	uint64_t now;

	if (!pid || pid > INT_MAX)
		return false;	/* kill() would signal a group */
	if (pidns && pidns != rdt_np_pidns())
		return false;	/* another namespace's pid: not ours */
	if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
		return true;
	if (!start_time)
		return false;
	/* EPERM too: another user's process.  Its start time is readable
	 * unless /proc hides it (hidepid), and then it counts as alive. */
	now = rdt_np_start_time(pid);
	return now && now != start_time;
}

/*
 * A live reader watches DIR by holding a read lock on it (an open file
 * description lock: it goes with the reader's descriptor, and testing for
 * it takes none, so two plugins testing at once do not see each other).
 * While one does, ring files are its to remove, once drained: a process
 * that ends before the reader's next scan leaves its file for it.
 */
static inline int rdt_np_watch(const char *dir)
{
	struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET };
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0 && fcntl(fd, F_OFD_SETLK, &fl) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static inline bool rdt_np_watched(const char *dir)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	bool w;

	if (fd < 0)
		return false;
	w = fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
	close(fd);
	return w;
}

/* Remove @path if it still is the file @st described: never a successor
 * made under the same name. */
static inline bool rdt_np_unlink_same(int dfd, const char *path,
				      const struct stat *st)
{
	struct stat now;

	return !fstatat(dfd, path, &now, AT_SYMLINK_NOFOLLOW) &&
	       now.st_dev == st->st_dev && now.st_ino == st->st_ino &&
	       !unlinkat(dfd, path, 0);
}

/* rdt_np_sweep: whole files (the magic written) are the caller's, who
 * drains them before it removes them (the reader). */
#define RDT_NP_SWEEP_KEEP_WHOLE	1u

/*
 * Remove DIR's ring files whose process is gone; returns how many.  Only
 * files that say who made them (layout 2 on, the name's pid, a start time,
 * this pid namespace), of this user (root: any), that no reader holds (its flock;
 * held here while the file is judged and removed, so none attaches
 * meanwhile).
 */
static inline unsigned int rdt_np_sweep(const char *dir, unsigned int flags)
{
	uint64_t ns = rdt_np_pidns();
	uid_t me = geteuid();
	unsigned int n = 0;
	struct dirent *e;
	DIR *d;

	if (!ns)
		return 0;
	d = opendir(dir);
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		uint32_t pid = rdt_np_name_pid(e->d_name);
		struct rdt_np_shm h;
		struct stat st;
		int fd;

		if (!pid)
			continue;
		fd = openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW |
			    O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!fstat(fd, &st) && S_ISREG(st.st_mode) &&
		    (!me || st.st_uid == me) &&
		    !flock(fd, LOCK_EX | LOCK_NB) &&
		    pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
		    h.layout >= 2 && h.layout <= RDT_NP_LAYOUT &&
		    h.pid == pid && h.start_time && h.pidns == ns &&
		    !((flags & RDT_NP_SWEEP_KEEP_WHOLE) &&
		      !memcmp(h.magic, RDT_NP_SHM_MAGIC, sizeof(h.magic))) &&
		    rdt_np_gone(pid, h.start_time, h.pidns) &&
		    rdt_np_unlink_same(dirfd(d), e->d_name, &st))
			n++;
		close(fd);
	}
	closedir(d);
	return n;
}

#endif
