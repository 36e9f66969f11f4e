// SPDX-License-Identifier: GPL-2.0-only
/*
 * What every restored process does, still running crf's code, before its
 * restorer: fork its children, take its place in its session and group,
 * and - for a zombie - die as it died.  See rst-tree.h for the sequence.
 *
 * These processes are raw clones (rst_fork): glibc's cached thread id
 * is the parent's, so signals to oneself go through kill(getpid()), never
 * raise().
 */
#include <errno.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rst-task.h"
#include "rst-tree.h"

static void send_event(const struct crf_rst_tree *rt, size_t i, int kind, int arg, const char *fmt,
		       ...) __attribute__((format(printf, 5, 6)));

static void send_event(const struct crf_rst_tree *rt, size_t i, int kind, int arg, const char *fmt,
		       ...)
{
	struct crf_rst_event ev = {.pid = rt->procs[i].p->pid, .kind = kind, .arg = arg};
	va_list ap;
	ssize_t n;

	va_start(ap, fmt);
	vsnprintf(ev.msg, sizeof(ev.msg), fmt, ap);
	va_end(ap);
	/* Smaller than PIPE_BUF: written whole, never mixed with another's. */
	do
		n = write(rt->events[1], &ev, sizeof(ev));
	while (n < 0 && errno == EINTR);
	if (n != sizeof(ev))
		crf_error_errno(n < 0 ? errno : EIO, "pid %d: reporting to crf", (int)ev.pid);
}

/* The process failed: tell crf why (the cause is logged where it happened). */
static int fail(const struct crf_rst_tree *rt, size_t i, int err, const char *what)
{
	send_event(rt, i, CRF_RST_EV_FAILED, err, "%s: %s", what, strerror(-err));
	return err;
}

/* One round of the barrier: crf writes one byte per process. */
static int barrier_wait(const struct crf_rst_tree *rt, int round)
{
	ssize_t n;
	char c;

	do
		n = read(rt->barrier[round][0], &c, 1);
	while (n < 0 && errno == EINTR);
	/* crf is gone: nobody to report to, and the tree is being torn down. */
	return n == 1 ? 0 : -EPIPE;
}

/*
 * @pid, as crf's namespace names it, as process @i sees it: its PID in
 * @i's namespace level, 0 when it is outside @i's namespace.
 */
static pid_t local_pid(const struct crf_rst_tree *rt, size_t i, pid_t pid)
{
	unsigned int lv = crf_proc_levels(rt->procs[i].p);
	ssize_t j;

	if (lv == 1)
		return pid;
	j = rst_tree_index(rt, pid);
	if (j < 0 || crf_proc_levels(rt->procs[j].p) < lv)
		return 0;
	return rt->procs[j].p->ns_pid[lv - 1];
}

struct entry {
	struct crf_rst_tree *rt;
	size_t i;
};

static int entry(void *arg)
{
	struct entry *e = arg;

	return rst_tree_proc_main(e->rt, e->i) < 0 ? 1 : 0;
}

/*
 * Create process @k with its PID in every namespace level: the outer ones
 * too, so that crf names it by the PID of the dump (a tree is restored
 * after its dump was killed, and its PIDs are free again).
 */
static int clone_proc(struct crf_rst_tree *rt, size_t k)
{
	const struct crf_rst_proc *rp = &rt->procs[k];
	unsigned int lv = crf_proc_levels(rp->p);
	struct entry e = {rt, k};
	pid_t set_tid[CRF_PIDNS_LEVELS], child;
	uint64_t flags = 0;

	for (unsigned int l = 0; l < lv; l++)
		set_tid[l] = lv > 1 ? rp->p->ns_pid[lv - 1 - l] : rp->p->pid;
	if (rp->clone_parent || (k == 0 && rt->sibling))
		flags |= CLONE_PARENT;
	if (rp->new_pidns)
		flags |= CLONE_NEWPID;
	if (rp->clone_files)
		flags |= CLONE_FILES;
	return rst_clone(set_tid, lv, flags, rt->pid_wait_ms, entry, &e, &child);
}

int rst_tree_fork_root(struct crf_rst_tree *rt)
{
	return clone_proc(rt, 0);
}

/* Fork the children that go before (or after) this process's setsid. */
static int fork_kids(struct crf_rst_tree *rt, size_t i, bool before_setsid)
{
	char what[64];
	int r;

	for (ssize_t k = rt->procs[i].first_kid; k >= 0; k = rt->procs[k].next_sibling) {
		pid_t pid = rt->procs[k].p->pid;

		if (rt->procs[k].before_setsid != before_setsid)
			continue;
		r = clone_proc(rt, (size_t)k);
		if (r < 0) {
			snprintf(what, sizeof(what), "cannot create %s %d",
				 rt->procs[k].clone_parent ? "its sibling" : "its child", (int)pid);
			return fail(rt, i, r, what);
		}
		send_event(rt, i, CRF_RST_EV_FORKED, pid, "%s", "");
	}
	return 0;
}

/* A session leader makes its session (and group); a group leader its group. */
static int lead(const struct crf_rst_tree *rt, size_t i)
{
	const struct crf_rst_proc *rp = &rt->procs[i];

	int r;

	if (rp->setsid && setsid() < 0)
		return fail(rt, i, crf_error_errno(errno, "pid %d: setsid", (int)rp->p->pid),
			    "setsid");
	/* Before the members are forked: they inherit its controlling terminal. */
	if (rp->setsid && rt->session_fn && crf_rst_proc_runs(rp)) {
		r = rt->session_fn(rt->task_arg, rp->p->pid);
		if (r < 0)
			return fail(rt, i, r, "setting up its session failed (see above)");
	}
	if (rp->lead_group && setpgid(0, 0) < 0)
		return fail(rt, i, crf_error_errno(errno, "pid %d: setpgid(0, 0)", (int)rp->p->pid),
			    "cannot make its process group");
	return 0;
}

/* Once every leader has made its group. */
static int join_group(const struct crf_rst_tree *rt, size_t i)
{
	const struct crf_rst_proc *rp = &rt->procs[i];
	bool root_ns = crf_proc_levels(rp->p) == crf_proc_levels(rt->procs[0].p);
	pid_t want = rp->join_pgid == CRF_RST_ROOT_PGID ? (root_ns ? rt->root_pgid : 0)
							: local_pid(rt, i, rp->join_pgid);
	char what[64];

	/* A group outside its PID namespace (0) can only be inherited: it was. */
	if (!rp->join_pgid || !want || getpgid(0) == want)
		return 0;
	if (setpgid(0, want) == 0)
		return 0;
	snprintf(what, sizeof(what), "cannot join process group %d", (int)want);
	return fail(rt, i,
		    crf_error_errno(errno, "pid %d: setpgid(0, %d)", (int)rp->p->pid, (int)want),
		    what);
}

/* A zombie ends the way it ended before, named as it was; its parent will reap it. */
static _Noreturn void die_as_saved(int status, const char *comm)
{
	if (comm[0])
		prctl(PR_SET_NAME, comm, 0, 0, 0);
	if (WIFSIGNALED(status)) {
		/* The death happened already: it must not write a core file now. */
		const struct rlimit no_core = {0, 0};
		int sig = WTERMSIG(status);
		sigset_t set;

		setrlimit(RLIMIT_CORE, &no_core);
		signal(sig, SIG_DFL);
		sigemptyset(&set);
		sigaddset(&set, sig);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		syscall(SYS_kill, syscall(SYS_getpid), sig);
	}
	_exit(WEXITSTATUS(status));
}

/*
 * The zombie children have exited; take their SIGCHLD, which the program
 * already had before the dump, so that it is not delivered twice.  With a
 * pidfd, not wait*(): the children stay zombies for the program to reap.
 * Helpers are crf's own: reaped here.
 */
static void settle_zombie_kids(const struct crf_rst_tree *rt, size_t i)
{
	const struct timespec now = {0, 0};
	sigset_t chld;

	/* Its children: those it forked, and those its children forked with CLONE_PARENT. */
	for (size_t k = 1; k < rt->n; k++) {
		struct pollfd pfd = {.events = POLLIN};

		if (rt->procs[k].p->ppid != rt->procs[i].p->pid)
			continue;

		if (rt->procs[k].helper)
			while (waitpid(local_pid(rt, i, rt->procs[k].p->pid), NULL, 0) < 0 &&
			       errno == EINTR)
				;
		if (!rt->procs[k].p->zombie)
			continue;
		pfd.fd = (int)syscall(SYS_pidfd_open, local_pid(rt, i, rt->procs[k].p->pid), 0);
		if (pfd.fd < 0)
			continue;
		while (poll(&pfd, 1, -1) < 0 && errno == EINTR)
			;
		close(pfd.fd);
	}
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	while (sigtimedwait(&chld, NULL, &now) == SIGCHLD)
		;
}

int rst_tree_proc_main(struct crf_rst_tree *rt, size_t i)
{
	const struct crf_rst_proc *rp = &rt->procs[i];
	struct crf_rst_fdtable fdt = {.wait_fd = -1};
	sigset_t chld;
	int r;

	/* crf's ends, inherited: children forked from here on do not get them. */
	if (rt->events[0] >= 0)
		close(rt->events[0]);
	rt->events[0] = -1;
	for (int k = 0; k < CRF_RST_ROUNDS; k++) {
		if (rt->barrier[k][1] >= 0)
			close(rt->barrier[k][1]);
		rt->barrier[k][1] = -1;
	}
	rst_fdt_close(rt, 1);
	/* Zombie children's SIGCHLD stays pending until settle_zombie_kids(). */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	if (i == 0)
		rt->root_pgid = getpgid(0);
	r = 0;
	/* What its children inherit of its memory: before any is forked. */
	if (rt->premap_fn && crf_rst_proc_runs(rp)) {
		r = rt->premap_fn(rt->task_arg, rp->p->pid);
		if (r < 0)
			r = fail(rt, i, r,
				 "mapping the memory its children share failed (see above)");
	}
	if (r >= 0)
		r = fork_kids(rt, i, true);
	if (r >= 0)
		r = lead(rt, i);
	if (r >= 0)
		r = fork_kids(rt, i, false);
	if (r >= 0) {
		send_event(rt, i, CRF_RST_EV_CREATED, 0, "%s", "");
		r = barrier_wait(rt, 0);
	}
	if (r >= 0)
		r = join_group(rt, i);
	if (r >= 0) {
		send_event(rt, i, CRF_RST_EV_GROUPED, 0, "%s", "");
		r = barrier_wait(rt, 1);
	}
	if (r < 0)
		return r;
	if (rp->p->zombie)
		die_as_saved(rp->p->exit_status, rp->p->comm);
	if (rp->helper)
		_exit(0);
	settle_zombie_kids(rt, i);
	r = rst_fdt_role(rt, i, &fdt);
	if (r < 0)
		return fail(rt, i, r, "its shared fd table");
	r = rt->task_fn(rt->task_arg, rp->p->pid, rp->status[1], rp->go[0], r ? &fdt : NULL);
	free(fdt.keep);
	return r;
}
