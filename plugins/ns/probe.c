// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe of what the ns plugin names namespaces with (/proc/PID/ns), enters
 * them with (setns on a pidfd), and recreates a tree's PIDs with (clone3 with
 * set_tid, or ns_last_pid).  Whatever changes the caller's namespaces or PIDs
 * runs in a forked child that exits right after.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/sched.h>

#include <crf/cleanup.h>

#include "ns.h"

/* Required: every tree has these, so a dump cannot do without them. */
static const struct {
	const char *name;
	bool required;
} probe_kinds[] = {
	{.name = "pid", .required = true},   {.name = "mnt", .required = true},
	{.name = "net", .required = true},   {.name = "uts", .required = true},
	{.name = "ipc", .required = true},   {.name = "user", .required = false},
	{.name = "time", .required = false}, {.name = "cgroup", .required = false},
};

static void probe_ns_files(struct crf_ctx *ctx)
{
	char path[32], feature[32], link[64];
	ssize_t n;

	for (size_t i = 0; i < sizeof(probe_kinds) / sizeof(probe_kinds[0]); i++) {
		snprintf(path, sizeof(path), "/proc/self/ns/%s", probe_kinds[i].name);
		snprintf(feature, sizeof(feature), "ns-%s", probe_kinds[i].name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n < 0) {
			crf_probe_feature(ctx, feature, false, probe_kinds[i].required, "%s: %s",
					  path, strerror(errno));
			continue;
		}
		link[n] = '\0';
		crf_probe_feature(ctx, feature, true, probe_kinds[i].required, "%s -> %s", path,
				  link);
	}
}

/*
 * Run @fn in a forked child that exits right after, so that it may change its
 * own namespaces.  Returns @fn's result (0 or -errno), or -EINTR with @sig set
 * when the child was killed by a signal.
 */
static int run_in_child(int (*fn)(void), int *sig)
{
	int status;
	pid_t pid;

	*sig = 0;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		_exit(-fn());
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFSIGNALED(status)) {
		*sig = WTERMSIG(status);
		return -EINTR;
	}
	return -WEXITSTATUS(status);
}

/*
 * Enter our own namespaces again, several at once through a pidfd, as a
 * restored task enters those of the tree.  Namespaces that would also move
 * the caller's root (mnt) or children (pid) are left out: the point is the
 * pidfd form, which these three show as well.
 */
static int setns_self(void)
{
	_cleanup_close_ int pidfd = syscall(SYS_pidfd_open, getpid(), 0);

	if (pidfd < 0)
		return -errno;
	if (setns(pidfd, CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWNET))
		return -errno;
	return 0;
}

static void probe_pidfd_setns(struct crf_ctx *ctx)
{
	int r, sig;

	r = run_in_child(setns_self, &sig);
	if (sig)
		crf_probe_feature(ctx, "pidfd-setns", false, true,
				  "the test child was killed by signal %d", sig);
	else if (r)
		crf_probe_feature(ctx, "pidfd-setns", false, true,
				  "setns(pidfd, uts|ipc|net) in a child: %s%s", strerror(-r),
				  r == -EINVAL ? " (kernel < 5.8)" : "");
	else
		crf_probe_feature(
			ctx, "pidfd-setns", true, true,
			"a child re-entered its uts, ipc and net namespaces through its pidfd");
}

/*
 * Ask clone3 for our own PID, which is certainly taken: a kernel that honours
 * set_tid refuses with EEXIST, after checking the caller's capability over
 * the pid namespace.
 */
static void probe_clone3_set_tid(struct crf_ctx *ctx)
{
	pid_t tid = getpid();
	struct clone_args args = {
		.exit_signal = SIGCHLD,
		.set_tid = (uintptr_t)&tid,
		.set_tid_size = 1,
	};
	long r;

	r = syscall(SYS_clone3, &args, sizeof(args));
	if (r == 0)
		_exit(0); /* the kernel made a task after all; it must not run crf */
	if (r > 0) {
		waitpid(r, NULL, 0);
		crf_probe_feature(ctx, "clone3-set-tid", false, true,
				  "clone3 gave PID %ld when asked for the taken PID %d", r, tid);
		return;
	}
	switch (errno) {
	case EEXIST:
		crf_probe_feature(ctx, "clone3-set-tid", true, true,
				  "clone3 refused the taken PID %d with EEXIST", tid);
		break;
	case EPERM:
		crf_probe_feature(ctx, "clone3-set-tid", false, true,
				  "clone3 set_tid: EPERM (needs CAP_CHECKPOINT_RESTORE or "
				  "CAP_SYS_ADMIN over the pid namespace)");
		break;
	case ENOSYS:
		crf_probe_feature(ctx, "clone3-set-tid", false, true, "no clone3 (kernel < 5.3)");
		break;
	case E2BIG:
	case EINVAL:
		crf_probe_feature(ctx, "clone3-set-tid", false, true,
				  "clone3 set_tid: %s (kernel < 5.5)", strerror(errno));
		break;
	default:
		crf_probe_feature(ctx, "clone3-set-tid", false, true, "clone3 set_tid: %s",
				  strerror(errno));
		break;
	}
}

/* Runs as PID 1 of a fresh pid namespace, whose ns_last_pid it may set at will. */
static int write_last_pid(void)
{
	_cleanup_close_ int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, "1", 1);
	if (n != 1)
		return n < 0 ? -errno : -EIO;
	return 0;
}

/*
 * ns_last_pid acts on the writer's pid namespace; writing it in ours would
 * steer the PIDs of every process forked meanwhile, so write it in a
 * throwaway namespace instead.  The mount and the capability check are the same.
 */
static int last_pid_in_new_ns(void)
{
	int r, sig;

	if (unshare(CLONE_NEWPID))
		return -errno;
	r = run_in_child(write_last_pid, &sig);
	return sig ? -EINTR : r;
}

static void probe_ns_last_pid(struct crf_ctx *ctx)
{
	int r, sig;

	r = run_in_child(last_pid_in_new_ns, &sig);
	if (sig)
		crf_probe_feature(ctx, "ns-last-pid", false, false,
				  "the test child was killed by signal %d", sig);
	else if (r)
		crf_probe_feature(ctx, "ns-last-pid", false, false,
				  "writing ns_last_pid as init of a new pid namespace: %s",
				  strerror(-r));
	else
		crf_probe_feature(ctx, "ns-last-pid", true, false,
				  "written by the init of a throwaway pid namespace");
}

int ns_probe(struct crf_ctx *ctx)
{
	probe_ns_files(ctx);
	probe_pidfd_setns(ctx);
	probe_clone3_set_tid(ctx);
	probe_ns_last_pid(ctx);
	return 0;
}
