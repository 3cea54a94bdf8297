// SPDX-License-Identifier: GPL-2.0
/*
 * Attach every program of a BPF object (bench/hook-floor.bpf.c: empty
 * programs where the rxe source hooks) and hold them until SIGINT or
 * SIGTERM.  Prints "attached N" once they are all in place, so a script
 * can start its workload then.
 *
 *   hook-floor OBJECT
 */
#include <bpf/libbpf.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	struct bpf_object *obj;
	struct bpf_program *p;
	sigset_t set;
	int n = 0, sig;

	if (argc != 2) {
		fprintf(stderr, "usage: hook-floor OBJECT\n");
		return 2;
	}
	/* Blocked before anything attaches: a signal then waits for sigwait. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		fprintf(stderr, "hook-floor: %s: cannot open\n", argv[1]);
		return 1;
	}
	if (bpf_object__load(obj)) {
		fprintf(stderr, "hook-floor: %s: load failed\n", argv[1]);
		return 1;
	}
	bpf_object__for_each_program(p, obj) {
		if (!bpf_program__attach(p)) {
			fprintf(stderr, "hook-floor: %s: cannot attach\n",
				bpf_program__name(p));
			return 1;
		}
		n++;
	}
	printf("attached %d\n", n);
	fflush(stdout);
	sigwait(&set, &sig);
	/* The links and the object go with the process. */
	return 0;
}
