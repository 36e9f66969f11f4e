// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-cgroup [thread]: a process with a second thread, in whatever cgroups
 * the harness put it in (--own-cgroup: a scratch cgroup v2; --own-cgroups-v1:
 * one in every v1 hierarchy).  It reads /proc/self/cgroup and its thread's
 * /proc/self/task/TID/cgroup at the start and, after the restore, checks
 * both are the same, and that its cgroup v2 is not left frozen (a dump with
 * --freeze=cgroup froze it).
 *
 * thread: the second thread is moved into a cgroup of its own below the
 * process's: a threaded cgroup v2 (its parent becomes the threaded domain)
 * when the process is in a cgroup v2 of its own, and a child in the first v1
 * hierarchy (cpuset aside) where the process is not in the root.  The
 * harness removes those with its cgroups.
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static atomic_int thread_tid, done;

static void *thread_main(void *arg)
{
	(void)arg;
	atomic_store(&thread_tid, (int)syscall(SYS_gettid));
	while (!atomic_load(&done))
		usleep(10000);
	return NULL;
}

/* The mount point of the hierarchy of @controllers ("" for v2), or false. */
static bool mount_of(const char *controllers, char *out, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096], mnt[1024], opts[1024];
	bool found = false;

	if (!f)
		wl_fail("open mountinfo: %m");
	while (!found && fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - ");
		char fstype[32], want[256];

		if (!sep || sscanf(line, "%*s %*s %*s %*s %1023s", mnt) != 1 ||
		    sscanf(sep + 3, "%31s %*s %1021s", fstype, opts + 1) != 2)
			continue;
		opts[0] = ',';
		strcat(opts, ",");
		if (!*controllers) {
			found = !strcmp(fstype, "cgroup2");
			continue;
		}
		snprintf(want, sizeof(want), ",%s,", controllers);
		found = !strcmp(fstype, "cgroup") && strstr(opts, want);
	}
	fclose(f);
	if (found)
		snprintf(out, len, "%s", mnt);
	return found;
}

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		wl_fail("write '%s' to %s: %m", text, path);
	close(fd);
}

/* Make DIR/t and move the thread there through @file ("cgroup.threads", "tasks"). */
static void thread_into_child(const char *dir, bool v2, const char *file)
{
	char child[4200], path[4300], tid[16];

	snprintf(child, sizeof(child), "%s/t", dir);
	if (mkdir(child, 0755) < 0)
		wl_fail("mkdir %s: %m", child);
	if (v2) {
		snprintf(path, sizeof(path), "%s/cgroup.type", child);
		write_file(path, "threaded");
	}
	snprintf(path, sizeof(path), "%s/%s", child, file);
	snprintf(tid, sizeof(tid), "%d", atomic_load(&thread_tid));
	write_file(path, tid);
	wl_note("thread %s moved into %s", tid, child);
}

/* Each line of /proc/self/cgroup: the thread into a child where the process has a cgroup of its
 * own. */
static void move_thread(void)
{
	char text[8192], mnt[1024], dir[4096];
	bool v1_done = false;

	if (wl_read_file("/proc/self/cgroup", text, sizeof(text)) < 0)
		wl_fail("read /proc/self/cgroup: %m");
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char *c = strchr(line, ':'), *p = c ? strchr(c + 1, ':') : NULL;
		bool v2;

		if (!p)
			wl_fail("/proc/self/cgroup: '%s'", line);
		*p++ = '\0';
		v2 = !c[1];
		if (!strcmp(p, "/") || (!v2 && (v1_done || !strcmp(c + 1, "cpuset"))) ||
		    !mount_of(c + 1, mnt, sizeof(mnt)))
			continue;
		snprintf(dir, sizeof(dir), "%s%s", mnt, p);
		thread_into_child(dir, v2, v2 ? "cgroup.threads" : "tasks");
		v1_done |= !v2;
	}
}

/* /proc/self/cgroup (@tid NULL) or /proc/self/task/TID/cgroup. */
static void cgroup_of(const char *tid, char *out, size_t len)
{
	char path[64];

	if (tid)
		snprintf(path, sizeof(path), "/proc/self/task/%s/cgroup", tid);
	else
		snprintf(path, sizeof(path), "/proc/self/cgroup");
	if (wl_read_file(path, out, len) < 0)
		wl_fail("read %s: %m", path);
}

/* A cgroup v2 of the process's own must not be left frozen by the dump. */
static void check_thawed(const char *cgroup)
{
	char mnt[1024], path[4200], events[512];
	const char *line = strstr(cgroup, "0::");

	if (!line || !strncmp(line, "0::/\n", 5) || !mount_of("", mnt, sizeof(mnt)))
		return;
	snprintf(path, sizeof(path), "%s%.*s/cgroup.events", mnt, (int)strcspn(line + 3, "\n"),
		 line + 3);
	if (wl_read_file(path, events, sizeof(events)) < 0)
		wl_fail("read %s: %m", path);
	WL_CHECK(strstr(events, "frozen 0"), "%s says the cgroup is frozen: %s", path, events);
}

int main(int argc, char **argv)
{
	char proc_before[8192], proc_after[8192], thr_before[8192], thr_after[8192], tid[16];
	bool thread_mode = argc > 1 && !strcmp(argv[1], "thread");
	pthread_t th;

	wl_init("cgroup");
	if (pthread_create(&th, NULL, thread_main, NULL))
		wl_fail("pthread_create");
	while (!atomic_load(&thread_tid))
		usleep(1000);
	snprintf(tid, sizeof(tid), "%d", atomic_load(&thread_tid));
	if (thread_mode)
		move_thread();
	cgroup_of(NULL, proc_before, sizeof(proc_before));
	cgroup_of(tid, thr_before, sizeof(thr_before));
	if (thread_mode && !strcmp(proc_before, thr_before))
		wl_fail("no cgroup of its own to put the thread below (use --own-cgroup)");
	wl_ready();
	wl_wait_verify();
	wl_check_untraced();
	cgroup_of(NULL, proc_after, sizeof(proc_after));
	cgroup_of(tid, thr_after, sizeof(thr_after));
	WL_CHECK(!strcmp(proc_before, proc_after),
		 "the process's cgroups were\n%swhere they are\n%s", proc_before, proc_after);
	WL_CHECK(!strcmp(thr_before, thr_after), "thread %s's cgroups were\n%swhere they are\n%s",
		 tid, thr_before, thr_after);
	check_thawed(proc_after);
	atomic_store(&done, 1);
	pthread_join(th, NULL);
	wl_note("the process and its thread are in the cgroups they were in");
	return 0;
}
