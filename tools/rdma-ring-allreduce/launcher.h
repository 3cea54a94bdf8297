/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RRA_LAUNCHER_H
#define RRA_LAUNCHER_H

#include "options.h"

/*
 * -N: fork o->launch ranks, each calling rank_fn(o) with rank/nranks set,
 * and wait. Returns the worst exit code (a rank killed by a signal counts as
 * a runtime failure). If a rank fails, the others get timeout + 5 s to notice
 * on their own, then are killed, so the launcher itself never hangs.
 */
int launcher_run(struct options *o, int (*rank_fn)(struct options *));

#endif
