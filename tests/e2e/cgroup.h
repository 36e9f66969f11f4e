/* SPDX-License-Identifier: GPL-2.0-only */
/* A scratch cgroup v2 for one workload, so that crf can use its freezer. */
#ifndef CRF_E2E_CGROUP_H
#define CRF_E2E_CGROUP_H

#include <stddef.h>

/*
 * Create a child named @name of our own cgroup v2 (the hierarchy is found in
 * /proc/self/mountinfo, wherever it is mounted); its path goes to @path.
 * 0 or -errno.
 */
int e2e_cgroup_create(const char *name, char *path, size_t len);
/* Move the calling process into @path; 0 or -errno. */
int e2e_cgroup_enter(const char *path);
/*
 * Remove @path and any cgroups a workload made below it, waiting briefly
 * for each to empty; 0 or -errno.
 */
int e2e_cgroup_remove(const char *path);

/*
 * Create a child named @name of our own cgroup in every cgroup v1 hierarchy
 * mounted (named ones too; a cpuset one gets its parent's CPUs and memory
 * nodes, without which no task may join it).  Their paths go to @paths;
 * returns how many (0: no v1 hierarchy is mounted), or -errno after
 * removing those made.
 */
int e2e_cgroup_v1_create(const char *name, char (*paths)[4096], int max);

#endif
