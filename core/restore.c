// SPDX-License-Identifier: GPL-2.0-only
/*
 * The restore, step by step (DESIGN.md, "Restore"): restore-prepare, fork
 * the task with its PID, in it apply the task state crf can set and run the
 * plugins' restore-task hooks, then hand over to the restorer; in crf wait
 * for the restorer's "ready", run restore-finish and let the task go.  A
 * failure kills the task, so nothing is left behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "restore-task.h"
#include "restore.h"
#include "task-dump.h"
#include "task-restore.h"

struct child {
	struct crf_plugin_set *set;
	struct crf_imgdir *dir;
	const Crf__Core__TaskCore *tc;
	int status[2], go[2];
};

static void fill_signals(struct crf_rst_args *a, const Crf__Core__TaskCore *tc)
{
	for (size_t i = 0; i < tc->n_sigactions; i++) {
		const Crf__Core__SigAction *s = tc->sigactions[i];

		if (s->sig < 1 || s->sig > CRF_RST_NSIG)
			continue;
		a->sa[s->sig - 1] = (struct crf_rst_sigaction_arg){ s->handler, s->flags,
								     s->restorer, s->mask };
	}
	a->blocked = tc->blocked;
	a->sas_sp = tc->sas_sp;
	a->sas_size = tc->sas_size;
	a->sas_flags = (int32_t)tc->sas_flags;
	for (size_t i = 0; i < 12 && i < tc->n_itimers; i++)
		a->itimer[i / 4][i % 4] = tc->itimers[i];
	a->rseq_ptr = tc->rseq_ptr;
	a->rseq_len = tc->rseq_len;
	a->rseq_sig = tc->rseq_sig;
}

static void fill_creds(struct crf_rst_args *a, const Crf__Core__Creds *c)
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
	a->restore_creds = 1;
}

static int fill_state(struct crf_rst_task *t, const Crf__Core__TaskCore *tc)
{
	int r = 0;

	fill_signals(&t->a, tc);
	fill_creds(&t->a, tc->creds);
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
			.id = p->id, .clock = p->clock, .signo = p->signo, .notify = p->notify,
			.notify_tid = p->notify_tid, .value = p->value,
			.interval_ns = p->interval_ns, .value_ns = p->value_ns,
			.overrun = p->overrun,
		};

		r = crf_rst_task_add_timer(t, &ta);
	}
	for (size_t i = 0; r >= 0 && i < tc->n_pending_shared; i++)
		r = crf_rst_task_add_pending(t, tc->pending_shared[i].data, true);
	for (size_t i = 0; r >= 0 && i < tc->n_pending_private; i++)
		r = crf_rst_task_add_pending(t, tc->pending_private[i].data, false);
	if (r >= 0)
		r = crf_rst_task_set_xsave(t, tc->xsave.data, tc->xsave.len);
	return r;
}

/* Tell crf why the task could not reach the restorer. */
static void report(int fd, int err, const char *what)
{
	struct crf_rst_status st = { .result = err };

	snprintf(st.error, sizeof(st.error), "%s", what);
	if (write(fd, &st, sizeof(st)) < 0)
		crf_error_errno(errno, "reporting to crf");
}

/* Runs in the new task: never returns into crf's code on success. */
static int child_main(void *arg)
{
	struct child *c = arg;
	struct crf_rst_task t;
	pid_t pid = getpid();
	int r;

	close(c->status[0]);
	close(c->go[1]);
	crf_rst_task_init(&t);
	r = crf_task_apply(c->tc);
	if (r >= 0)
		r = crf_plugin_set_run_task(c->set, CRF_STAGE_RESTORE_TASK, c->dir, pid,
					    &crf_restore_host_ops, &t);
	if (r >= 0)
		r = fill_state(&t, c->tc);
	if (r >= 0)
		r = crf_rst_exec(&t, c->status[1], c->go[0]);
	report(c->status[1], r, "setting up the task before the restorer failed (see above)");
	crf_rst_task_free(&t);
	return 1;
}

static int exit_status(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

static void kill_task(pid_t pid)
{
	int status;

	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
}

static int run_task(const struct crf_restore_opts *o, struct child *c, pid_t root)
{
	struct crf_rst_status st;
	char err[200] = "";
	pid_t pid;
	int r;

	r = crf_rst_fork(root, o->pid_wait_ms, child_main, c, &pid);
	close(c->status[1]);
	close(c->go[0]);
	c->status[1] = c->go[0] = -1;
	if (r < 0)
		return r;
	r = crf_rst_wait_ready(c->status[0], pid, err, sizeof(err), &st);
	if (r >= 0)
		r = crf_plugin_set_run(c->set, CRF_STAGE_RESTORE_FINISH, c->dir, pid);
	if (r >= 0)
		r = crf_rst_release(pid, c->go[1], &st);
	if (r < 0) {
		kill_task(pid);
		return r;
	}
	crf_info("pid %d restored", (int)pid);
	if (o->detach)
		return 0;
	for (;;) {
		int status;

		if (waitpid(pid, &status, 0) == pid)
			return exit_status(status);
		if (errno != EINTR)
			return crf_error_errno(errno, "waiting for pid %d", (int)pid);
	}
}

int crf_restore(const struct crf_restore_opts *o, struct crf_plugin_set *set,
		struct crf_imgdir *dir, pid_t root)
{
	Crf__Core__TaskCore *tc = NULL;
	struct child c = { .set = set, .dir = dir, .status = { -1, -1 }, .go = { -1, -1 } };
	int r;

	r = crf_task_read(dir, root, &tc);
	if (r < 0)
		return r;
	c.tc = tc;
	r = crf_plugin_set_run(set, CRF_STAGE_RESTORE_PREPARE, dir, root);
	if (r >= 0 && (pipe2(c.status, O_CLOEXEC) < 0 || pipe2(c.go, O_CLOEXEC) < 0))
		r = crf_error_errno(errno, "pipe");
	if (r >= 0)
		r = run_task(o, &c, root);
	for (int i = 0; i < 2; i++) {
		if (c.status[i] >= 0)
			close(c.status[i]);
		if (c.go[i] >= 0)
			close(c.go[i]);
	}
	protobuf_c_message_free_unpacked(&tc->base, NULL);
	return r;
}
