// SPDX-License-Identifier: GPL-2.0-only
/*
 * ABI 1.6: the cgroup v2 each restored process is created in (clone3's
 * CLONE_INTO_CGROUP), as a plugin says in restore-prepare; core/restore's
 * rst-fork.c asks here for each process it forks.  Set before the tree is
 * forked, the table is inherited by every restored process that forks
 * children, and only read there.
 */
#include <errno.h>
#include <stdlib.h>

#include <crf/plugin.h>

#include "crf-private.h"

struct into {
	pid_t pid;
	int fd;
};

static struct into *table;
static size_t n_table;

int crf_rst_clone_into_cgroup(struct crf_ctx *ctx, pid_t pid, int dirfd)
{
	struct into *v;

	if (crf_ctx_stage(ctx) != CRF_STAGE_RESTORE_PREPARE || pid <= 0 || dirfd < 0)
		return -EINVAL;
	for (size_t i = 0; i < n_table; i++)
		if (table[i].pid == pid)
			return -EEXIST;
	v = realloc(table, (n_table + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	table = v;
	table[n_table++] = (struct into){pid, dirfd};
	return 0;
}

int crf__clone_cgroup_fd(pid_t pid)
{
	for (size_t i = 0; i < n_table; i++)
		if (table[i].pid == pid)
			return table[i].fd;
	return -1;
}
