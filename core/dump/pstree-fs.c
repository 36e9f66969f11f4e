// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the dump checks across the frozen tree, before it saves anything,
 * about the processes' file-system state: which of them share one fd
 * table, and where each one's cwd and root are.  What a restore could not
 * make again is refused here, while the tree still runs, rather than
 * failing or changing the restore after the dump killed it.
 *
 * A table shared by processes (clone(CLONE_FILES) without CLONE_THREAD)
 * is found with kcmp(KCMP_FILES), which orders the kernel's table
 * pointers, so sorting the processes by it puts the sharers side by side
 * (n log n calls).  The first of them in the tree's order (the dump's
 * order: the files plugin saves the table's fds with that process, and
 * nothing with the others) is the one the others name; the restore
 * creates them with CLONE_FILES (rst-plan.c, rst-fdtable.c).  A process
 * outside the tree with a table of the tree is found among all of
 * /proc, each compared by a binary search over the tree's tables.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/kcmp.h>
#include <linux/magic.h>

#include "pstree-dump.h"
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
	p = n > 0 && n <= INT32_MAX ? pstree_find(t, (pid_t)n) : NULL;
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

int pstree_check_fs(const struct crf_pstree *t)
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

/* The order kcmp(@type) gives two processes' objects; a failure is left in *@err. */
static int kcmp_order(pid_t a, pid_t b, int type, int *err)
{
	long r = a == b ? 0 : syscall(SYS_kcmp, a, b, type, 0, 0);

	if (r == 0 || r == 1 || r == 2)
		return r == 0 ? 0 : r == 1 ? -1 : 1;
	if (!*err)
		*err = r < 0 ? errno : EINVAL;
	return a < b ? -1 : 1;
}

/* The order kcmp(KCMP_FILES) gives two processes' fd tables. */
static int files_cmp(pid_t a, pid_t b, int *err)
{
	return kcmp_order(a, b, KCMP_FILES, err);
}

struct by_table {
	const struct crf_pstree *t;
	int type; /* KCMP_FILES, KCMP_FS */
	int err;
};

static int table_order(const void *a, const void *b, void *arg)
{
	struct by_table *bt = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int r = kcmp_order(bt->t->procs[x].pid, bt->t->procs[y].pid, bt->type, &bt->err);

	return r ? r : x < y ? -1 : x > y;
}

/* One more than the highest fd number of @pid's table (at least 1). */
static int table_end(pid_t pid)
{
	char path[64];
	struct dirent *e;
	int end = 1;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return crf_error_errno(errno, "%s", path);
	while ((e = readdir(d)))
		if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && atoi(e->d_name) >= end)
			end = atoi(e->d_name) + 1;
	closedir(d);
	return end;
}

/* A thread that unshared its fd table would get its process's back (CLONE_FILES). */
static int check_threads(const struct crf_proc *p)
{
	int err = 0;

	for (size_t k = 1; p->frozen && k < p->frozen->n_tids; k++)
		if (files_cmp(p->pid, p->frozen->tids[k], &err) || err)
			return crf_error_errno(
				err ? err : ENOTSUP,
				"pid %d: its thread %d has an fd table of its own "
				"(unshare(CLONE_FILES)), which the restore cannot give it",
				(int)p->pid, (int)p->frozen->tids[k]);
	return 0;
}

/* Each run of processes with one table: the first of the tree holds it, the others name it. */
static int note_groups(struct crf_pstree *t, const size_t *v, size_t n)
{
	int err = 0;

	for (size_t i = 0, j; i < n; i = j) {
		size_t first = v[i];
		int end;

		for (j = i + 1; j < n && !files_cmp(t->procs[v[i]].pid, t->procs[v[j]].pid, &err);
		     j++)
			first = v[j] < first ? v[j] : first;
		if (err)
			return crf_error_errno(err, "kcmp(KCMP_FILES) of the tree's processes");
		if (j - i < 2)
			continue;
		end = table_end(t->procs[first].pid);
		if (end < 0)
			return end;
		t->procs[first].fd_table_end = end;
		for (size_t k = i; k < j; k++)
			if (v[k] != first)
				t->procs[v[k]].files_of = t->procs[first].pid;
		crf_info("pid %d shares its fd table with %zu other process(es) of the tree",
			 (int)t->procs[first].pid, j - i - 1);
	}
	return 0;
}

/*
 * A process outside the tree with a table of the tree (binary search over
 * @v, in kcmp order): after a restore the two would have two tables.
 */
static int check_outsider(const struct crf_pstree *t, const size_t *v, size_t n, pid_t x)
{
	size_t lo = 0, hi = n;
	int err = 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = files_cmp(x, t->procs[v[mid]].pid, &err);

		/* Gone, or one crf may not inspect (PID 1 of a container): not compared. */
		if (err == ESRCH || err == EPERM)
			return 0;
		if (err)
			return crf_error_errno(err, "kcmp(KCMP_FILES) of pid %d and pid %d", (int)x,
					       (int)t->procs[v[mid]].pid);
		if (!c)
			return crf_error_errno(
				ENOTSUP,
				"pid %d shares its fd table with pid %d (CLONE_FILES) "
				"but is not in the tree: a restore would give pid %d "
				"one of its own",
				(int)x, (int)t->procs[v[mid]].pid, (int)t->procs[v[mid]].pid);
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return 0;
}

static int check_outsiders(const struct crf_pstree *t, const size_t *v, size_t n)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int r = 0;

	if (!d)
		return crf_error_errno(errno, "/proc");
	while (r >= 0 && (e = readdir(d))) {
		pid_t x = (pid_t)atoi(e->d_name);

		if (x > 0 && x != getpid() && !pstree_find(t, x))
			r = check_outsider(t, v, n, x);
	}
	closedir(d);
	return r;
}

/*
 * Processes that share one cwd, root and umask (CLONE_FS without
 * CLONE_THREAD; vfork() does not) would get one each: refused, naming two.
 * @v: the live processes.
 */
static int check_fs_shared(const struct crf_pstree *t, size_t *v, size_t n)
{
	struct by_table bt = {t, KCMP_FS, 0};

	qsort_r(v, n, sizeof(*v), table_order, &bt);
	for (size_t i = 1; !bt.err && i < n; i++)
		if (!kcmp_order(t->procs[v[i - 1]].pid, t->procs[v[i]].pid, KCMP_FS, &bt.err) &&
		    !bt.err)
			return crf_error_errno(ENOTSUP,
					       "pid %d and pid %d share one cwd, root and umask "
					       "(CLONE_FS), which crf does not restore yet",
					       (int)t->procs[v[i - 1]].pid,
					       (int)t->procs[v[i]].pid);
	return bt.err ? crf_error_errno(bt.err, "kcmp(KCMP_FS) of the tree's processes") : 0;
}

int pstree_fdtables(struct crf_pstree *t)
{
	struct by_table bt = {t, KCMP_FILES, 0};
	_cleanup_free_ size_t *v = calloc(t->n + 1, sizeof(*v));
	size_t n = 0;
	int r = 0;

	if (!v)
		return crf_error_errno(ENOMEM, "process tree");
	for (size_t i = 0; r >= 0 && i < t->n; i++)
		if (!t->procs[i].zombie) {
			v[n++] = i;
			r = check_threads(&t->procs[i]);
		}
	if (r >= 0)
		r = check_fs_shared(t, v, n);
	if (r < 0)
		return r;
	qsort_r(v, n, sizeof(*v), table_order, &bt);
	if (bt.err)
		return crf_error_errno(bt.err, "kcmp(KCMP_FILES) of the tree's processes");
	r = note_groups(t, v, n);
	return r < 0 ? r : check_outsiders(t, v, n);
}
