// SPDX-License-Identifier: GPL-2.0
/*
 * rdt-clockpair: the true offset between two guests' clocks, for checking an
 * estimate made from traffic (tests/multihost).  Both guests map the same
 * memory (tests/vm/run --shm: an ivshmem-plain PCI device, BAR 2) and play
 * NTP over it with no network in between: B writes a request, A answers with
 * its CLOCK_REALTIME and CLOCK_MONOTONIC, B reads its own clocks before and
 * after.  A's reading lies between B's two, so each round trip bounds
 * B - A; the bounds of all rounds intersect (both clocks tick at the host's
 * rate under QEMU).  Memory is shared through the host's RAM, so a round
 * trip takes microseconds where both vCPUs run.
 *
 *   rdt-clockpair serve SESSION [SECONDS]   guest A: answer until B is done
 *   rdt-clockpair measure SESSION [ROUNDS]  guest B: print the offsets
 *
 * SESSION (1, 2, ...) tells one exchange from the ones before it in the
 * same memory: each side waits for the other's (SECONDS, default 300).
 *   rdt-clockpair step SECONDS          add SECONDS (may be negative,
 *                                       fractional) to CLOCK_REALTIME at once
 *                                       (clock_adjtime ADJ_SETOFFSET: exact)
 *
 * measure prints one line:
 *   real_lo=NS real_hi=NS mono_lo=NS mono_hi=NS rounds=N rtt_min=NS at_mono=NS
 * B - A lies in [lo, hi] for each clock (at_mono: B's CLOCK_MONOTONIC then).  Exit 1 on a timeout or an empty
 * intersection.  RDT_CLOCKPAIR_SHM=FILE maps FILE instead (a test on one
 * host: the offsets are then 0 within the bounds).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/timex.h>
#include <time.h>
#include <unistd.h>

/* seq = session << 40 | round (from 1); round all ones: the session is done. */
#define SESSION_SHIFT 40
#define ROUND_MASK ((1ull << SESSION_SHIFT) - 1)
#define DONE(session) ((uint64_t)(session) << SESSION_SHIFT | ROUND_MASK)

struct slot {
	uint64_t seq;
	int64_t real, mono;
} __attribute__((aligned(64)));

struct page {
	struct slot req, ans;
};

static int64_t now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "rdt-clockpair: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int read_hex(const char *dir, const char *file, unsigned *v)
{
	char p[512];
	FILE *f;
	int ok;

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	f = fopen(p, "r");
	if (!f)
		return -1;
	ok = fscanf(f, "%x", v) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

/* BAR 2 of the first ivshmem device (1af4:1110), or the file $RDT_CLOCKPAIR_SHM. */
static struct page *map_shm(void)
{
	const char *base = "/sys/bus/pci/devices", *file = getenv("RDT_CLOCKPAIR_SHM");
	DIR *d;
	struct dirent *e;
	char dir[512], p[600];

	if (file) {
		int fd = open(file, O_RDWR);
		void *m;

		if (fd < 0 || ftruncate(fd, 4096))
			die(file);
		m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED)
			die("mmap");
		return m;
	}
	d = opendir(base);
	if (!d)
		die(base);
	while ((e = readdir(d))) {
		unsigned ven, dev;
		void *m;
		int fd;

		snprintf(dir, sizeof(dir), "%s/%s", base, e->d_name);
		if (read_hex(dir, "vendor", &ven) || read_hex(dir, "device", &dev) ||
		    ven != 0x1af4 || dev != 0x1110)
			continue;
		/* Memory decoding on (firmware usually did it already). */
		snprintf(p, sizeof(p), "%s/enable", dir);
		fd = open(p, O_WRONLY);
		if (fd >= 0) {
			if (write(fd, "1", 1) < 0) {
				/* already enabled, or not needed */
			}
			close(fd);
		}
		snprintf(p, sizeof(p), "%s/resource2", dir);
		fd = open(p, O_RDWR | O_SYNC);
		if (fd < 0)
			die(p);
		m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED)
			die("mmap resource2");
		closedir(d);
		return m;
	}
	fprintf(stderr, "rdt-clockpair: no ivshmem device (tests/vm/run --shm FILE)\n");
	exit(1);
}

static uint64_t load(uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void store(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* Spin a while, then yield: a long wait (the other guest still booting) must not starve. */
static void pause_for(uint64_t spins)
{
	if (spins > 200000)
		usleep(1000);
	else if (spins > 20000)
		sched_yield();
	else
		__builtin_ia32_pause();
}

static int serve(uint64_t session, int secs)
{
	struct page *pg = map_shm();
	int64_t end = now(CLOCK_MONOTONIC) + (int64_t)secs * 1000000000;
	uint64_t last = 0, spins = 0, n = 0;

	for (;;) {
		uint64_t s = load(&pg->req.seq);

		if (s == DONE(session))
			break;
		if (s == last || s >> SESSION_SHIFT != session) {
			if (now(CLOCK_MONOTONIC) > end) {
				fprintf(stderr, "rdt-clockpair: serve: no request for %d s\n", secs);
				return 1;
			}
			pause_for(++spins);
			continue;
		}
		pg->ans.real = now(CLOCK_REALTIME);
		pg->ans.mono = now(CLOCK_MONOTONIC);
		store(&pg->ans.seq, s);
		last = s;
		spins = 0;
		n++;
	}
	printf("served=%" PRIu64 "\n", n);
	return 0;
}

#define JITTER_NS 10000

static int measure(uint64_t session, int rounds)
{
	struct page *pg = map_shm();
	int64_t rlo = INT64_MIN, rhi = INT64_MAX, mlo = INT64_MIN, mhi = INT64_MAX;
	int64_t rtt_min = INT64_MAX, deadline = now(CLOCK_MONOTONIC) + 300ll * 1000000000;

	for (int i = 0; i < rounds; i++) {
		uint64_t seq = session << SESSION_SHIFT | (uint64_t)(i + 1), spins = 0;
		int64_t r0, m0, r1, m1;

		r0 = now(CLOCK_REALTIME);
		m0 = now(CLOCK_MONOTONIC);
		store(&pg->req.seq, seq);
		while (load(&pg->ans.seq) != seq) {
			if (now(CLOCK_MONOTONIC) > deadline) {
				fprintf(stderr, "rdt-clockpair: measure: no answer (is the other guest serving?)\n");
				return 1;
			}
			pause_for(++spins);
		}
		m1 = now(CLOCK_MONOTONIC);
		r1 = now(CLOCK_REALTIME);
		/* A's reading lies between B's: r0 <= a + (B - A) <= r1. */
		if (r0 - pg->ans.real > rlo)
			rlo = r0 - pg->ans.real;
		if (r1 - pg->ans.real < rhi)
			rhi = r1 - pg->ans.real;
		if (m0 - pg->ans.mono > mlo)
			mlo = m0 - pg->ans.mono;
		if (m1 - pg->ans.mono < mhi)
			mhi = m1 - pg->ans.mono;
		if (m1 - m0 < rtt_min)
			rtt_min = m1 - m0;
	}
	store(&pg->req.seq, DONE(session));
	/*
	 * Two TCG guests' clocks jitter against each other by tens of ns
	 * (their TSCs are the host's clock read at different moments), and
	 * over 2000 rounds under load the bounds can miss each other by
	 * that much (a cold CI run: mono by 94 ns).  Up to JITTER_NS the
	 * interval is the gap itself, said as jitter_ns; beyond, a clock
	 * stepped, and the truth is unknown.
	 */
	int64_t rj = rlo > rhi ? rlo - rhi : 0, mj = mlo > mhi ? mlo - mhi : 0;

	if (rj > JITTER_NS || mj > JITTER_NS) {
		printf("real_lo=%" PRId64 " real_hi=%" PRId64 " mono_lo=%" PRId64
		       " mono_hi=%" PRId64 "\n", rlo, rhi, mlo, mhi);
		fprintf(stderr, "rdt-clockpair: the bounds miss each other by %" PRId64
			" ns (a clock stepped?)\n", rj > mj ? rj : mj);
		return 1;
	}
	if (rj) {
		int64_t t = rlo;

		rlo = rhi;
		rhi = t;
	}
	if (mj) {
		int64_t t = mlo;

		mlo = mhi;
		mhi = t;
	}
	printf("real_lo=%" PRId64 " real_hi=%" PRId64 " mono_lo=%" PRId64 " mono_hi=%" PRId64
	       " rounds=%d rtt_min=%" PRId64 " at_mono=%" PRId64 " jitter_ns=%" PRId64 "\n",
	       rlo, rhi, mlo, mhi, rounds, rtt_min, now(CLOCK_MONOTONIC), rj > mj ? rj : mj);
	return 0;
}

static int step(const char *arg)
{
	struct timex tx = { .modes = ADJ_SETOFFSET | ADJ_NANO };
	char *end;
	double v = strtod(arg, &end);
	int64_t ns;

	if (end == arg || *end) {
		fprintf(stderr, "rdt-clockpair: step: '%s' is not a number of seconds\n", arg);
		return 2;
	}
	ns = (int64_t)(v * 1e9 + (v < 0 ? -0.5 : 0.5));
	/* tv_usec holds nanoseconds with ADJ_NANO, and must be in [0, 1e9). */
	tx.time.tv_sec = ns / 1000000000;
	tx.time.tv_usec = ns % 1000000000;
	if (tx.time.tv_usec < 0) {
		tx.time.tv_sec -= 1;
		tx.time.tv_usec += 1000000000;
	}
	if (clock_adjtime(CLOCK_REALTIME, &tx) < 0)
		die("clock_adjtime ADJ_SETOFFSET");
	printf("stepped_ns=%" PRId64 "\n", ns);
	return 0;
}

int main(int argc, char **argv)
{
	long session = argc > 2 ? atol(argv[2]) : 0;

	if (argc >= 3 && session > 0 && session < 0xffffff && !strcmp(argv[1], "serve"))
		return serve((uint64_t)session, argc > 3 ? atoi(argv[3]) : 300);
	if (argc >= 3 && session > 0 && session < 0xffffff && !strcmp(argv[1], "measure"))
		return measure((uint64_t)session, argc > 3 ? atoi(argv[3]) : 2000);
	if (argc == 3 && !strcmp(argv[1], "step"))
		return step(argv[2]);
	fprintf(stderr, "usage: rdt-clockpair serve SESSION [SECONDS] | measure SESSION [ROUNDS]"
		" | step SECONDS\n");
	return 2;
}
