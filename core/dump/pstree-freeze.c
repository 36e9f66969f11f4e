// SPDX-License-Identifier: GPL-2.0-only
/*
 * Freezing a whole tree.  A process is frozen before its children are
 * listed: a stopped process cannot fork, so once every process of the list
 * is stopped, their children files are final.  A child that is still
 * running when it is found may fork until it is frozen in turn; its own
 * children are listed after that.  A last pass over every process proves
 * the list complete.
 *
 * Zombies are not frozen (ptrace cannot attach to them) and need not be: a
 * zombie stays one while its parent is stopped.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "crf-private.h"
#include "freeze-cgroup.h"
#include "guardian.h"
#include "procfs.h"
#include "pstree-dump.h"
#include "util.h"

#define MAX_PASSES	       1000
#define CGROUP_TREE_TIMEOUT_MS 10000

/* Parse a children file ("12 34 ") and append the PIDs to @kids. */
static int parse_children(const char *text, pid_t **kids, size_t *n, size_t *cap)
{
	const char *p = text;
	char *end;

	for (;;) {
		long v = strtol(p, &end, 10);

		if (end == p)
			return 0;
		p = end;
		if (*n == *cap) {
			size_t c = *cap ? *cap * 2 : 16;
			pid_t *k = reallocarray(*kids, c, sizeof(*k));

			if (!k)
				return crf_error_errno(ENOMEM, "children list");
			*kids = k;
			*cap = c;
		}
		(*kids)[(*n)++] = (pid_t)v;
	}
}

/* The children of every thread of the frozen process @p (malloc'd). */
static int list_children(const struct crf_proc *p, pid_t **kids, size_t *n)
{
	size_t cap = 0;
	int r = 0;

	*kids = NULL;
	*n = 0;
	for (size_t i = 0; r >= 0 && i < p->frozen->n_tids; i++) {
		_cleanup_free_ char *text = NULL;
		char path[96];

		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)p->pid,
			 (int)p->frozen->tids[i]);
		r = crf_read_file(path, &text);
		if (r < 0)
			r = crf_error_errno(r, "%s", path);
		else
			r = parse_children(text, kids, n, &cap);
	}
	if (r < 0) {
		free(*kids);
		*kids = NULL;
	}
	return r;
}

/*
 * Add @pid to the tree: frozen, or listed as a zombie.  A process that
 * exits while it is being frozen is a zombie now (its parent is stopped),
 * unless its parent does not wait for children: then it is gone, and 0.
 */
static int add_process(struct crf_pstree *t, pid_t pid, enum crf_freeze_mode mode)
{
	struct crf_proc p;
	int r;

	r = crf_proc_read_stat(pid, &p);
	if (r == -ESRCH)
		return 0;
	if (r >= 0 && !p.zombie) {
		struct crf_frozen *f = NULL;
		int fr = crf_freeze(pid, mode, &f);

		/* Read again: frozen now, or it ended meanwhile. */
		r = crf_proc_read_stat(pid, &p);
		if (r == -ESRCH && fr < 0)
			return 0;
		if (fr < 0 && (r < 0 || !p.zombie))
			r = fr;
		if (r < 0) {
			crf_unfreeze(f);
			return r;
		}
		p.frozen = f;
		if (f)
			p.n_threads = (unsigned int)f->n_tids;
	}
	if (r >= 0)
		r = pstree_add(t, &p);
	if (r < 0 && p.frozen)
		crf_unfreeze(p.frozen);
	if (r >= 0 && p.zombie)
		crf_debug("pid %d is a zombie (exit status %#x)", (int)pid, p.exit_status);
	return r;
}

/* Add the children of @t->procs[i] not listed yet; how many were added. */
static int add_children(struct crf_pstree *t, size_t i)
{
	_cleanup_free_ pid_t *kids = NULL;
	size_t n, before = t->n;
	int r;

	if (!t->procs[i].frozen)
		return 0;
	r = list_children(&t->procs[i], &kids, &n);
	for (size_t k = 0; r >= 0 && k < n; k++)
		if (!pstree_find(t, kids[k]))
			r = add_process(t, kids[k], CRF_FREEZE_PTRACE);
	return r < 0 ? r : (int)(t->n - before);
}

/* The tree of @root, @root frozen as @mode says and the others with ptrace. */
static int walk(pid_t root, enum crf_freeze_mode mode, struct crf_pstree *t)
{
	struct crf_proc p;
	int r, added;

	*t = (struct crf_pstree){0};
	r = crf_proc_read_stat(root, &p);
	if (r == -ESRCH)
		return crf_error_errno(ESRCH, "no process with PID %d", (int)root);
	if (r >= 0 && p.zombie)
		r = crf_error_errno(ESRCH, "pid %d is a zombie: there is nothing to dump",
				    (int)root);
	if (r >= 0)
		r = crf_freeze(root, mode, &p.frozen);
	if (r >= 0) {
		p.n_threads = (unsigned int)p.frozen->n_tids;
		r = pstree_add(t, &p);
		if (r < 0)
			crf_unfreeze(p.frozen);
	}
	for (int pass = 0; r >= 0; pass++) {
		if (pass == MAX_PASSES) {
			r = crf_error_errno(EAGAIN, "the tree of pid %d keeps growing", (int)root);
			break;
		}
		added = 0;
		/* t->n grows as children are found: they are scanned in this pass too. */
		for (size_t i = 0; r >= 0 && i < t->n; i++) {
			r = add_children(t, i);
			added += r > 0 ? r : 0;
		}
		if (r >= 0 && !added)
			break;
	}
	if (r < 0) {
		pstree_unfreeze(t);
		pstree_free(t);
	}
	return r;
}

/*
 * The whole tree frozen through its cgroup v2 (freeze-cgroup.c), when it is
 * exactly the processes of a cgroup subtree: the subtree is frozen, the tree
 * walked with ptrace (nothing of it can fork or exit meanwhile, so the
 * first pass is final), checked to be the subtree's processes, and thawed:
 * the threads stay in their ptrace-stops.  1 when done; 0 when the cgroup
 * freezer does not fit or @mode is ptrace (then ptrace, as before); or
 * -errno, nothing left frozen or seized (a cgroup frozen by someone else:
 * refused, and left frozen).
 */
static int freeze_by_cgroup(pid_t root, enum crf_freeze_mode mode, struct crf_pstree *t)
{
	struct cgroup_pids pids = {0};
	char dir[4096], why[512];
	struct timespec t0, t1;
	int r, c;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = cgroup_tree_plan(root, dir, sizeof(dir), why, sizeof(why));
	if (r == -EBUSY && mode != CRF_FREEZE_PTRACE)
		crf_debug("freeze: the tree of pid %d: not using the cgroup freezer: %s", (int)root,
			  why);
	if (r < 0 || mode == CRF_FREEZE_PTRACE)
		return r == -EBUSY ? 0 : r;
	guardian_frozen(dir);
	r = crf_cgroup_freeze(dir, CGROUP_TREE_TIMEOUT_MS);
	if (r < 0) {
		guardian_thawed();
		return r;
	}
	r = walk(root, CRF_FREEZE_PTRACE, t);
	if (r >= 0)
		r = crf__fault("cgroup frozen tree", false);
	for (size_t i = 0; r >= 0 && i < t->n; i++) {
		size_t cap = pids.cap;

		if (pids.n == cap) {
			pid_t *v = reallocarray(pids.v, cap = cap ? cap * 2 : 64, sizeof(*v));

			if (!v) {
				r = crf_error_errno(ENOMEM, "pid list");
				break;
			}
			pids.v = v;
			pids.cap = cap;
		}
		pids.v[pids.n++] = t->procs[i].zombie ? 0 : t->procs[i].pid;
	}
	if (r >= 0)
		r = cgroup_tree_exact(dir, &pids, why, sizeof(why));
	cgroup_pids_free(&pids);
	c = cgroup_thaw(dir);
	if (c >= 0)
		guardian_thawed();
	if (r >= 0 && c < 0)
		r = c;
	if (r < 0 && t->n) {
		pstree_unfreeze(t);
		pstree_free(t);
	}
	if (r == -EBUSY)
		crf_debug("freeze: the tree of pid %d: not using the cgroup freezer: %s", (int)root,
			  why);
	if (r < 0)
		return r == -EBUSY ? 0 : r;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	crf_info("tree of pid %d: %zu process%s frozen with the cgroup freezer (%s) in %.2f ms",
		 (int)root, t->n, t->n == 1 ? "" : "es", dir,
		 (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
	return 1;
}

int pstree_freeze(pid_t root, enum crf_freeze_mode mode, struct crf_pstree *t)
{
	struct timespec t0, t1;
	int r = 0;

	*t = (struct crf_pstree){0};
	r = freeze_by_cgroup(root, mode, t);
	if (r)
		return r < 0 ? r : 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = walk(root, mode, t);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (r >= 0)
		crf_info("tree of pid %d: %zu process%s frozen in %.2f ms", (int)root, t->n,
			 t->n == 1 ? "" : "es",
			 (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
	return r;
}

int pstree_unfreeze(struct crf_pstree *t)
{
	int r = 0;

	for (size_t i = t->n; i-- > 0;) {
		int c = crf_unfreeze(t->procs[i].frozen);

		t->procs[i].frozen = NULL;
		if (r >= 0 && c < 0)
			r = c;
	}
	return r;
}

/*
 * Children before parents: a child killed first stays a zombie of its
 * stopped parent until that one dies too, and both then go to the reaper.
 */
int pstree_kill(struct crf_pstree *t)
{
	int r = 0;

	for (size_t i = t->n; i-- > 0;) {
		int c = t->procs[i].frozen ? crf_frozen_kill(t->procs[i].frozen) : 0;

		t->procs[i].frozen = NULL;
		if (r >= 0 && c < 0)
			r = c;
	}
	return r;
}
