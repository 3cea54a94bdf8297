// SPDX-License-Identifier: GPL-2.0
/* Local multi-rank launcher (-N), see launcher.h. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "launcher.h"

static pid_t *kids;
static int nkids;

/* Forward SIGINT/SIGTERM so a killed launcher leaves no ranks behind. */
static void forward(int sig)
{
	for (int i = 0; i < nkids; i++)
		if (kids[i] > 0)
			kill(kids[i], sig);
}

/* The index of a child in kids[] (its rank is first_rank + index). */
static int rank_of(pid_t pid)
{
	for (int i = 0; i < nkids; i++)
		if (kids[i] == pid)
			return i;
	return -1;
}

int launcher_run(struct options *o, int (*rank_fn)(struct options *))
{
	struct sigaction sa;
	int worst = RRA_EXIT_OK, left;
	uint64_t kill_at = 0;

	nkids = o->launch;
	kids = calloc((size_t)nkids, sizeof(*kids));
	if (!kids)
		return RRA_EXIT_FAIL;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = forward;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	fflush(NULL); /* nothing buffered may be printed twice */
	for (int r = 0; r < nkids; r++) {
		pid_t pid = fork();

		if (pid < 0) {
			rra_err("fork: %s", strerror(errno));
			forward(SIGKILL);
			return RRA_EXIT_FAIL;
		}
		if (pid == 0) {
			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
			o->rank = o->first_rank + r;
			o->launch = 0;
			fflush(NULL);
			_exit(rank_fn(o));
		}
		kids[r] = pid;
	}

	for (left = nkids; left > 0;) {
		int st, r, code;
		pid_t pid = waitpid(-1, &st, kill_at ? WNOHANG : 0);

		if (pid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pid == 0) {
			if (rra_now_ns() >= kill_at) {
				rra_err("ranks still running %d s after a failure: killing them",
					o->timeout_s + 5);
				forward(SIGKILL);
				kill_at = 0;
			} else {
				usleep(50000);
			}
			continue;
		}
		r = rank_of(pid);
		if (r < 0)
			continue;
		kids[r] = -1;
		left--;
		if (WIFSIGNALED(st)) {
			rra_err("rank %d (pid %d) killed by signal %d (%s)", o->first_rank + r, (int)pid,
				WTERMSIG(st), strsignal(WTERMSIG(st)));
			code = RRA_EXIT_FAIL;
		} else {
			code = WEXITSTATUS(st);
		}
		if (code != RRA_EXIT_OK && worst == RRA_EXIT_OK)
			kill_at = rra_now_ns() + (uint64_t)(o->timeout_s + 5) * 1000000000ull;
		/* A runtime failure outranks its consequences in other ranks. */
		if (code != RRA_EXIT_OK && (worst == RRA_EXIT_OK || code < worst))
			worst = code;
	}
	free(kids);
	kids = NULL;
	return worst;
}
