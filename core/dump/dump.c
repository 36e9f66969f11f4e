// SPDX-License-Identifier: GPL-2.0-only
/*
 * The dump, step by step (DESIGN.md, "Dump"): prepare, pause the devices,
 * freeze the tree, the devices' frozen state; for each live process read
 * the registers, infect, collect the task, run the plugins' dump-task hooks
 * and cure; save the tree, finish, write the inventory, then kill or resume
 * the tree (the devices first).  Every failure after the pause gives the
 * devices back (dump-undo), and one after the freeze cures and resumes the
 * whole tree before returning.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cpu.h"
#include "dump-objects.h"
#include "dump.h"
#include "freeze.h"
#include "guardian.h"
#include "infect.h"
#include "inventory.h"
#include "procfs.h"
#include "pstree-dump.h"
#include "task-attrs.h"
#include "seccomp.h"
#include "stop.h"
#include "task-dump.h"
#include "util.h"

/* A failed dump removes what it wrote, and the directory if it made it. */
static void remove_images(const char *dir, bool created)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if (n > 4 && !strcmp(e->d_name + n - 4, ".img"))
			unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
	if (created)
		rmdir(dir);
}

/* A kernel thread has no user memory and cannot be traced: say so first. */
static int check_target(pid_t pid)
{
	_cleanup_free_ char *stat = NULL;
	unsigned long flags = 0;
	char path[64];
	const char *p;
	int r;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	r = crf_read_file(path, &stat);
	if (r < 0)
		return crf_error_errno(r, "pid %d", (int)pid);
	/* Field 9 (flags) follows "(comm) state ppid pgrp session tty tpgid". */
	p = strrchr(stat, ')');
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1) {
		crf_error("%s: cannot parse", path);
		return -EINVAL;
	}
	if (flags & 0x00200000) { /* PF_KTHREAD */
		crf_error("pid %d is a kernel thread: there is no process to dump", (int)pid);
		return -EPERM;
	}
	return 0;
}

/* One frozen process: registers, task state, the plugins' dump-task, cure. */
static int dump_task(struct crf_plugin_set *set, struct crf_imgdir *dir, const struct crf_pstree *t,
		     const struct crf_proc *pr)
{
	pid_t pid = pr->pid;
	Crf__Core__TaskCore tc = CRF__CORE__TASK_CORE__INIT;
	struct crf_parasite *p = NULL;
	int r, c;

	r = crf_dump_task_objects(set, dir, pid);
	if (r >= 0)
		r = task_collect_proc(pid, &tc);
	/* Before the infection: crf's code may only run where seccomp is suspended. */
	if (r >= 0)
		r = seccomp_dump(pr, &tc);
	if (r >= 0)
		r = crf_infect(pid, &p);
	if (r >= 0)
		r = crf__fault("infected", true);
	if (r >= 0)
		r = task_regs(p, &tc);
	/* Its own mask, not one a sigsuspend it is stopped in has put in place. */
	if (r >= 0)
		tc.blocked = parasite_blocked(p);
	if (r >= 0)
		r = task_collect_parasite(pid, p, &tc);
	if (r >= 0)
		r = task_collect_threads(pr, p, &tc);
	if (r >= 0)
		r = attrs_dump(t, pr, p, &tc);
	if (r >= 0)
		r = cpu_dump_task(p, &tc);
	if (r >= 0)
		r = task_write(dir, &tc);
	if (r >= 0)
		r = plugin_set_run_task(set, CRF_STAGE_DUMP_TASK, dir, pid, &crf_dump_host_ops, p);
	seccomp_free(&tc);
	task_free(&tc);
	if (p) {
		c = crf_cure(p);
		if (r >= 0)
			r = c;
	}
	/* The bulk of the data with the parasite out: crf's death cannot hurt the task now. */
	if (r >= 0)
		r = crf__fault("cured", false);
	if (r >= 0)
		r = plugin_set_run_task(set, CRF_STAGE_DUMP_TASK_DATA, dir, pid, NULL, NULL);
	return r;
}

/*
 * With the tree frozen: every live process in turn (one infected at a
 * time), the tree itself, then dump-finish.  A zombie has nothing to save
 * but its place in the tree and its exit status.
 */
/*
 * A zombie comes back by dying again as it died; one whose death dumped
 * core would need a core dump to succeed now to carry the core-dumped bit
 * (WCOREDUMP), and must not write one: refused.
 */
static int check_zombies(const struct crf_pstree *t)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct crf_proc *p = &t->procs[i];

		if (p->zombie && WIFSIGNALED(p->exit_status) && WCOREDUMP(p->exit_status))
			return crf_error_errno(ENOTSUP,
					       "pid %d is a zombie killed by signal %d (%s) that "
					       "dumped core: a restored one could not say so",
					       (int)p->pid, WTERMSIG(p->exit_status),
					       strsignal(WTERMSIG(p->exit_status)));
	}
	return 0;
}

static int dump_frozen(const struct crf_dump_opts *o, struct crf_plugin_set *set,
		       struct crf_imgdir *dir, struct crf_pstree *t)
{
	int r = check_zombies(t);

	if (r >= 0)
		r = pstree_fdtables(t);

	if (r >= 0)
		r = pstree_check_fs(t);
	/* What the restore would refuse is refused now, while the tree runs. */
	if (r >= 0 && o->check_tree)
		r = o->check_tree(t);
	if (r >= 0)
		r = cpu_write(dir);
	/* Device state (ABI 1.5): every task of the tree frozen, no parasite in any yet. */
	for (size_t i = 0; r >= 0 && i < t->n; i++)
		if (!t->procs[i].zombie)
			r = plugin_set_run_task(set, CRF_STAGE_DUMP_FROZEN, dir, t->procs[i].pid,
						NULL, NULL);
	for (size_t i = 0; r >= 0 && i < t->n; i++)
		if (!t->procs[i].zombie && (r = stop_check()) >= 0)
			r = dump_task(set, dir, t, &t->procs[i]);
	if (r >= 0)
		r = pstree_write(dir, t);
	if (r >= 0)
		r = plugin_set_run(set, CRF_STAGE_DUMP_FINISH, dir, o->pid);
	return r;
}

int crf_dump(const struct crf_dump_opts *o, struct crf_plugin_set *set)
{
	struct crf_imgdir *dir = NULL;
	struct crf_pstree tree = {0};
	bool frozen = false, complete = false, thawed = false;
	struct stat st;
	bool created = stat(o->dir, &st) < 0;
	double t0, frozen_at = 0;
	int r, c;

	t0 = now_ms();
	r = check_target(o->pid);
	if (r < 0)
		return r;
	/* Before the directory exists: a crf killed right after making it leaves none. */
	guardian_start(o->dir, created);
	r = crf_imgdir_open(o->dir, CRF_IMGDIR_WRITE, &dir);
	if (r < 0) {
		guardian_stop();
		return r;
	}
	guardian_owned();
	r = o->notify ? o->notify(o->notify_arg, "pre-dump", o->pid) : 0;
	if (r >= 0)
		r = plugin_set_run(set, CRF_STAGE_DUMP_PREPARE, dir, o->pid);
	if (r >= 0)
		r = plugin_set_run(set, CRF_STAGE_DUMP_PAUSE, dir, o->pid);
	if (r >= 0)
		r = pstree_freeze(o->pid, freeze_mode_parse(o->freeze), &tree);
	if (r >= 0) {
		frozen = true;
		frozen_at = now_ms();
		r = crf__fault("frozen", false);
	}
	if (r >= 0 && o->notify)
		r = o->notify(o->notify_arg, "network-lock", o->pid);
	if (r >= 0 && o->notify)
		r = o->notify(o->notify_arg, "query-ext-files", o->pid);
	if (r >= 0)
		r = dump_frozen(o, set, dir, &tree);
	/*
	 * A live dump (docs/live.md) lets the tree go now, before the images
	 * are complete: dump-live copies what was write-protected while it was
	 * frozen.  A failure from here on leaves it running as it is.
	 */
	if (r >= 0 && o->live && o->leave_running) {
		r = plugin_set_run(set, CRF_STAGE_DUMP_RESUME, dir, o->pid);
		c = pstree_unfreeze(&tree);
		if (r >= 0)
			r = c;
		thawed = true;
		crf_info("the tree of pid %d (%zu process%s) was frozen for %.1f ms", (int)o->pid,
			 tree.n, tree.n == 1 ? "" : "es", now_ms() - frozen_at);
	}
	if (r >= 0)
		r = plugin_set_run(set, CRF_STAGE_DUMP_LIVE, dir, o->pid);
	if (r >= 0)
		r = inventory_write(dir, set, o->pid);
	if (r >= 0)
		r = crf__fault("inventory written", false);
	/*
	 * The images are on disk before the tree is killed (a crash after the
	 * kill must not lose both); a dump that leaves it running syncs with --sync.
	 */
	if (r >= 0 && (o->sync || !o->leave_running))
		r = crf_imgdir_sync(dir);
	if (r >= 0)
		r = crf__fault("images complete", false);
	if (r >= 0)
		r = stop_check();
	if (r >= 0 && o->notify)
		r = o->notify(o->notify_arg, "post-dump", o->pid);
	if (r >= 0) {
		guardian_complete();
		complete = true;
	}
	/*
	 * The plugins that paused a device give it back while the tree is
	 * still frozen, so that the device runs again before the program does.
	 * A tree thawed already (--live) runs on: its dump-resume ran before
	 * the thaw, and no plugin owes a device to a second call.
	 */
	frozen = frozen && !thawed;
	if (r < 0 || o->leave_running) {
		c = plugin_set_run(set, r < 0 ? CRF_STAGE_DUMP_UNDO : CRF_STAGE_DUMP_RESUME, dir,
				   o->pid);
		if (r >= 0)
			r = c;
	}
	if (frozen && (r < 0 || o->leave_running)) {
		c = pstree_unfreeze(&tree);
		if (r >= 0)
			r = c;
	} else if (frozen) {
		r = pstree_kill(&tree);
	}
	if (frozen)
		crf_info("the tree of pid %d (%zu process%s) was frozen for %.1f ms", (int)o->pid,
			 tree.n, tree.n == 1 ? "" : "es", now_ms() - frozen_at);
	pstree_free(&tree);
	c = plugin_set_run(set, CRF_STAGE_DUMP_CLEANUP, dir, o->pid);
	if (r >= 0)
		r = c;
	crf_imgdir_close(dir);
	/* Complete images are kept whatever failed after: the tree may be gone. */
	if (!complete)
		remove_images(o->dir, created);
	else if (r < 0)
		crf_error("the dump in %s is complete and kept, but its end failed (above)",
			  o->dir);
	else
		crf_info("dump of pid %d done in %.1f ms", (int)o->pid, now_ms() - t0);
	guardian_stop();
	return r;
}
