// SPDX-License-Identifier: GPL-2.0-only
/*
 * The core's records, checked against each other and the tree before the
 * first fork (validate.h).  Before these checks, a record the forked child
 * could not use (a thread whose registers are not a user_regs_struct, more
 * groups or limits than the restorer takes, a duplicated signal) was found
 * out, or silently cut, only in the child, after the tree had started.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/user.h>

#include <crf/layout.h>

#include "cpu.h"
#include "crf-restorer.h"
#include "rst-tree.h"
#include "seccomp.h"
#include "task-image.h"
#include "validate.h"

/* The restorer's limits: arrays of these sizes in struct crf_rst_args. */
#define XSAVE_MIN 512
#define XSAVE_MAX (1u << 20)

#define bad(img, fmt, ...) crf_error_errno(EBADMSG, "%s: record 0: " fmt, img, ##__VA_ARGS__)

static int check_creds(const char *img, const char *field, const Crf__Core__Creds *c)
{
	if (c && c->n_groups > CRF_RST_MAX_GROUPS)
		return bad(img, "%s.groups: %zu groups, the restorer takes %d", field, c->n_groups,
			   CRF_RST_MAX_GROUPS);
	return 0;
}

/* Is @tid a thread of @tc, by its TID at any namespace level? */
static bool is_thread(const Crf__Core__TaskCore *tc, int32_t tid)
{
	if (tid == tc->pid)
		return true;
	for (size_t i = 0; i < tc->n_threads; i++)
		for (size_t l = 0; l < tc->threads[i]->n_ns_tid; l++)
			if (tc->threads[i]->ns_tid[l] == tid)
				return true;
	return false;
}

/* Each signal once, 1-64; each resource once, below RLIM_NLIMITS. */
static int check_tables(const char *img, const Crf__Core__TaskCore *tc)
{
	uint64_t sigs = 0, res = 0;

	for (size_t i = 0; i < tc->n_sigactions; i++) {
		uint32_t s = tc->sigactions[i]->sig;

		if (s < 1 || s > CRF_RST_NSIG || (sigs & (1ull << (s - 1))))
			return bad(img, "TaskCore.sigactions[%zu].sig: %u is out of range or twice",
				   i, s);
		sigs |= 1ull << (s - 1);
	}
	for (size_t i = 0; i < tc->n_rlimits; i++) {
		uint32_t l = tc->rlimits[i]->resource;

		if (l >= RLIM_NLIMITS || (res & (1ull << l)))
			return bad(img,
				   "TaskCore.rlimits[%zu].resource: %u is out of range or twice", i,
				   l);
		res |= 1ull << l;
	}
	if (tc->n_itimers > CRF_ITIMER_VALUES)
		return bad(img, "TaskCore.itimers: %zu values, expected at most %d", tc->n_itimers,
			   CRF_ITIMER_VALUES);
	for (size_t i = 0; i < tc->n_timers; i++) {
		const Crf__Core__PosixTimer *p = tc->timers[i];

		for (size_t j = 0; j < i; j++)
			if (p->id == tc->timers[j]->id)
				return bad(img, "TaskCore.timers[%zu].id: timer %d twice", i,
					   (int)p->id);
		if (p->id < 0 || p->signo < 0 || p->signo > CRF_RST_NSIG)
			return bad(img, "TaskCore.timers[%zu]: id %d, signal %d", i, (int)p->id,
				   (int)p->signo);
		/* The restorer makes it last, past the point of no return: its thread must be. */
		if ((p->notify & SIGEV_THREAD_ID) && !is_thread(tc, p->notify_tid))
			return bad(img, "TaskCore.timers[%zu].notify_tid: %d is no thread of it", i,
				   (int)p->notify_tid);
	}
	if (tc->xsave.len < XSAVE_MIN || tc->xsave.len > XSAVE_MAX)
		return bad(img, "TaskCore.xsave: %zu bytes, expected %u to %u", tc->xsave.len,
			   XSAVE_MIN, XSAVE_MAX);
	return check_creds(img, "TaskCore.creds", tc->creds);
}

/* Thread @i of process @p: its registers, XSAVE area and PIDs, one per level. */
static int check_thread(const char *img, const struct crf_proc *p, const Crf__Core__TaskCore *tc,
			size_t i)
{
	const Crf__Core__ThreadCore *th = tc->threads[i];
	char field[64];

	snprintf(field, sizeof(field), "TaskCore.threads[%zu]", i);
	if (i == 0 && th->tid != tc->pid)
		return bad(img, "%s.tid: %d, not the leader %d", field, (int)th->tid, (int)tc->pid);
	for (size_t j = 0; j < i; j++)
		if (tc->threads[j]->tid == th->tid)
			return bad(img, "%s.tid: thread %d twice", field, (int)th->tid);
	if (th->tid <= 0)
		return bad(img, "%s.tid: %d", field, (int)th->tid);
	/* The leader's registers and XSAVE area are TaskCore's own. */
	if (i > 0 && th->regs.len != sizeof(struct user_regs_struct))
		return bad(img, "%s.regs: %zu bytes, expected %zu", field, th->regs.len,
			   sizeof(struct user_regs_struct));
	if (i > 0 && th->xsave.len && (th->xsave.len < XSAVE_MIN || th->xsave.len > XSAVE_MAX))
		return bad(img, "%s.xsave: %zu bytes, expected 0 or %u to %u", field, th->xsave.len,
			   XSAVE_MIN, XSAVE_MAX);
	if (th->n_ns_tid != crf_proc_levels(p) || th->n_ns_tid > CRF_RST_MAX_LEVELS)
		return bad(img, "%s.ns_tid: %zu PIDs, the process has %u namespace levels", field,
			   th->n_ns_tid, crf_proc_levels(p));
	if (th->ns_tid[0] != th->tid)
		return bad(img, "%s.ns_tid[0]: %d, not the thread's TID %d", field,
			   (int)th->ns_tid[0], (int)th->tid);
	for (size_t l = 0; l < th->n_ns_tid; l++)
		if (th->ns_tid[l] <= 0)
			return bad(img, "%s.ns_tid[%zu]: %d", field, l, (int)th->ns_tid[l]);
	return check_creds(img, field, th->creds);
}

/* The record of live process @p, from @img. */
static int check_core(const char *img, const struct crf_proc *p, const Crf__Core__TaskCore *tc)
{
	int r;

	if (tc->pid != p->pid)
		return bad(img, "TaskCore.pid: %d, the file is PID %d's", (int)tc->pid,
			   (int)p->pid);
	if (tc->n_threads && p->n_threads && tc->n_threads != p->n_threads)
		return bad(img, "TaskCore.threads: %zu threads, %s says %u", tc->n_threads,
			   CRF_IMG_PSTREE, p->n_threads);
	r = check_tables(img, tc);
	for (size_t i = 0; r >= 0 && i < tc->n_threads; i++)
		r = check_thread(img, p, tc, i);
	return r;
}

/* Every core-PID.img is a live process of the tree. */
struct names {
	struct crf_imgdir *dir;
	const struct crf_pstree *t;
};

static int check_name(void *arg, const char *name, pid_t pid)
{
	const struct names *n = arg;
	struct crf_imgdir *dir = n->dir;
	const struct crf_proc *p = pstree_find(n->t, pid);

	if (!p || p->zombie)
		return crf_error_errno(EBADMSG, "%s/%s: PID %d is not a live process of %s",
				       crf_imgdir_path(dir), name, (int)pid, CRF_IMG_PSTREE);
	return 0;
}

int rst_validate_cores(struct crf_imgdir *dir, const struct crf_pstree *t,
		       Crf__Core__TaskCore *const *tcs)
{
	char img[4200];
	int r = 0;

	for (size_t i = 0; r >= 0 && i < t->n; i++) {
		if (!tcs[i])
			continue;
		snprintf(img, sizeof(img), "%s/core-%d.img", crf_imgdir_path(dir),
			 (int)t->procs[i].pid);
		r = check_core(img, &t->procs[i], tcs[i]);
	}
	if (r >= 0)
		r = crf_imgdir_each_task(dir, "core", check_name, &(struct names){dir, t});
	return r;
}

int crf_restore_validate(struct crf_imgdir *dir, pid_t root)
{
	struct crf_rst_tree rt = {0};
	Crf__Core__TaskCore **tcs;
	struct crf_pstree t;
	int r;

	r = pstree_read(dir, root, &t);
	if (r < 0)
		return r;
	tcs = calloc(t.n, sizeof(*tcs));
	r = tcs ? rst_plan(&t, &rt) : crf_error_errno(ENOMEM, "validate");
	for (size_t i = 0; r >= 0 && i < t.n; i++)
		if (!t.procs[i].zombie)
			r = task_read(dir, t.procs[i].pid, &tcs[i]);
	if (r >= 0)
		r = rst_validate_cores(dir, &t, tcs);
	if (r >= 0)
		r = cpu_check_tree(dir, tcs, t.n);
	if (r >= 0)
		r = seccomp_restore_check(tcs, t.n);
	for (size_t i = 0; tcs && i < t.n; i++)
		if (tcs[i])
			protobuf_c_message_free_unpacked(&tcs[i]->base, NULL);
	free(tcs);
	rst_tree_free(&rt);
	pstree_free(&t);
	return r;
}
