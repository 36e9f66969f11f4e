// SPDX-License-Identifier: GPL-2.0-only
/*
 * The cgroup mounts of crf restore, held open from restore-prepare on: a
 * restored process writes its cgroup.procs files after the ns plugin may
 * have pivoted it into its container's root (restore-premap), where crf's
 * paths (/sys/fs/cgroup/...) do not exist.  Each path is opened relative
 * to an fd on the root of the cgroup mount it lies in, which every
 * restored process inherits with crf's memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <crf/cleanup.h>

#include "cgroup-restore.h"

int cg_mnt_fds_open(struct cg_restore *rs)
{
	_cleanup_fclose_ FILE *f = fmemopen(rs->mountinfo, strlen(rs->mountinfo), "r");
	char line[8192];

	if (!f)
		return crf_log_errno(CRF_LOG_ERROR, errno, "reading mountinfo");
	while (fgets(line, sizeof(line), f)) {
		char mp[CG_PATH_MAX], *sep = strstr(line, " - ");
		struct cg_mnt_fd *v;
		int fd;

		if (!sep || (strncmp(sep, " - cgroup ", 10) && strncmp(sep, " - cgroup2 ", 11)) ||
		    sscanf(line, "%*s %*s %*s %*s %4095s", mp) != 1 || strchr(mp, '\\'))
			continue;
		fd = open(mp, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			continue; /* covered or gone: its paths are opened by name */
		v = realloc(rs->mnt_fds, (rs->n_mnt_fds + 1) * sizeof(*v));
		if (v)
			rs->mnt_fds = v;
		if (!v || !(v[rs->n_mnt_fds].mp = strdup(mp))) {
			close(fd);
			return crf_log_errno(CRF_LOG_ERROR, ENOMEM, "cgroup mounts");
		}
		v[rs->n_mnt_fds++].fd = fd;
	}
	return 0;
}

int cg_open_at_mount(const struct cg_restore *rs, const char *file, int flags)
{
	const struct cg_mnt_fd *best = NULL;
	const char *rest;
	size_t len = 0;

	for (size_t i = 0; rs && i < rs->n_mnt_fds; i++) {
		size_t n = strlen(rs->mnt_fds[i].mp);

		if (n > len && !strncmp(file, rs->mnt_fds[i].mp, n) && file[n] == '/') {
			best = &rs->mnt_fds[i];
			len = n;
		}
	}
	if (!best)
		return open(file, flags);
	/* "/sys/fs/cgroup/x//cgroup.procs" for the root: relative, never absolute. */
	for (rest = file + len; *rest == '/'; rest++)
		;
	return openat(best->fd, *rest ? rest : ".", flags);
}

void cg_mnt_fds_close(struct cg_restore *rs)
{
	for (size_t i = 0; i < rs->n_mnt_fds; i++) {
		close(rs->mnt_fds[i].fd);
		free(rs->mnt_fds[i].mp);
	}
	free(rs->mnt_fds);
	rs->mnt_fds = NULL;
	rs->n_mnt_fds = 0;
}
