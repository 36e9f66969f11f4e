// SPDX-License-Identifier: GPL-2.0-only
/*
 * A claimed namespace of the tree that a task outside the tree is in too
 * (not crf's own: those are never claimed): a restore after a kill makes
 * a copy, which the outsider is not in, so the two would no longer share
 * it.  Refused at dump-finish (the tree still frozen, every claim known)
 * naming the outside task, unless the namespace is external
 * (`crf dump --external KIND[INODE]:KEY`, external.c): then the restore
 * joins the one given, which the outsider is still in.
 *
 * One pass over /proc/PID/task/TID/ns/ of every task of the host (the
 * tree's and crf's own skipped), only for the kinds the tree has claims of;
 * docs/ns-share.md has what it costs.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <crf/log.h>

#include "ns.h"

static const char *const scanned[] = {
	"user", "mnt", "net", "uts", "ipc", "cgroup", "time", "time_for_children",
};

/* @tid of @pid in one of the claimed namespaces: 0, or -ENOTSUP (logged). */
static int check_task(pid_t pid, pid_t tid)
{
	char path[96], link[96];
	uint64_t id;
	pid_t root;
	ssize_t n;

	for (size_t k = 0; k < sizeof(scanned) / sizeof(scanned[0]); k++) {
		const char *kind = scanned[k];

		if (!ns_share_has_kind(kind))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/ns/%s", (int)pid, (int)tid, kind);
		n = readlink(path, link, sizeof(link) - 1);
		if (n < 0)
			continue; /* gone, a zombie, or a kind this kernel lacks */
		link[n] = '\0';
		id = strtoull(strchr(link, '[') ? strchr(link, '[') + 1 : "0", NULL, 10);
		root = ns_share_root(kind, id);
		if (!root || ns_external_id(kind, id))
			continue;
		return crf_error_errno(
			ENOTSUP,
			"pid %d: %s namespace %s is also pid %d's, outside the tree%s%d%s: a "
			"restore would make a copy of it, which that process is not in%s",
			(int)root, kind, link, (int)pid, tid == pid ? "" : " (thread ",
			tid == pid ? 0 : (int)tid, tid == pid ? "" : ")",
			strcmp(kind, "net") ? ""
					    : " (crf dump --external net[INODE]:KEY leaves it "
					      "out, for crf restore --inherit-fd fd[N]:KEY to join)");
	}
	return 0;
}

static int check_process(pid_t pid)
{
	char path[64];
	struct dirent *e;
	int r = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return 0; /* gone */
	while (r >= 0 && (e = readdir(d))) {
		pid_t tid = (pid_t)atoi(e->d_name);

		if (tid > 0)
			r = check_task(pid, tid);
	}
	closedir(d);
	return r;
}

static int outside_check(void)
{
	struct timespec t0, t1;
	pid_t self = getpid();
	struct dirent *e;
	size_t n = 0;
	int r = 0;
	DIR *d;

	if (!ns_share_has_kind(NULL))
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	d = opendir("/proc");
	if (!d)
		return crf_error_errno(errno, "/proc");
	while (r >= 0 && (e = readdir(d))) {
		pid_t pid = (pid_t)atoi(e->d_name);

		if (pid <= 0 || pid == self || ns_share_in_tree(pid))
			continue;
		n++;
		r = check_process(pid);
	}
	closedir(d);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (r >= 0)
		crf_info("no process outside the tree is in its namespaces (%zu looked at, %.1f ms)",
			 n,
			 (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
				 (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	return r;
}

int ns_dump_finish(struct crf_ctx *ctx)
{
	(void)ctx;
	return outside_check();
}

int ns_dump_cleanup(struct crf_ctx *ctx)
{
	(void)ctx;
	ns_share_dump_cleanup();
	return 0;
}
