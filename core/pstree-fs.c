// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the dump checks across the frozen tree, before it saves anything,
 * about the processes' file-system state: where each one's cwd and root
 * are.  A restore chdir()s and chroot()s to the saved paths; a path that
 * cannot lead to the same directory again is refused here, while the tree
 * still runs, rather than failing the restore after the dump killed it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <linux/magic.h>

#include "pstree.h"
#include "util.h"

#define DELETED " (deleted)"

/*
 * A directory under crf's own /proc: "/proc", "/proc/sys/...", or
 * "/proc/N/..." of process N, which is the same one after the restore only
 * when N is a live process of the tree (restored with its PID).  NULL when
 * it can be restored, else why not.
 */
static const char *proc_dir_why(const struct crf_pstree *t, const char *path, const struct stat *st)
{
	const struct crf_proc *p;
	struct stat own;
	char *end;
	long n;

	if (stat("/proc/self", &own) < 0 || own.st_dev != st->st_dev || strncmp(path, "/proc", 5) ||
	    (path[5] && path[5] != '/'))
		return "on a /proc that is not crf's own";
	if (!path[5] || path[6] < '0' || path[6] > '9')
		return NULL;
	n = strtol(path + 6, &end, 10);
	if (*end && *end != '/')
		return NULL;
	p = n > 0 && n <= INT32_MAX ? crf_pstree_find(t, (pid_t)n) : NULL;
	if (!p || p->zombie)
		return "the /proc directory of a process that is not a live process of the tree "
		       "(after the restore its PID may be another process's)";
	return NULL;
}

/* Process @pid's cwd or root (@what) can be entered again after the restore. */
static int check_dir(const struct crf_pstree *t, pid_t pid, const char *what)
{
	char link[64], path[4096];
	const char *why = NULL;
	struct statfs fs;
	struct stat st;
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/%s", (int)pid, what);
	n = readlink(link, path, sizeof(path) - 1);
	if (n < 0 || stat(link, &st) < 0 || statfs(link, &fs) < 0)
		return crf_error_errno(errno, "pid %d: its %s (%s)", (int)pid, what, link);
	path[n] = '\0';
	if (st.st_nlink == 0 ||
	    (n > (ssize_t)strlen(DELETED) && !strcmp(path + n - strlen(DELETED), DELETED)))
		why = "a deleted directory, which crf cannot make again (a new one would be "
		      "another directory)";
	else if (path[0] != '/')
		why = "not reachable by a path from crf's root";
	else if (fs.f_type == PROC_SUPER_MAGIC && !strcmp(what, "root"))
		why = "under /proc";
	else if (fs.f_type == PROC_SUPER_MAGIC)
		why = proc_dir_why(t, path, &st);
	if (!why)
		return 0;
	return crf_error_errno(ENOTSUP, "pid %d: its %s %s is %s", (int)pid, what, path, why);
}

int crf_pstree_check_fs(const struct crf_pstree *t)
{
	int r = 0;

	for (size_t i = 0; r >= 0 && i < t->n; i++)
		if (!t->procs[i].zombie) {
			r = check_dir(t, t->procs[i].pid, "root");
			if (r >= 0)
				r = check_dir(t, t->procs[i].pid, "cwd");
		}
	return r;
}
