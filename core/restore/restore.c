// SPDX-License-Identifier: GPL-2.0-only
/*
 * The restore, step by step (DESIGN.md, "Restore"): read the tree and plan
 * it, restore-prepare, create the tree with its PIDs, sessions and groups
 * (rst-tree.h); in each live process apply the task state crf can set and
 * run the plugins' restore-task hooks, then hand over to the restorer; in
 * crf wait for every restorer's "ready", run restore-finish and the
 * devices' restore-resume, and let them all go.  A failure kills every process created, so nothing
 * is left behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cpu.h"
#include "rst-task.h"
#include "restore.h"
#include "rst-tree.h"
#include "task-attrs.h"
#include "seccomp.h"
#include "task-image.h"
#include "rst-apply.h"
#include "validate.h"

static void fill_signals(struct crf_rst_args *a, const Crf__Core__TaskCore *tc)
{
	for (size_t i = 0; i < tc->n_sigactions; i++) {
		const Crf__Core__SigAction *s = tc->sigactions[i];

		if (s->sig < 1 || s->sig > CRF_RST_NSIG)
			continue;
		a->sa[s->sig - 1] =
			(struct crf_rst_sigaction_arg){s->handler, s->flags, s->restorer, s->mask};
	}
	a->blocked = tc->blocked;
	a->sas_sp = tc->sas_sp;
	a->sas_size = tc->sas_size;
	a->sas_flags = (int32_t)tc->sas_flags;
	for (size_t i = 0; i < CRF_ITIMER_VALUES && i < tc->n_itimers; i++)
		a->itimer[i / CRF_ITIMER_WORDS][i % CRF_ITIMER_WORDS] = tc->itimers[i];
	a->rseq_ptr = tc->rseq_ptr;
	a->rseq_len = tc->rseq_len;
	a->rseq_sig = tc->rseq_sig;
}

static void fill_creds(struct crf_rst_creds *a, const Crf__Core__Creds *c)
{
	a->uid = c->uid;
	a->euid = c->euid;
	a->suid = c->suid;
	a->fsuid = c->fsuid;
	a->gid = c->gid;
	a->egid = c->egid;
	a->sgid = c->sgid;
	a->fsgid = c->fsgid;
	a->n_groups = 0;
	for (size_t i = 0; i < c->n_groups && i < CRF_RST_MAX_GROUPS; i++)
		a->groups[a->n_groups++] = c->groups[i];
	a->cap_eff = c->cap_eff;
	a->cap_prm = c->cap_prm;
	a->cap_inh = c->cap_inh;
	a->cap_bnd = c->cap_bnd;
	a->cap_amb = c->cap_amb;
	a->securebits = c->securebits;
	a->no_new_privs = c->no_new_privs;
}

static int add_thread(struct crf_rst_task *t, const Crf__Core__ThreadCore *th)
{
	struct crf_rst_thread_arg a = {0};
	uint8_t(*buf)[128] = NULL;
	int r;

	/* The pending records were checked by task_read(), the rest by rst_validate_cores(). */
	if (th->regs.len != sizeof(a.regs) || th->n_ns_tid < 1 || th->n_ns_tid > CRF_RST_MAX_LEVELS)
		return crf_error_errno(EBADMSG, "thread %d: bad record", (int)th->tid);
	for (size_t i = 0; i < th->n_ns_tid; i++)
		a.set_tid[i] = th->ns_tid[th->n_ns_tid - 1 - i];
	a.n_set_tid = (uint32_t)th->n_ns_tid;
	memcpy(a.regs, th->regs.data, sizeof(a.regs));
	crf_regs_fix_restart(a.regs);
	a.blocked = th->blocked;
	a.sas_sp = th->sas_sp;
	a.sas_size = th->sas_size;
	a.sas_flags = (int32_t)th->sas_flags;
	a.clear_tid = th->clear_tid;
	a.robust_head = th->robust_head;
	a.robust_len = th->robust_len;
	a.rseq_ptr = th->rseq_ptr;
	a.rseq_len = th->rseq_len;
	a.rseq_sig = th->rseq_sig;
	a.sched_policy = th->sched_policy;
	a.sched_priority = th->sched_priority;
	a.nice = th->nice;
	a.ioprio = th->has_ioprio ? (int32_t)th->ioprio : -1;
	memcpy(a.affinity, th->affinity.data,
	       th->affinity.len < sizeof(a.affinity) ? th->affinity.len : sizeof(a.affinity));
	snprintf(a.comm, sizeof(a.comm), "%s", th->comm);
	if (th->creds) {
		a.own_creds = 1;
		fill_creds(&a.creds, th->creds);
	}
	attrs_fill_thread(&a, th);
	if (th->n_pending_private) {
		buf = calloc(th->n_pending_private, sizeof(*buf));
		if (!buf)
			return crf_error_errno(ENOMEM, "thread %d", (int)th->tid);
	}
	for (size_t i = 0; i < th->n_pending_private; i++)
		memcpy(buf[i], th->pending_private[i].data, sizeof(buf[i]));
	r = rst_task_add_thread(t, &a, th->xsave.data, th->xsave.len, buf, th->n_pending_private);
	free(buf);
	return r;
}

/*
 * Threads: threads[0] is the leader (its clear_tid and robust list; the rest
 * of its state is TaskCore's), then the others.  Old images have none.
 */
static int fill_threads(struct crf_rst_task *t, const Crf__Core__TaskCore *tc)
{
	int r = 0;

	if (!tc->n_threads)
		return 0;
	if (tc->threads[0]->tid != tc->pid)
		return crf_error_errno(EBADMSG, "pid %d: first thread record is %d", (int)tc->pid,
				       (int)tc->threads[0]->tid);
	t->a.have_thread_state = 1;
	t->a.clear_tid = tc->threads[0]->clear_tid;
	t->a.robust_head = tc->threads[0]->robust_head;
	t->a.robust_len = tc->threads[0]->robust_len;
	for (size_t i = 1; r >= 0 && i < tc->n_threads; i++)
		r = add_thread(t, tc->threads[i]);
	return r;
}

static int fill_state(struct crf_rst_task *t, const Crf__Core__TaskCore *tc)
{
	int r = 0;

	fill_signals(&t->a, tc);
	fill_creds(&t->a.creds, tc->creds);
	t->a.restore_creds = 1;
	for (size_t i = 0; i < tc->n_rlimits && i < 16; i++) {
		const Crf__Core__Rlimit *l = tc->rlimits[i];

		if (l->resource >= 16)
			continue;
		t->a.rlimits[l->resource][0] = l->cur;
		t->a.rlimits[l->resource][1] = l->max;
		if (l->resource >= t->a.n_rlimits)
			t->a.n_rlimits = l->resource + 1;
	}
	memcpy(t->a.regs, tc->regs.data, sizeof(t->a.regs));
	crf_regs_fix_restart(t->a.regs);
	for (size_t i = 0; r >= 0 && i < tc->n_timers; i++) {
		const Crf__Core__PosixTimer *p = tc->timers[i];
		struct crf_rst_timer_arg ta = {
			.id = p->id,
			.clock = p->clock,
			.signo = p->signo,
			.notify = p->notify,
			.notify_tid = p->notify_tid,
			.value = p->value,
			.interval_ns = p->interval_ns,
			.value_ns = p->value_ns,
			.overrun = p->overrun,
		};

		r = rst_task_add_timer(t, &ta);
	}
	/* Whole siginfo records: task_read() checked them. */
	for (size_t i = 0; r >= 0 && i < tc->n_pending_shared; i++)
		r = rst_task_add_pending(t, tc->pending_shared[i].data, true);
	for (size_t i = 0; r >= 0 && i < tc->n_pending_private; i++)
		r = rst_task_add_pending(t, tc->pending_private[i].data, false);
	if (r >= 0)
		r = rst_task_set_xsave(t, tc->xsave.data, tc->xsave.len);
	if (r >= 0)
		r = fill_threads(t, tc);
	if (r >= 0)
		r = attrs_fill(t, tc);
	return r;
}

/* Tell crf why the task could not reach the restorer. */
static void report(int fd, int err, const char *what)
{
	struct crf_rst_status st = {.result = err};

	snprintf(st.error, sizeof(st.error), "%s", what);
	if (write(fd, &st, sizeof(st)) < 0)
		crf_error_errno(errno, "reporting to crf");
}

/*
 * What every restored process needs: the core images are read by crf
 * before anything is created (a missing or bad one fails the restore
 * early), and each process finds its own in the memory it inherited.
 */
struct task_ctx {
	struct crf_plugin_set *set;
	struct crf_imgdir *dir;
	const struct crf_pstree *t;
	Crf__Core__TaskCore **tcs; /* by tree index; NULL for zombies */
	/* crf_rst_object()'s, filled by restore-prepare, inherited by the tasks */
	struct crf_objects objects;
};

/* restore-prepare's host table: only crf_rst_object (task: the table). */
static int prepare_object(void *objects, const char *key, int (*create)(void *arg), void *arg,
			  bool *created)
{
	return crf__objects_get(objects, key, create, arg, created);
}

static const struct crf_host_ops prepare_host_ops = {
	.rst_object = prepare_object,
};

static int read_cores(struct task_ctx *c)
{
	int r = 0;

	c->tcs = calloc(c->t->n, sizeof(*c->tcs));
	if (!c->tcs)
		return crf_error_errno(ENOMEM, "restore");
	for (size_t i = 0; r >= 0 && i < c->t->n; i++)
		if (!c->t->procs[i].zombie)
			r = task_read(c->dir, c->t->procs[i].pid, &c->tcs[i]);
	return r;
}

static void free_cores(struct task_ctx *c)
{
	for (size_t i = 0; c->tcs && i < c->t->n; i++)
		if (c->tcs[i])
			protobuf_c_message_free_unpacked(&c->tcs[i]->base, NULL);
	free(c->tcs);
}

/*
 * Each restored process first opens its program's fds wherever crf has room
 * (the files plugin), so crf's soft RLIMIT_NOFILE must allow as many as the
 * program's did, however low crf's limits were when it was started.
 * rst_exec() then asks, in each process, for what moving them needs.
 */
static int fd_room(const struct task_ctx *c)
{
	uint64_t need = 0;

	for (size_t i = 0; i < c->t->n; i++)
		for (size_t j = 0; c->tcs[i] && j < c->tcs[i]->n_rlimits; j++) {
			const Crf__Core__Rlimit *l = c->tcs[i]->rlimits[j];

			if (l->resource == RLIMIT_NOFILE && l->cur != RLIM_INFINITY &&
			    l->cur + 64 > need)
				need = l->cur + 64;
		}
	return rst_fd_room(need, false);
}

/* Runs in each live restored process: never returns into crf's code on success. */
static int restore_task(void *arg, pid_t pid, int status_fd, int go_fd,
			const struct crf_rst_fdtable *fdt)
{
	struct task_ctx *c = arg;
	const Crf__Core__TaskCore *tc = c->tcs[pstree_index(c->t, pid)];
	struct crf_rst_task t;
	int r;

	rst_task_init(&t);
	if (fdt)
		t.fdt = *fdt;
	/* The task's copy: what it adds is its own. */
	t.objects = &c->objects;
	r = rst_open_mem(&t);
	if (r >= 0)
		r = task_apply(tc);
	if (r >= 0)
		r = plugin_set_run_task(c->set, CRF_STAGE_RESTORE_TASK, c->dir, pid,
					&crf_restore_host_ops, &t);
	if (r >= 0)
		r = task_apply_root(&t, tc);
	if (r >= 0)
		r = fill_state(&t, tc);
	if (r >= 0)
		r = seccomp_fill(&t, tc);
	if (r >= 0)
		r = rst_exec(&t, status_fd, go_fd);
	report(status_fd, r,
	       crf__log_captured() ?: "setting up the task before the restorer failed (see above)");
	rst_task_free(&t);
	return r;
}

/* In a session leader, right after its setsid(). */
static int restore_session(void *arg, pid_t pid)
{
	const struct task_ctx *c = arg;

	return plugin_set_run_task(c->set, CRF_STAGE_RESTORE_SESSION, c->dir, pid, NULL, NULL);
}

/*
 * Right after a process is forked, before its children: crf_rst_object()
 * works here as in restore-prepare, and what this process adds to the table
 * its children inherit (a pair the process itself must make).
 */
static int restore_premap(void *arg, pid_t pid)
{
	struct task_ctx *c = arg;

	return plugin_set_run_task(c->set, CRF_STAGE_RESTORE_PREMAP, c->dir, pid, &prepare_host_ops,
				   &c->objects);
}

static int exit_status(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

static int wait_root(pid_t pid)
{
	int status;

	for (;;) {
		if (waitpid(pid, &status, 0) == pid)
			return exit_status(status);
		if (errno != EINTR)
			return crf_error_errno(errno, "waiting for pid %d", (int)pid);
	}
}

/* Create the tree, bring it to "ready", finish and let it go; or kill it all. */
static int run_tree(struct crf_rst_tree *rt, struct crf_plugin_set *set, struct crf_imgdir *dir,
		    struct crf_objects *objects)
{
	pid_t root = rt->t->procs[0].pid;
	int r;

	r = rst_tree_start(rt);
	if (r >= 0)
		r = crf__fault("tree ready", false);
	if (r >= 0)
		r = plugin_set_run(set, CRF_STAGE_RESTORE_FINISH, dir, root);
	/*
	 * Every task holds what it needs by now.  crf's copies go before the
	 * tree runs: a writable fd on a memfd would make the program's
	 * execveat() of it fail with ETXTBSY.
	 */
	crf__objects_free(objects);
	/* Device state (ABI 1.5): each task in its restorer, none let go yet. */
	for (size_t i = 0; r >= 0 && i < rt->t->n; i++)
		if (!rt->t->procs[i].zombie)
			r = plugin_set_run_task(set, CRF_STAGE_RESTORE_RESUME, dir,
						rt->t->procs[i].pid, NULL, NULL);
	if (r >= 0)
		r = crf__fault("releasing the tree", false);
	if (r >= 0)
		r = rst_tree_release(rt);
	if (r < 0) {
		/* What restore-resume set up goes before the processes it was for. */
		plugin_set_run(set, CRF_STAGE_RESTORE_UNDO, dir, root);
		rst_tree_kill(rt);
		crf_error("restore of the tree of pid %d failed; every process it created was "
			  "killed",
			  (int)root);
	}
	return r;
}

int crf_restore(const struct crf_restore_opts *o, struct crf_plugin_set *set,
		struct crf_imgdir *dir, pid_t root)
{
	struct task_ctx ctx = {.set = set, .dir = dir};
	struct crf_rst_tree rt = {0};
	struct crf_pstree t;
	int r, c;

	r = pstree_read(dir, root, &t);
	if (r < 0)
		return r;
	ctx.t = &t;
	r = rst_plan(&t, &rt);
	if (r >= 0)
		r = read_cores(&ctx);
	if (r >= 0)
		r = rst_validate_cores(dir, &t, ctx.tcs);
	if (r >= 0)
		r = attrs_check_restore(&t, ctx.tcs, o->detach);
	if (r >= 0)
		r = cpu_check_tree(dir, ctx.tcs, t.n);
	if (r >= 0)
		r = seccomp_restore_check(ctx.tcs, t.n);
	if (r >= 0)
		r = crf__fault("restore planned", false);
	if (r >= 0)
		r = fd_room(&ctx);
	if (r >= 0) {
		rt.pid_wait_ms = o->pid_wait_ms;
		rt.task_fn = restore_task;
		rt.session_fn = restore_session;
		rt.premap_fn = restore_premap;
		rt.task_arg = &ctx;
		r = plugin_set_run_task(set, CRF_STAGE_RESTORE_PREPARE, dir, root,
					&prepare_host_ops, &ctx.objects);
	}
	if (r >= 0)
		r = run_tree(&rt, set, dir, &ctx.objects);
	/* Whatever happened: plugins let go of what restore-prepare took. */
	c = plugin_set_run(set, CRF_STAGE_RESTORE_CLEANUP, dir, root);
	if (r >= 0)
		r = c;
	crf__objects_free(&ctx.objects);
	if (r >= 0)
		crf_info("tree of pid %d restored: %zu process%s", (int)root, t.n,
			 t.n == 1 ? "" : "es");
	rst_tree_free(&rt);
	free_cores(&ctx);
	pstree_free(&t);
	if (r < 0 || o->detach)
		return r < 0 ? r : 0;
	return wait_root(root);
}
