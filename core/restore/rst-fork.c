// SPDX-License-Identifier: GPL-2.0-only
/*
 * Creating a task with its saved PID: clone3() with set_tid, one PID per
 * namespace level (a process in a nested PID namespace has one in each),
 * and clone flags (CLONE_PARENT, CLONE_NEWPID) when the tree needs them.  A taken PID
 * fails with EEXIST; when a zombie holds it, its parent is usually about to
 * reap it (a tree being restored right after its dump), so wait a little.
 * Then crf's side of the handshake with the task's restorer.
 */
#include <errno.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rst-task.h"
#include "rst-tree.h"
#include "util.h"

#define POLL_NS (10 * 1000 * 1000)

struct holder {
	char comm[64];
	char state;
	pid_t ppid;
};

/* Read who holds @pid from /proc/PID/stat; -ENOENT once it is gone. */
static int read_holder(pid_t pid, struct holder *h)
{
	char path[64], buf[512], *end;
	_cleanup_fclose_ FILE *f = NULL;
	const char *comm;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	/* "pid (comm) S ppid ...": comm may hold anything, even ") ". */
	comm = strchr(buf, '(');
	end = strrchr(buf, ')');
	if (!comm || !end || end < comm || sscanf(end + 1, " %c %d", &h->state, &h->ppid) != 2)
		return -EIO;
	*end = '\0';
	snprintf(h->comm, sizeof(h->comm), "%s", comm + 1);
	return 0;
}

/*
 * @set_tid: the PID in each namespace level, the innermost first (clone3's
 * order).  @cgroup: the cgroup v2 to create it in (ABI 1.6,
 * crf_rst_clone_into_cgroup), or -1.
 */
static pid_t clone_with_pids(const pid_t *set_tid, size_t n_levels, uint64_t flags, int cgroup)
{
	/* CLONE_PARENT takes the exit signal of the caller (clone3 wants none given). */
	struct clone_args ca = {
		.flags = flags | (cgroup >= 0 ? CLONE_INTO_CGROUP : 0),
		.exit_signal = flags & CLONE_PARENT ? 0 : SIGCHLD,
		.set_tid = (uintptr_t)set_tid,
		.set_tid_size = n_levels,
		.cgroup = cgroup >= 0 ? (uint64_t)cgroup : 0,
	};

	return syscall(SYS_clone3, &ca, sizeof(ca));
}

/*
 * @pid is taken: 0 to try again (it was freed, or a zombie or a dead task
 * being released to wait for), or -EEXIST.
 */
static int pid_taken(pid_t pid, uint64_t deadline, unsigned int wait_ms)
{
	static const struct timespec poll = {0, POLL_NS};
	struct holder h;
	int r;

	r = read_holder(pid, &h);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return crf_error_errno(EEXIST, "PID %d is taken (its holder is unreadable: %s)",
				       (int)pid, strerror(-r));
	/* A zombie waits for its parent; a dead task (X) is being released: both free it. */
	if (h.state != 'Z' && h.state != 'X')
		return crf_error_errno(EEXIST, "PID %d is taken by '%s' (state %c, parent %d)",
				       (int)pid, h.comm, h.state, (int)h.ppid);
	if (now_ms() >= deadline)
		return crf_error_errno(EEXIST,
				       "PID %d is held by the zombie '%s', which its parent %d "
				       "did not reap within %u ms",
				       (int)pid, h.comm, (int)h.ppid, wait_ms);
	nanosleep(&poll, NULL);
	return 0;
}

int rst_clone(const pid_t *set_tid, size_t n_levels, uint64_t flags, unsigned int zombie_wait_ms,
	      int (*child_fn)(void *), void *arg, pid_t *out)
{
	unsigned int wait_ms = zombie_wait_ms ? zombie_wait_ms : CRF_RST_ZOMBIE_WAIT_MS;
	uint64_t deadline = now_ms() + wait_ms;
	/* The PID in crf's namespace: the one /proc here names its holder by. */
	pid_t pid = n_levels ? set_tid[n_levels - 1] : 0;
	int cgroup = crf__clone_cgroup_fd(pid);
	pid_t child;
	int r;

	if (pid <= 0 || set_tid[0] <= 0)
		return crf_error_errno(EINVAL, "cannot create a task with PID %d", (int)set_tid[0]);
	for (;;) {
		child = clone_with_pids(set_tid, n_levels, flags, cgroup);
		if (child >= 0)
			break;
		if (errno != EEXIST)
			return crf_error_errno(errno,
					       "clone3 with PID %d (%zu namespace level%s%s)",
					       (int)pid, n_levels, n_levels == 1 ? "" : "s",
					       cgroup >= 0 ? ", into its cgroup v2" : "");
		r = pid_taken(pid, deadline, wait_ms);
		if (r < 0)
			return r;
		/* Free here, so an inner level's PID is the one taken. */
		if (n_levels > 1 && now_ms() >= deadline)
			return crf_error_errno(EEXIST,
					       "PID %d in a nested PID namespace of PID %d "
					       "is taken",
					       (int)set_tid[0], (int)pid);
	}
	if (child == 0)
		_exit(child_fn(arg));
	*out = child;
	return 0;
}

int rst_fork(pid_t pid, unsigned int zombie_wait_ms, int (*child_fn)(void *), void *arg, pid_t *out)
{
	return rst_clone(&pid, 1, 0, zombie_wait_ms, child_fn, arg, out);
}

/* How task @pid ended, without reaping it: its parent still wants the status. */
static void describe_end(pid_t pid, char *buf, size_t len)
{
	siginfo_t si = {0};

	if (waitid(P_PID, pid, &si, WEXITED | WNOWAIT) < 0)
		snprintf(buf, len, "task %d: no status from its restorer (%s)", (int)pid,
			 strerror(errno));
	else if (si.si_code == CLD_EXITED)
		snprintf(buf, len, "task %d exited with status %d before its restorer was ready",
			 (int)pid, si.si_status);
	else
		snprintf(buf, len,
			 "task %d was killed by signal %d (%s) before its restorer "
			 "was ready",
			 (int)pid, si.si_status, strsignal(si.si_status));
}

int rst_wait_ready(int status_fd, pid_t pid, char *err, size_t len, struct crf_rst_status *out)
{
	struct crf_rst_status st;
	char msg[320];
	ssize_t n;
	int r;

	do
		n = read(status_fd, &st, sizeof(st));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return crf_error_errno(errno, "task %d: read the restorer's status", (int)pid);
	if (n == sizeof(st) && st.result == 0) {
		if (out)
			*out = st;
		return 0;
	}
	if (n == sizeof(st)) {
		st.error[sizeof(st.error) - 1] = '\0';
		r = st.result < 0 ? st.result : -EIO;
		snprintf(msg, sizeof(msg), "task %d: restorer: %s: %s", (int)pid, st.error,
			 strerror(-r));
	} else {
		r = -ESRCH;
		describe_end(pid, msg, sizeof(msg));
	}
	crf_error("%s", msg);
	if (err && len)
		snprintf(err, len, "%s", msg);
	return r;
}

int rst_go(int go_fd)
{
	ssize_t n;

	do
		n = write(go_fd, "g", 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		return crf_error_errno(n < 0 ? errno : EIO, "tell the restored task to go");
	return 0;
}
