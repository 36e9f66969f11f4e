// SPDX-License-Identifier: GPL-2.0-only
/*
 * A task's ids as its own user namespace sees them.  /proc/PID/status gives
 * them as the reader's (crf's) user namespace does; the restorer sets them
 * from inside the task's namespace (the ns plugin's "user" handler joins
 * it first), so a task in a user namespace other than crf's has them
 * translated here through its namespace's maps, which /proc/PID/uid_map
 * also gives as crf's namespace sees them.  An id its namespace does not map
 * cannot be set there again: refused.  Capabilities are per namespace
 * already.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "procfs.h"
#include "task-dump.h"
#include "util.h"

#define MAX_EXTENTS 340

struct extent {
	uint32_t inside, outside, count;
};

static int read_map(pid_t pid, const char *which, struct extent *e, size_t *n)
{
	_cleanup_free_ char *text = NULL;
	unsigned long in, out, count;
	char path[64], *p;
	int r, used;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, which);
	r = crf_read_file(path, &text);
	if (r < 0)
		return crf_error_errno(r, "%s", path);
	*n = 0;
	for (p = text;
	     *n < MAX_EXTENTS && sscanf(p, " %lu %lu %lu%n", &in, &out, &count, &used) == 3;
	     p += used)
		e[(*n)++] = (struct extent){(uint32_t)in, (uint32_t)out, (uint32_t)count};
	return 0;
}

static int map_id(const struct extent *e, size_t n, uint32_t *id)
{
	for (size_t i = 0; i < n; i++)
		if (*id >= e[i].outside && *id - e[i].outside < e[i].count) {
			*id = e[i].inside + (*id - e[i].outside);
			return 0;
		}
	return -ERANGE;
}

static int map_ids(pid_t pid, const char *what, const struct extent *e, size_t n, uint32_t *ids,
		   size_t n_ids, const char *link)
{
	for (size_t i = 0; i < n_ids; i++) {
		uint32_t id = ids[i];

		if (map_id(e, n, &ids[i]) < 0)
			return crf_error_errno(ENOTSUP,
					       "pid %d: %s %u is not mapped in its user namespace "
					       "%s: it cannot be set there again",
					       (int)pid, what, id, link);
	}
	return 0;
}

int creds_in_task_userns(pid_t pid, struct crf_proc_status *st)
{
	_cleanup_free_ struct extent *e = calloc(MAX_EXTENTS, sizeof(*e));
	char path[64], link[64];
	struct stat mine, its;
	size_t n;
	ssize_t len;
	int r;

	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	if (stat("/proc/self/ns/user", &mine) < 0 || stat(path, &its) < 0)
		return crf_error_errno(errno, "pid %d: %s", (int)pid, path);
	if (mine.st_ino == its.st_ino && mine.st_dev == its.st_dev)
		return 0;
	if (!e)
		return -ENOMEM;
	len = readlink(path, link, sizeof(link) - 1);
	link[len < 0 ? 0 : len] = '\0';
	r = read_map(pid, "uid_map", e, &n);
	if (r >= 0)
		r = map_ids(pid, "uid", e, n, st->uid, 4, link);
	if (r >= 0)
		r = read_map(pid, "gid_map", e, &n);
	if (r >= 0)
		r = map_ids(pid, "gid", e, n, st->gid, 4, link);
	if (r >= 0)
		r = map_ids(pid, "supplementary gid", e, n, st->groups, st->n_groups, link);
	return r;
}
