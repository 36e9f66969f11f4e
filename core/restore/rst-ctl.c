// SPDX-License-Identifier: GPL-2.0-only
/*
 * crf's side of a tree restore: the pipes, the rounds of the barrier, the
 * wait for every restorer's "ready", the release, and - on failure -
 * killing and reaping everything the restore created.  See rst-tree.h.
 *
 * crf watches each process through a pidfd as soon as it hears of it, so a
 * process that dies is noticed at once, whoever its parent is.  While the
 * tree is being built crf is a child subreaper: a process whose parent was
 * killed comes to crf, which can then kill and reap it too.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "procfs.h"
#include "rst-task.h"
#include "rst-tree.h"
#include "util.h"

/* How long crf waits without any progress before giving up on the tree. */
#define STALL_MS 30000
#define REAP_MS	 10000

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static int open_pipes(struct crf_rst_tree *rt)
{
	if (pipe2(rt->events, O_CLOEXEC) < 0)
		return crf_error_errno(errno, "pipe");
	for (int k = 0; k < CRF_RST_ROUNDS; k++)
		if (pipe2(rt->barrier[k], O_CLOEXEC) < 0)
			return crf_error_errno(errno, "pipe");
	for (size_t i = 0; i < rt->n; i++) {
		struct crf_rst_proc *rp = &rt->procs[i];

		if (!crf_rst_proc_runs(rp))
			continue;
		if (pipe2(rp->status, O_CLOEXEC) < 0 || pipe2(rp->go, O_CLOEXEC) < 0)
			return crf_error_errno(errno, "pipes for pid %d", (int)rp->p->pid);
	}
	return rst_fdt_open(rt);
}

/* Once the root is forked, crf keeps only its own ends. */
static void close_child_ends(struct crf_rst_tree *rt)
{
	close_fd(&rt->events[1]);
	for (int k = 0; k < CRF_RST_ROUNDS; k++)
		close_fd(&rt->barrier[k][0]);
	for (size_t i = 0; i < rt->n; i++) {
		close_fd(&rt->procs[i].status[1]);
		close_fd(&rt->procs[i].go[0]);
	}
	rst_fdt_close(rt, 0);
}

static void close_all(struct crf_rst_tree *rt)
{
	close_child_ends(rt);
	close_fd(&rt->events[0]);
	for (int k = 0; k < CRF_RST_ROUNDS; k++)
		close_fd(&rt->barrier[k][1]);
	for (size_t i = 0; i < rt->n; i++) {
		close_fd(&rt->procs[i].status[0]);
		close_fd(&rt->procs[i].go[1]);
		close_fd(&rt->procs[i].pidfd);
	}
	rst_fdt_close(rt, -1);
}

static void set_subreaper(struct crf_rst_tree *rt, bool on)
{
	if (rt->subreaper == on)
		return;
	if (prctl(PR_SET_CHILD_SUBREAPER, on ? 1 : 0) < 0)
		crf_warn("PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
	else
		rt->subreaper = on;
}

/* A process exists: watch it from now on. */
static int watch(struct crf_rst_tree *rt, pid_t pid)
{
	ssize_t i = rst_tree_index(rt, pid);

	if (i < 0)
		return crf_error_errno(EPROTO, "a restored process created PID %d, not in the tree",
				       (int)pid);
	rt->procs[i].created = true;
	rt->procs[i].pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (rt->procs[i].pidfd < 0)
		return crf_error_errno(errno, "pidfd_open(%d)", (int)pid);
	return 0;
}

/* Read one event (the pipe is readable) and act on it; 1 if it was @want. */
static int handle_event(struct crf_rst_tree *rt, int want)
{
	struct crf_rst_event ev;
	ssize_t n, i;

	do
		n = read(rt->events[0], &ev, sizeof(ev));
	while (n < 0 && errno == EINTR);
	if (n != sizeof(ev))
		return crf_error_errno(n < 0 ? errno : EPIPE,
				       "every restored process is gone before reporting");
	ev.msg[sizeof(ev.msg) - 1] = '\0';
	i = rst_tree_index(rt, ev.pid);
	if (i < 0)
		return crf_error_errno(EPROTO, "a report from PID %d, not in the tree",
				       (int)ev.pid);
	switch (ev.kind) {
	case CRF_RST_EV_FORKED:
		return watch(rt, ev.arg);
	case CRF_RST_EV_FAILED:
		crf_error("pid %d: %s", (int)ev.pid, ev.msg);
		return ev.arg < 0 ? ev.arg : -EIO;
	default:
		if (want < 0) /* draining after a failure */
			return 0;
		if (ev.kind != want || rt->procs[i].reported)
			return crf_error_errno(EPROTO, "pid %d: unexpected report %d", (int)ev.pid,
					       (int)ev.kind);
		rt->procs[i].reported = true;
		return 1;
	}
}

/* How a process that should still be running ended. */
static int died(const struct crf_rst_tree *rt, size_t i, const char *when)
{
	pid_t pid = rt->procs[i].p->pid;
	struct crf_proc now;

	if (crf_proc_read_stat(pid, &now) < 0 || !now.zombie)
		return crf_error_errno(ESRCH, "pid %d ended %s", (int)pid, when);
	if (WIFSIGNALED(now.exit_status))
		return crf_error_errno(ESRCH, "pid %d was killed by signal %d (%s) %s", (int)pid,
				       WTERMSIG(now.exit_status),
				       strsignal(WTERMSIG(now.exit_status)), when);
	return crf_error_errno(ESRCH, "pid %d exited with status %d %s", (int)pid,
			       WEXITSTATUS(now.exit_status), when);
}

/* What crf waits on: the events pipe, a status pipe, a process's pidfd. */
enum slot_kind { SLOT_EVENTS, SLOT_STATUS, SLOT_PIDFD };

struct watch_set {
	struct pollfd *pfd;
	enum slot_kind *kind;
	size_t *proc;
	size_t n;
};

static int watch_set_init(struct watch_set *w, size_t n_procs)
{
	size_t max = 2 * n_procs + 1;

	w->pfd = calloc(max, sizeof(*w->pfd));
	w->kind = calloc(max, sizeof(*w->kind));
	w->proc = calloc(max, sizeof(*w->proc));
	if (!w->pfd || !w->kind || !w->proc)
		return crf_error_errno(ENOMEM, "restore");
	return 0;
}

static void watch_set_free(struct watch_set *w)
{
	free(w->pfd);
	free(w->kind);
	free(w->proc);
}

static void watch_add(struct watch_set *w, int fd, enum slot_kind kind, size_t proc)
{
	w->pfd[w->n] = (struct pollfd){.fd = fd, .events = POLLIN};
	w->kind[w->n] = kind;
	w->proc[w->n++] = proc;
}

/*
 * Before the last round: the events and every process crf knows of.
 * After it: the status pipes of the live processes not ready yet, and
 * their pidfds (the zombies and helpers are gone by then, as they should).
 */
static void watch_fill(struct watch_set *w, const struct crf_rst_tree *rt, bool rounds)
{
	w->n = 0;
	if (rounds)
		watch_add(w, rt->events[0], SLOT_EVENTS, 0);
	for (size_t i = 0; i < rt->n; i++) {
		const struct crf_rst_proc *rp = &rt->procs[i];

		if (!rp->created || (!rounds && !crf_rst_proc_runs(rp)))
			continue;
		if (!rounds && !rp->ready)
			watch_add(w, rp->status[0], SLOT_STATUS, i);
		watch_add(w, rp->pidfd, SLOT_PIDFD, i);
	}
}

/*
 * Wait for one slot to be readable; its index.  A report is taken before a
 * death (a process reports, then dies).  -ETIMEDOUT (not logged) when
 * nothing came by @deadline.
 */
static int watch_wait(struct watch_set *w, int64_t deadline)
{
	int64_t left;
	int r;

	do {
		left = deadline - now_ms();
		r = poll(w->pfd, w->n, left > 0 ? (int)left : 0);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		return crf_error_errno(errno, "poll");
	if (r == 0)
		return -ETIMEDOUT;
	for (size_t k = 0; k < w->n; k++)
		if (w->pfd[k].revents && w->kind[k] != SLOT_PIDFD)
			return (int)k;
	for (size_t k = 0; k < w->n; k++)
		if (w->pfd[k].revents)
			return (int)k;
	return crf_error_errno(EIO, "poll: no ready fd");
}

/* The first process that has not sent its report of this round. */
static pid_t first_silent(const struct crf_rst_tree *rt)
{
	for (size_t i = 0; i < rt->n; i++)
		if (!rt->procs[i].reported)
			return rt->procs[i].p->pid;
	return 0;
}

/* Until every process has sent @want (CREATED or GROUPED). */
static int wait_round(struct crf_rst_tree *rt, struct watch_set *w, int want, const char *when)
{
	int64_t deadline = now_ms() + STALL_MS + rt->pid_wait_ms;
	size_t count = 0;
	int k, r;

	for (size_t i = 0; i < rt->n; i++)
		rt->procs[i].reported = false;
	while (count < rt->n) {
		watch_fill(w, rt, true);
		k = watch_wait(w, deadline);
		if (k == -ETIMEDOUT)
			return crf_error_errno(ETIMEDOUT, "pid %d made no progress %s within %d ms",
					       (int)first_silent(rt), when,
					       STALL_MS + (int)rt->pid_wait_ms);
		if (k < 0)
			return k;
		if (w->kind[k] == SLOT_PIDFD)
			return died(rt, w->proc[k], when);
		r = handle_event(rt, want);
		if (r < 0)
			return r;
		if (r > 0) {
			count++;
			deadline = now_ms() + STALL_MS + rt->pid_wait_ms;
		}
	}
	return 0;
}

/* Until every live process waits in its restorer. */
static int wait_ready(struct crf_rst_tree *rt, struct watch_set *w)
{
	int64_t deadline = now_ms() + STALL_MS;
	size_t count = 0, alive = 0;
	struct crf_rst_proc *rp;
	int k, r;

	for (size_t i = 0; i < rt->n; i++)
		alive += crf_rst_proc_runs(&rt->procs[i]);
	while (count < alive) {
		watch_fill(w, rt, false);
		k = watch_wait(w, deadline);
		if (k == -ETIMEDOUT)
			return crf_error_errno(ETIMEDOUT, "a restorer was not ready within %d ms",
					       STALL_MS);
		if (k < 0)
			return k;
		rp = &rt->procs[w->proc[k]];
		if (w->kind[k] == SLOT_PIDFD)
			return died(rt, w->proc[k], "before its restorer was ready");
		r = rst_wait_ready(rp->status[0], rp->p->pid, NULL, 0, &rp->st);
		if (r < 0)
			return r;
		rp->ready = true;
		count++;
		r = rst_fdt_ready(rt, w->proc[k]);
		if (r < 0)
			return r;
	}
	return 0;
}

/* One byte per process: each reads one and goes on. */
static int release_barrier(struct crf_rst_tree *rt, int round)
{
	char buf[256];
	size_t left = rt->n;

	memset(buf, 'b', sizeof(buf));
	while (left) {
		ssize_t n =
			write(rt->barrier[round][1], buf, left < sizeof(buf) ? left : sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return crf_error_errno(errno, "releasing the restored tree");
		left -= (size_t)n;
	}
	return 0;
}

static int start_rounds(struct crf_rst_tree *rt, struct watch_set *w)
{
	int r = wait_round(rt, w, CRF_RST_EV_CREATED, "while the tree was being created");

	if (r >= 0)
		r = release_barrier(rt, 0);
	if (r >= 0)
		r = wait_round(rt, w, CRF_RST_EV_GROUPED, "while joining process groups");
	if (r >= 0)
		r = release_barrier(rt, 1);
	if (r >= 0)
		r = wait_ready(rt, w);
	return r;
}

int rst_tree_start(struct crf_rst_tree *rt)
{
	struct watch_set w = {0};
	int r;

	r = watch_set_init(&w, rt->n);
	if (r >= 0)
		r = open_pipes(rt);
	if (r >= 0)
		set_subreaper(rt, true);
	if (r >= 0)
		r = rst_tree_fork_root(rt);
	close_child_ends(rt);
	if (r >= 0)
		r = watch(rt, rt->procs[0].p->pid);
	if (r >= 0)
		r = start_rounds(rt, &w);
	watch_set_free(&w);
	return r;
}

int rst_tree_release(struct crf_rst_tree *rt)
{
	int r = 0;

	/* Children first: the root, which the caller may wait for, goes last. */
	for (size_t i = rt->n; r >= 0 && i-- > 0;) {
		struct crf_rst_proc *rp = &rt->procs[i];

		if (!crf_rst_proc_runs(rp))
			continue;
		r = rst_release(rp->p->pid, rp->go[1], &rp->st);
		if (r >= 0)
			crf_debug("pid %d restored", (int)rp->p->pid);
	}
	if (r >= 0) {
		set_subreaper(rt, false);
		close_all(rt);
	}
	return r;
}

/* Processes whose parent died came to crf, the subreaper: kill them too. */
static void kill_own_children(void)
{
	_cleanup_free_ char *text = NULL;
	char path[64];
	const char *p;
	char *end;

	snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
	if (crf_read_file(path, &text) < 0)
		return;
	for (p = text;; p = end) {
		long pid = strtol(p, &end, 10);

		if (end == p)
			break;
		kill((pid_t)pid, SIGKILL);
	}
}

/* Reap until crf has no child left: every orphan of the tree comes to crf. */
static void reap_all(void)
{
	int64_t deadline = now_ms() + REAP_MS;
	const struct timespec nap = {0, 1000000};
	int status;

	for (;;) {
		pid_t pid = waitpid(-1, &status, WNOHANG | __WALL);

		if (pid > 0)
			continue;
		if (pid < 0 && errno == ECHILD)
			return;
		if (pid < 0 && errno != EINTR) {
			crf_warn("reaping the restored tree: %s", strerror(errno));
			return;
		}
		if (now_ms() > deadline) {
			crf_warn("some processes of the failed restore could not be reaped");
			return;
		}
		kill_own_children();
		nanosleep(&nap, NULL);
	}
}

void rst_tree_kill(struct crf_rst_tree *rt)
{
	struct pollfd pfd = {.fd = rt->events[0], .events = POLLIN};

	/* Learn of every process created so far. */
	while (rt->events[0] >= 0 && poll(&pfd, 1, 0) > 0 && (pfd.revents & POLLIN))
		handle_event(rt, -1);
	for (size_t i = 0; i < rt->n; i++) {
		const struct crf_rst_proc *rp = &rt->procs[i];

		if (rp->pidfd >= 0)
			syscall(SYS_pidfd_send_signal, rp->pidfd, SIGKILL, NULL, 0);
	}
	kill_own_children();
	reap_all();
	set_subreaper(rt, false);
	close_all(rt);
}
