// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/ioprio.h>

#include <crf/log.h>

#include "cpu.h"
#include "rst-task.h"
#include "task-attrs.h"
#include "rst-apply.h"

static int apply_sched(const Crf__Core__TaskCore *tc)
{
	struct sched_param sp = {.sched_priority = tc->sched_priority};
	cpu_set_t set;

	if (sched_setscheduler(0, tc->sched_policy, &sp) < 0)
		return crf_error_errno(errno, "sched_setscheduler(%d, %d)", tc->sched_policy,
				       tc->sched_priority);
	if (setpriority(PRIO_PROCESS, 0, tc->nice) < 0)
		return crf_error_errno(errno, "setpriority(%d)", tc->nice);
	memset(&set, 0, sizeof(set));
	memcpy(&set, tc->affinity.data,
	       tc->affinity.len < sizeof(set) ? tc->affinity.len : sizeof(set));
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		return crf_error_errno(errno, "sched_setaffinity");
	/* 0 (none set) too: crf's own would be inherited. */
	if (tc->has_ioprio && syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, (int)tc->ioprio) < 0)
		return crf_error_errno(errno, "ioprio_set(%#x)", tc->ioprio);
	return 0;
}

/* The mm's core dump filter; crf's own is inherited otherwise. */
static int apply_coredump_filter(const Crf__Core__TaskCore *tc)
{
	char buf[16];
	int fd, n;

	if (!tc->has_coredump_filter)
		return 0;
	n = snprintf(buf, sizeof(buf), "0x%x", tc->coredump_filter);
	fd = open("/proc/self/coredump_filter", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, buf, (size_t)n) != n) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		return crf_error_errno(e, "/proc/self/coredump_filter: write %s", buf);
	}
	close(fd);
	return 0;
}

static int enter_root(void *arg)
{
	const char *root = arg;

	if (chroot(root) < 0)
		return crf_error_errno(errno, "chroot %s", root);
	return 0;
}

/*
 * Both paths were read from crf's root (/proc/PID/cwd and root).  The cwd
 * is entered now; the root is changed last, once crf needs no path any
 * more (the plugins open files by path, crf reads its own /proc), just
 * before the restorer: that leaves the cwd where it is, inside the new
 * root or not, as chroot(2) did for the program.
 */
int task_apply_root(struct crf_rst_task *t, const Crf__Core__TaskCore *tc)
{
	if (!strcmp(tc->root, "/"))
		return 0;
	return rst_task_at_fds_placed(t, enter_root, tc->root, NULL);
}

int task_apply(const Crf__Core__TaskCore *tc)
{
	int r;

	/* The personality is the restorer's to set (attrs_fill). */
	r = apply_sched(tc);
	if (r >= 0)
		r = apply_coredump_filter(tc);
	if (r >= 0)
		r = attrs_apply(tc);
	if (r >= 0)
		r = cpu_apply_task(tc);
	if (r < 0)
		return r;
	umask((mode_t)tc->umask);
	if (chdir(tc->cwd) < 0)
		return crf_error_errno(errno, "chdir %s", tc->cwd);
	if (prctl(PR_SET_NAME, tc->comm, 0, 0, 0) < 0)
		return crf_error_errno(errno, "PR_SET_NAME %s", tc->comm);
	return 0;
}
