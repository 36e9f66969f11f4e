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
			strcmp(kind, "net")
				? ""
				: " (crf dump --external net[INODE]:KEY leaves it "
				  "out, for crf restore --inherit-fd fd[N]:KEY to join)");
	}
	return 0;
}

/* "KIND:[INODE]" (a namespace file's link or nsfs mount root) of a claimed namespace: its root. */
static pid_t claimed(const char *link, const char **kind_out)
{
	for (size_t k = 0; k < sizeof(scanned) / sizeof(scanned[0]); k++) {
		size_t len = strlen(scanned[k]);
		uint64_t id;
		pid_t root;

		if (strncmp(link, scanned[k], len) || strncmp(link + len, ":[", 2))
			continue;
		id = strtoull(link + len + 2, NULL, 10);
		root = ns_share_root(scanned[k], id);
		if (!root || ns_external_id(scanned[k], id))
			return 0;
		*kind_out = scanned[k];
		return root;
	}
	return 0;
}

/* An fd of @pid on a claimed namespace (the outsider can setns into it later). */
static int check_fds(pid_t pid)
{
	char path[64], link[96], fdp[384];
	const char *kind;
	struct dirent *e;
	pid_t root = 0;
	ssize_t n;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return 0;
	while (!root && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(fdp, sizeof(fdp), "%s/%s", path, e->d_name);
		n = readlink(fdp, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		root = claimed(link, &kind);
	}
	closedir(d);
	if (root)
		return crf_error_errno(
			ENOTSUP,
			"pid %d: %s namespace %s is also held by pid %d, outside the "
			"tree, by its fd %s: a restore would make a copy of it, "
			"which that fd is not on",
			(int)root, kind, link, (int)pid, strrchr(fdp, '/') + 1);
	return 0;
}

/* A mount of crf's mount namespace holding one ("ip netns add" makes those). */
static int check_mounts(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096], root[256], where[2048];
	const char *kind;
	int r = 0;

	if (!f)
		return crf_error_errno(errno, "/proc/self/mountinfo");
	while (r >= 0 && fgets(line, sizeof(line), f)) {
		pid_t owner;

		if (!strstr(line, " - nsfs ") ||
		    sscanf(line, "%*d %*d %*s %255s %2047s", root, where) != 2)
			continue;
		owner = claimed(root, &kind);
		if (owner)
			r = crf_error_errno(
				ENOTSUP,
				"pid %d: %s namespace %s is also held by the mount at %s "
				"(crf's mount namespace), outside the tree: a restore "
				"would make a copy of it, which that mount is not of%s",
				(int)owner, kind, root, where,
				strcmp(kind, "net") ? ""
						    : " (crf dump --external "
						      "net[INODE]:KEY leaves it out, "
						      "for crf restore --inherit-fd "
						      "fd[N]:KEY to join)");
	}
	fclose(f);
	return r;
}

static int check_process(pid_t pid)
{
	char path[64];
	struct dirent *e;
	int r = check_fds(pid);
	DIR *d;

	if (r < 0)
		return r;
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
	r = check_mounts();
	if (r < 0)
		return r;
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
		crf_info(
			"no process outside the tree is in its namespaces (%zu looked at, %.1f ms)",
			n,
			(double)(t1.tv_sec - t0.tv_sec) * 1e3 +
				(double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	return r;
}

int ns_dump_finish(struct crf_ctx *ctx)
{
	int r = ns_external_dump_finish();

	(void)ctx;
	return r < 0 ? r : outside_check();
}

int ns_dump_cleanup(struct crf_ctx *ctx)
{
	(void)ctx;
	ns_share_dump_cleanup();
	return 0;
}
