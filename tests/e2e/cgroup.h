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
/* Remove @path, waiting briefly for it to empty; 0 or -errno. */
int e2e_cgroup_remove(const char *path);

#endif
