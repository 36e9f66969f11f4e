// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-taskstate: per-task attributes survive checkpoint and restore.
 *
 * State: lowered rlimits (NOFILE soft, STACK soft, CORE soft and hard,
 * MSGQUEUE soft and hard), nice +5 (-5 when that would pass 19), CPU affinity to the first allowed
 * CPU, umask 027, the working directory (CRF_TEST_TMPDIR), the name "crf-wl-task", and, as root,
 * capabilities with CAP_SYS_BOOT and CAP_NET_RAW dropped from the effective, permitted, inheritable
 * and bounding sets.
 *
 * After restore: every rlimit, the nice value, the affinity mask, the umask,
 * the working directory (path, device and inode), the name (prctl and
 * /proc/self/comm) and the five capability sets of /proc/self/status are
 * what they were.
 */
#include "wl.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define NAME "crf-wl-task"

static const char *const cap_fields[] = {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"};

struct snapshot {
	struct rlimit rl[RLIM_NLIMITS];
	int nice;
	cpu_set_t cpus;
	char umask[16];
	char cwd[PATH_MAX];
	struct stat cwd_st;
	char name[16];
	char comm[32];
	char caps[5][32];
};

static void snap(struct snapshot *s)
{
	memset(s, 0, sizeof(*s));
	for (int r = 0; r < RLIM_NLIMITS; r++)
		if (getrlimit(r, &s->rl[r]) < 0)
			wl_fail("getrlimit %d: %s", r, strerror(errno));
	errno = 0;
	s->nice = getpriority(PRIO_PROCESS, 0);
	if (errno)
		wl_fail("getpriority: %s", strerror(errno));
	if (sched_getaffinity(0, sizeof(s->cpus), &s->cpus) < 0)
		wl_fail("sched_getaffinity: %s", strerror(errno));
	wl_status_field("Umask", s->umask, sizeof(s->umask));
	if (!getcwd(s->cwd, sizeof(s->cwd)) || stat(".", &s->cwd_st) < 0)
		wl_fail("getcwd: %s", strerror(errno));
	if (prctl(PR_GET_NAME, s->name) < 0)
		wl_fail("PR_GET_NAME: %s", strerror(errno));
	if (wl_read_file("/proc/self/comm", s->comm, sizeof(s->comm)) < 0)
		wl_fail("read /proc/self/comm: %s", strerror(errno));
	for (int i = 0; i < 5; i++)
		wl_status_field(cap_fields[i], s->caps[i], sizeof(s->caps[i]));
}

static void compare(const struct snapshot *a, const struct snapshot *b)
{
	for (int r = 0; r < RLIM_NLIMITS; r++)
		if (a->rl[r].rlim_cur != b->rl[r].rlim_cur ||
		    a->rl[r].rlim_max != b->rl[r].rlim_max)
			wl_fail("rlimit %d is %llu/%llu, was %llu/%llu", r,
				(unsigned long long)b->rl[r].rlim_cur,
				(unsigned long long)b->rl[r].rlim_max,
				(unsigned long long)a->rl[r].rlim_cur,
				(unsigned long long)a->rl[r].rlim_max);
	if (a->nice != b->nice)
		wl_fail("nice is %d, was %d", b->nice, a->nice);
	if (!CPU_EQUAL(&a->cpus, &b->cpus))
		wl_fail("CPU affinity differs (%d CPUs, was %d)", CPU_COUNT(&b->cpus),
			CPU_COUNT(&a->cpus));
	if (strcmp(a->umask, b->umask))
		wl_fail("umask is %s, was %s", b->umask, a->umask);
	if (strcmp(a->cwd, b->cwd) || a->cwd_st.st_dev != b->cwd_st.st_dev ||
	    a->cwd_st.st_ino != b->cwd_st.st_ino)
		wl_fail("working directory is %s, was %s", b->cwd, a->cwd);
	if (strcmp(a->name, b->name) || strcmp(a->comm, b->comm))
		wl_fail("name is \"%s\", was \"%s\"", b->name, a->name);
	for (int i = 0; i < 5; i++)
		if (strcmp(a->caps[i], b->caps[i]))
			wl_fail("%s is %s, was %s", cap_fields[i], b->caps[i], a->caps[i]);
}

static void lower(int resource, rlim_t soft, rlim_t hard)
{
	struct rlimit rl;

	getrlimit(resource, &rl);
	if (soft < rl.rlim_cur || rl.rlim_cur == RLIM_INFINITY)
		rl.rlim_cur = soft;
	if (hard && (hard < rl.rlim_max || rl.rlim_max == RLIM_INFINITY))
		rl.rlim_max = hard;
	if (rl.rlim_cur > rl.rlim_max)
		rl.rlim_cur = rl.rlim_max;
	if (setrlimit(resource, &rl) < 0)
		wl_fail("setrlimit %d: %s", resource, strerror(errno));
}

static void drop_caps(void)
{
	const cap_value_t drop[] = {CAP_SYS_BOOT, CAP_NET_RAW};
	cap_t caps;

	if (geteuid() != 0) {
		wl_downgrade("not root: no capability dropped, so the capability sets are the "
			     "defaults");
		return;
	}
	for (size_t i = 0; i < 2; i++)
		if (cap_drop_bound(drop[i]) < 0)
			wl_fail("drop capability %d from the bounding set: %s", drop[i],
				strerror(errno));
	caps = cap_get_proc();
	if (!caps || cap_set_flag(caps, CAP_EFFECTIVE, 2, drop, CAP_CLEAR) < 0 ||
	    cap_set_flag(caps, CAP_PERMITTED, 2, drop, CAP_CLEAR) < 0 ||
	    cap_set_flag(caps, CAP_INHERITABLE, 2, drop, CAP_CLEAR) < 0 || cap_set_proc(caps) < 0)
		wl_fail("drop capabilities: %s", strerror(errno));
	cap_free(caps);
}

int main(void)
{
	struct snapshot before, after;
	cpu_set_t one;
	int nice0, cpu;

	wl_init("taskstate");
	lower(RLIMIT_NOFILE, 777, 0);
	lower(RLIMIT_STACK, 4 << 20, 0);
	lower(RLIMIT_CORE, 0, 1 << 20);
	lower(RLIMIT_MSGQUEUE, 300000, 400000);

	errno = 0;
	nice0 = getpriority(PRIO_PROCESS, 0);
	/*
	 * A nice value crf restore does not have: under `nice -n 19` (the
	 * mutants run) +5 would stay 19, crf's own, and prove nothing.
	 */
	if (setpriority(PRIO_PROCESS, 0, nice0 + 5 > 19 ? nice0 - 5 : nice0 + 5) < 0)
		wl_fail("setpriority: %s", strerror(errno));

	if (sched_getaffinity(0, sizeof(one), &one) < 0)
		wl_fail("sched_getaffinity: %s", strerror(errno));
	for (cpu = 0; cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &one); cpu++)
		;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one) < 0)
		wl_fail("sched_setaffinity: %s", strerror(errno));

	umask(027);
	if (chdir(wl_tmpdir()) < 0)
		wl_fail("chdir %s: %s", wl_tmpdir(), strerror(errno));
	if (prctl(PR_SET_NAME, NAME) < 0)
		wl_fail("PR_SET_NAME: %s", strerror(errno));
	drop_caps();

	snap(&before);
	if (strcmp(before.umask, "0027") || strcmp(before.name, NAME))
		wl_fail("umask %s, name %s: not what was set", before.umask, before.name);
	wl_ready();
	wl_wait_verify();
	snap(&after);
	compare(&before, &after);
	wl_note("rlimits, nice %d, CPU %d, umask, cwd, name, capabilities: intact", after.nice,
		cpu);
	return 0;
}
