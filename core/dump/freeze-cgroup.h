/* SPDX-License-Identifier: GPL-2.0-only */
/* freeze-cgroup.h - the cgroup v2 freezer, as freeze.c uses it. */
#ifndef CRF_FREEZE_CGROUP_H
#define CRF_FREEZE_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * The directory of @pid's cgroup v2 in crf's view, when @pid is the only
 * process in it (and in its descendants), the cgroup is not the root and is
 * not frozen already.  0 with @dir filled; -EBUSY with the reason in @why
 * (no log: auto mode falls back to ptrace); other errors are logged.
 */
int cgroup_of_lone(pid_t pid, char *dir, size_t len, char *why, size_t why_len);

/* Write 1 to DIR/cgroup.freeze and wait until cgroup.events says frozen. */
int crf_cgroup_freeze(const char *dir, int timeout_ms);

/* Write 0 to DIR/cgroup.freeze (the kernel thaws at once). */
int cgroup_thaw(const char *dir);

#endif
