// SPDX-License-Identifier: GPL-2.0-only
/*
 * The harness's run modes (harness.c describes them): the dumps, the
 * restores, the refusals expected of either, and the verification.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "harness.h"
#include "pty.h"
#include "util.h"

/* @arg with "%PIPE%" replaced by the outside pipe's name (slot @i of h.subst). */
static const char *subst(const char *arg, int i)
{
	const char *at = strstr(arg, "%PIPE%");

	if (!at || !h.out_name[0] || i >= (int)(sizeof(h.subst) / sizeof(h.subst[0])))
		return arg;
	snprintf(h.subst[i], sizeof(h.subst[i]), "%.*s%s%s", (int)(at - arg), arg, h.out_name,
		 at + 6);
	return h.subst[i];
}

static void fresh_dir(const char *dir)
{
	remove_images(dir);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		fail("mkdir %s: %s", dir, strerror(errno));
}

/* The task's maps as the last dump saw them: a restore must give them back. */
static char maps_before[1 << 16];

static void dump(const char *dir, bool leave)
{
	const char *args[32] = {"dump", "-t", NULL, "-D", dir};
	/* A dump that kills the tree syncs its images before the kill; --sync, any dump. */
	bool synced = !leave;
	char pidstr[16];
	int n = 5, st;
	int64_t ms;

	snprintf(pidstr, sizeof(pidstr), "%d", (int)h.pid);
	args[2] = pidstr;
	if (leave)
		args[n++] = "--leave-running";
	for (int i = 0; i < h.ndump_args; i++) {
		args[n++] = subst(h.dump_args[i], i);
		synced |= !strcmp(h.dump_args[i], "--sync");
	}
	fresh_dir(dir);
	snprintf(h.crf_log, sizeof(h.crf_log), "%s/crf-dump-%s.log", h.work,
		 dir == h.dir ? "1" : "2");
	if (read_maps(h.pid, maps_before, sizeof(maps_before)) < 0)
		fail("cannot read /proc/%d/maps: %s", (int)h.pid, strerror(errno));
	st = run_crf(args, h.crf_log, false, false, false, &ms);
	note_time("dump", ms);
	/* First the verdict: a dump that should have refused may have killed the workload. */
	if (h.expect_fail) {
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
			fail("crf dump of PID %d succeeded, but it should have refused",
			     (int)h.pid);
		if (!WIFEXITED(st))
			fail("crf dump of PID %d: %s, instead of refusing", (int)h.pid,
			     describe_status(st));
		check_maps_unchanged(maps_before, "after the refused dump");
		return;
	}
	if (leave)
		check_maps_unchanged(maps_before, "after dump --leave-running");
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail("crf dump of PID %d: %s", (int)h.pid, describe_status(st));
	check_image_size(dir);
	if (synced)
		check_images_synced(dir);
	if (leave) {
		check_running(h.pid, "after dump --leave-running");
		return;
	}
	/* The dump kills the tree: our child must die of SIGKILL, and be reaped now,
	 * before a restore needs its PID. */
	st = wait_exit(h.pid, "the dumped workload");
	if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL)
		fail("after crf dump, the workload (PID %d) ended with %s, not by SIGKILL",
		     (int)h.pid, describe_status(st));
	if (kill(h.pid, 0) == 0)
		fail("after crf dump, PID %d still exists", (int)h.pid);
	/* The job is gone: the shell has its terminal back. */
	if (h.pty && pty_shell_resume() < 0)
		fail("take the terminal back: %s", strerror(errno));
}

/* --expect-restore-fail: refused, with the message asked for, and nothing left running. */
static void restore_refused(int st)
{
	char state;

	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		fail("crf restore succeeded, but it should have refused");
	if (!WIFEXITED(st))
		fail("crf restore: %s, instead of refusing", describe_status(st));
	check_refusal();
	if (proc_stat(h.pid, &state) >= 0)
		fail("after the refused restore, PID %d exists (state %c)", (int)h.pid, state);
}

/* The start of crf's output in @path, as a string ("" if it cannot be read). */
static void read_log(const char *path, char *out, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, out, size - 1);

	if (fd >= 0)
		close(fd);
	out[n > 0 ? n : 0] = '\0';
}

/*
 * --restore-fault: a restore that fails at that point, late, after the
 * tree was made: one error naming the point, exit 1, and nothing of the
 * tree left (the PID free again), so that the same images restore next.
 */
static void restore_failing(const char *dir)
{
	const char *args[16] = {"restore", "-D", dir, "-d"};
	char spec[128], state, out[16384];
	int64_t ms;
	int st;

	for (int i = 0; i < h.nrestore_args; i++)
		args[4 + i] = subst(h.restore_args[i], 16 + i);
	snprintf(spec, sizeof(spec), "fail@%s", h.restore_fault);
	snprintf(h.crf_log, sizeof(h.crf_log), "%s/crf-restore-fault.log", h.work);
	if (setenv("CRF_FAULT", spec, 1) < 0)
		fail("setenv: %s", strerror(errno));
	st = run_crf(args, h.crf_log, false, h.pty, true, &ms);
	unsetenv("CRF_FAULT");
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 1)
		fail("crf restore with CRF_FAULT=%s: %s, not exit 1", spec, describe_status(st));
	read_log(h.crf_log, out, sizeof(out));
	if (!strstr(out, "fault injected") || !strstr(out, h.restore_fault))
		fail("crf restore with CRF_FAULT=%s failed, but not at that point", spec);
	if (proc_stat(h.pid, &state) >= 0)
		fail("after the failed restore, PID %d exists (state %c)", (int)h.pid, state);
}

static void restore(const char *dir)
{
	const char *args[16] = {"restore", "-D", dir, "-d"};
	char state;
	int64_t ms;
	pid_t ppid;
	int st;

	for (int i = 0; i < h.nrestore_args; i++)
		args[4 + i] = subst(h.restore_args[i], 16 + i);
	if (h.expect_restore_fail) {
		snprintf(h.crf_log, sizeof(h.crf_log), "%s/crf-restore.log", h.work);
		st = run_crf(args, h.crf_log, false, h.pty, true, &ms);
		restore_refused(st);
		return;
	}
	st = run_crf(args, h.log, true, h.pty, true, &ms);
	note_time("restore", ms);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail("crf restore -D %s -d: %s", dir, describe_status(st));
	ppid = proc_stat(h.pid, &state);
	if (ppid < 0)
		fail("after crf restore -d, PID %d does not exist", (int)h.pid);
	if (ppid != getpid())
		fail("after crf restore -d, PID %d's parent is %d, not the harness (%d), the "
		     "nearest child subreaper",
		     (int)h.pid, (int)ppid, (int)getpid());
	check_running(h.pid, "after crf restore -d");
	/* Same address space, no trace of the restorer. */
	check_maps_unchanged(maps_before, "after crf restore -d");
}

static void write_atomic(const char *path, const char *text)
{
	char tmp[PATH_MAX + 8];
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) || close(fd) < 0 ||
	    rename(tmp, path) < 0)
		fail("create %s: %s", path, strerror(errno));
}

static void wait_ready(void)
{
	char buf[4096];
	ssize_t n;
	int fd, st;

	while (access(h.ready, F_OK) < 0) {
		if (take_exit(h.pid, &st))
			fail("the workload ended before it was ready: %s", describe_status(st));
		if (now_ms() > h.deadline_ms)
			fail("timeout (%d s) waiting for the workload to be ready", h.timeout_s);
		if (h.pty)
			pty_drain(h.log);
		outside_drain();
		sleep_ms(5);
	}
	fd = open(h.ready, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		fail("read %s: %s", h.ready, n < 0 ? strerror(errno) : "empty");
	buf[n] = '\0';
	if (strncmp(buf, "pid=", 4) || atoi(buf + 4) != h.pid)
		fail("the ready file names another process: %.*s", (int)strcspn(buf, "\n"), buf);
}

static void verify(void)
{
	int st;

	if (h.expect_stopped && kill(h.pid, SIGCONT) < 0)
		fail("SIGCONT to PID %d: %s", (int)h.pid, strerror(errno));
	write_atomic(h.verify, "verify\n");
	if (h.pty && pty_type("line-after-restore\n") < 0)
		fail("type on the terminal: %s", strerror(errno));
	st = wait_exit(h.pid, "the workload to verify its state");
	if (!h.expect_verify_fail) {
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			fail("the workload's verdict: %s", describe_status(st));
		return;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 1)
		fail("the workload's verdict: %s, but its verification should have failed",
		     describe_status(st));
	check_verify_failure(h.expect_verify_fail);
}

/*
 * --expect-restore-fail: the restore must refuse before it forks anything,
 * while the dumped workload still runs at its PID (a restore that went as
 * far as creating the process would fail on that PID instead).
 */
static void run_refused_restore(void)
{
	const char *args[16] = {"restore", "-D", h.dir, "-d"};
	char out[16384];
	int64_t ms;
	int st;

	dump(h.dir, true);
	for (int i = 0; i < h.nrestore_args; i++)
		args[4 + i] = subst(h.restore_args[i], 16 + i);
	snprintf(h.crf_log, sizeof(h.crf_log), "%s/crf-restore.log", h.work);
	st = run_crf(args, h.crf_log, false, false, true, &ms);
	note_time("restore", ms);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		fail("crf restore -D %s succeeded, but it should have refused", h.dir);
	if (!WIFEXITED(st))
		fail("crf restore -D %s: %s, instead of refusing", h.dir, describe_status(st));
	read_log(h.crf_log, out, sizeof(out));
	if (!matches(out, h.expect_restore_fail))
		fail("the refused restore's output does not match /%s/", h.expect_restore_fail);
	check_running(h.pid, "after the refused restore");
	check_maps_unchanged(maps_before, "after the refused restore");
	verify();
}

void run(void)
{
	int st;

	if (h.own_cgroup) {
		char name[64];
		int r;

		snprintf(name, sizeof(name), "crf-e2e-%d", (int)getpid());
		r = e2e_cgroup_create(name, h.cgroup, sizeof(h.cgroup));
		if (r < 0) {
			h.cgroup[0] = '\0';
			fail("cannot create a cgroup for the workload: %s", strerror(-r));
		}
	}
	if (h.own_cgroups_v1) {
		char name[64];
		int n;

		snprintf(name, sizeof(name), "crf-e2e-%d", (int)getpid());
		n = e2e_cgroup_v1_create(name, h.cgroups_v1,
					 (int)(sizeof(h.cgroups_v1) / sizeof(h.cgroups_v1[0])));
		if (n < 0)
			fail("cannot create the workload's cgroups v1: %s", strerror(-n));
		h.n_cgroups_v1 = n;
		if (!n)
			printf("  note: no cgroup v1 hierarchy is mounted: the workload has v2 "
			       "only\n");
	}
	h.pid = spawn(h.workload, h.log, false, true, h.pty, true);
	wait_ready();
	if (h.expect_stopped)
		wait_stopped();
	sleep_ms(h.settle_ms);
	/* A refused restore of a --leave-running dump; kill mode refuses in restore(). */
	if (h.expect_restore_fail && h.mode == MODE_LEAVE) {
		run_refused_restore();
		return;
	}
	if (h.expect_fail) {
		dump(h.dir, h.mode == MODE_LEAVE);
		if (take_exit(h.pid, &st))
			fail("the refused dump ended the workload: %s", describe_status(st));
		check_refusal();
		check_running(h.pid, "after the refused dump");
		verify();
		return;
	}
	switch (h.mode) {
	case MODE_KILL:
		dump(h.dir, false);
		sleep_ms(h.pause_ms);
		if (h.restore_fault)
			restore_failing(h.dir);
		restore(h.dir);
		if (h.expect_restore_fail)
			return;
		break;
	case MODE_LEAVE:
		dump(h.dir, true);
		break;
	case MODE_TWICE:
		dump(h.dir, false);
		restore(h.dir);
		sleep_ms(300); /* let the restored process run a little */
		dump(h.dir2, false);
		restore(h.dir2);
		break;
	}
	verify();
}
