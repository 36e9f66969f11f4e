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

/* A set of PIDs (the tree freezer's). */
struct cgroup_pids {
	pid_t *v;
	size_t n, cap;
};
bool cgroup_pids_has(const struct cgroup_pids *s, pid_t pid);
void cgroup_pids_free(struct cgroup_pids *s);

/*
 * The cgroup v2 directory (crf's view) that holds the cgroups of every
 * process of the running tree of @root, when it is not the root cgroup,
 * not frozen already, and holds no process that is not of the tree.  0
 * with @dir filled; -EBUSY with the reason in @why (not logged: the
 * caller falls back to freezing with ptrace); -EOPNOTSUPP (logged) when a
 * process of the tree is in a cgroup frozen by someone else (v2, or the v1
 * freezer's, found through /proc/self/mountinfo), whatever the freezer:
 * it stays frozen, and the dump is refused; other errors are logged.
 */
int cgroup_tree_plan(pid_t root, char *dir, size_t len, char *why, size_t why_len);

/*
 * Once the cgroup @dir is frozen and the tree listed: does @dir's subtree
 * hold exactly the processes of @tree (a PID <= 0 there: a zombie, not
 * looked for)?  0, or -EBUSY with the reason in @why; others logged.
 */
int cgroup_tree_exact(const char *dir, const struct cgroup_pids *tree, char *why, size_t why_len);

#endif
