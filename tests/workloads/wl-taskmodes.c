// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-taskmodes: I/O priorities and the core dump filter survive checkpoint
 * and restore, and modes crf does not restore are refused.
 *
 *   the leader: ioprio best-effort 2, coredump_filter 0x7b
 *   thread A:   ioprio idle
 *   thread B:   none (ioprio_set 0 after it inherited the leader's)
 *
 * After the restore each thread's ioprio_get and /proc/self/coredump_filter
 * are as they were.  Refused at the dump, the mode still there after:
 * "tsc" (PR_SET_TSC PR_TSC_SIGSEGV), "mce" (PR_MCE_KILL early), "mdwe"
 * (PR_SET_MDWE).  (cpuid faulting, refused too, is not tested: not every
 * CPU can fault cpuid.)
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/ioprio.h>

#define PR_SET_MDWE_ 65
#define PR_GET_MDWE_ 66

static atomic_int stage;

static long prio_get(void)
{
	return syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0);
}

static void prio_set(int v)
{
	WL_CHECK(!syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, v), "ioprio_set %#x: %s", v,
		 strerror(errno));
}

static long filter(void)
{
	char buf[32];

	WL_CHECK(wl_read_file("/proc/self/coredump_filter", buf, sizeof(buf)) > 0,
		 "coredump_filter: %s", strerror(errno));
	return strtol(buf, NULL, 16);
}

static void *thread(void *arg)
{
	long want = (long)arg;

	prio_set((int)want);
	atomic_fetch_add(&stage, 1);
	while (atomic_load(&stage) < 3)
		usleep(1000);
	WL_CHECK(prio_get() == want, "thread: ioprio %#lx, was %#lx", prio_get(), want);
	atomic_fetch_add(&stage, 1);
	return NULL;
}

static void set_mode(const char *mode)
{
	if (!strcmp(mode, "tsc"))
		WL_CHECK(!prctl(PR_SET_TSC, PR_TSC_SIGSEGV), "PR_SET_TSC: %s", strerror(errno));
	if (!strcmp(mode, "mce"))
		WL_CHECK(!prctl(PR_MCE_KILL, PR_MCE_KILL_SET, PR_MCE_KILL_EARLY, 0, 0),
			 "PR_MCE_KILL: %s", strerror(errno));
	if (!strcmp(mode, "mdwe"))
		WL_CHECK(!prctl(PR_SET_MDWE_, 1, 0, 0, 0), "PR_SET_MDWE: %s", strerror(errno));
}

static void check_mode(const char *mode)
{
	int tsc = 0;

	if (!strcmp(mode, "tsc")) {
		int got = prctl(PR_GET_TSC, &tsc);

		prctl(PR_SET_TSC, PR_TSC_ENABLE);
		WL_CHECK(!got && tsc == PR_TSC_SIGSEGV, "PR_GET_TSC %d", tsc);
	}
	if (!strcmp(mode, "mce"))
		WL_CHECK(prctl(PR_MCE_KILL_GET, 0, 0, 0, 0) == PR_MCE_KILL_EARLY,
			 "PR_MCE_KILL_GET");
	if (!strcmp(mode, "mdwe"))
		WL_CHECK(prctl(PR_GET_MDWE_, 0, 0, 0, 0) == 1, "PR_GET_MDWE");
	wl_note("the refused dump left mode '%s' as it was", mode);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	long lead = IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 2);
	pthread_t a, b;
	int fd;

	wl_init("taskmodes");
	prio_set((int)lead);
	fd = open("/proc/self/coredump_filter", O_WRONLY | O_CLOEXEC);
	WL_CHECK(fd >= 0 && write(fd, "0x7b", 4) == 4, "coredump_filter: %s", strerror(errno));
	close(fd);
	WL_CHECK(!pthread_create(&a, NULL, thread,
				 (void *)(long)IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0)) &&
			 !pthread_create(&b, NULL, thread, (void *)0L),
		 "pthread_create");
	while (atomic_load(&stage) < 2)
		usleep(1000);
	set_mode(mode);
	wl_ready();
	if (!strcmp(mode, "tsc")) {
		/* rdtsc faults now, and the vDSO's clocks use it: plain syscalls only. */
		struct timespec ts = {0, 2000000};
		const char *v = getenv("CRF_TEST_VERIFY");

		while (v && access(v, F_OK))
			syscall(SYS_nanosleep, &ts, NULL);
	} else {
		wl_wait_verify();
	}
	if (mode[0]) {
		check_mode(mode);
		return 0;
	}
	WL_CHECK(prio_get() == lead, "leader: ioprio %#lx, was %#lx", prio_get(), lead);
	WL_CHECK(filter() == 0x7b, "coredump_filter %#lx, was 0x7b", filter());
	atomic_store(&stage, 3);
	WL_CHECK(!pthread_join(a, NULL) && !pthread_join(b, NULL), "pthread_join");
	wl_note("ioprio of three threads and the core dump filter as they were");
	return 0;
}
