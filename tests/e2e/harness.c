// SPDX-License-Identifier: GPL-2.0-only
/*
 * harness: run one end-to-end checkpoint/restore test.
 *
 *   harness [--mode kill|leave|twice] [--timeout S] [--keep] [--name NAME]
 *           [--expect-dump-fail REGEX] [--dump-arg ARG]... [--counter-lines]
 *           [--settle MS] [--own-cgroup] [--own-cgroups-v1] [--pty]
 *           [--restore-arg ARG]... [--expect-stopped]
 *           [--expect-restore-fail REGEX] [--expect-verify-fail REGEX]
 *           [--outside-pipe FD | --outside-fifo FD] [--max-image-kb N]
 *           --crf PATH --dir DIR -- WORKLOAD [ARGS...]
 *
 * The workload (tests/workloads) sets up its state, creates the file named
 * by CRF_TEST_READY, and verifies its state when the file named by
 * CRF_TEST_VERIFY appears, exiting 0 if everything is intact.  Between the
 * two, the harness checkpoints and restores it:
 *
 *   kill   crf dump (the workload must die of SIGKILL), crf restore -d (the
 *          same PID must come back, running, as our child), verify
 *   leave  crf dump --leave-running (the workload must still run, neither
 *          stopped nor traced), verify
 *   twice  dump, restore, dump the restored process into DIR.2, restore
 *          that, verify
 *   --settle MS: wait MS ms between ready and the first dump
 *   --counter-lines: the "counter: N" lines the workload printed into
 *          the log (before the dump, and after the restore: its fds 1
 *          and 2 are the log again, appended to) must count 1, 2, 3...
 *          without a gap or a repeat
 *   --dump-arg ARG: pass ARG to every crf dump (e.g. --freeze=ptrace)
 *   --restore-arg ARG: pass ARG to every crf restore (e.g. --shell-job)
 *   --own-cgroup: the workload runs alone in a scratch cgroup v2, a child
 *          of ours, removed at the end (with whatever the workload made in it)
 *   --own-cgroups-v1: the same in every cgroup v1 hierarchy mounted (none on
 *          a host with only cgroup v2)
 *   --pty: the harness plays an interactive shell (pty.h): the workload
 *          runs on a terminal it owns, as the foreground job, with fds
 *          0-2 on it; crf restore runs there too (its fd 0), in the
 *          foreground; when a dump killed the workload, the harness takes
 *          the terminal back as a shell does (its own settings, and
 *          another window size, as a new terminal); the verification
 *          request is followed by the line "line-after-restore" typed on
 *          the terminal
 *   --outside-pipe FD, --outside-fifo FD: the workload's fd FD is the
 *          write end of a pipe (a FIFO in the work directory) whose read
 *          end the harness holds: a process outside the tree.  crf restore
 *          gets the same write end at FD, and "%PIPE%" in a --dump-arg or
 *          --restore-arg becomes the pipe's name (pipe:[INODE],
 *          fifo:[INODE]).  What the harness reads must be the lines
 *          "outside: 1", "outside: 2"... "outside: N", "outside: done N"
 *   --expect-restore-fail REGEX: (mode kill) the restore must fail with
 *          output matching REGEX and leave no process behind
 *   --expect-dump-fail REGEX: the dump must fail, its output must match
 *          REGEX (extended, case-insensitive), and the workload must still
 *          run unharmed; then verify
 *   --expect-stopped: the workload stops itself (SIGSTOP) once it is ready:
 *          the harness dumps it only once it is stopped, and after the
 *          restore (or the --leave-running dump) it must be stopped, every
 *          thread of it; SIGCONT then resumes it before the verification
 *   --expect-restore-fail REGEX with --mode leave: dump with
 *          --leave-running, then the restore must fail before it creates
 *          anything (the workload still runs at the PID), its output
 *          matching REGEX; then verify
 *   --max-image-kb N: each dump's image directory must hold at most N KiB
 *          (a 1 GiB sparse file must not make a 1 GiB image)
 *   --expect-verify-fail REGEX: the workload's verification must fail (exit
 *          status 1) with a "wl-NAME: FAIL: ..." line that matches REGEX:
 *          the harness self-test's fake crf corrupts memory on purpose, and
 *          only the workload's noticing it may fail the test
 *
 * The harness is a child subreaper, so the restored process (and anything
 * crf leaves behind) becomes its child and is reaped: a zombie would keep
 * its PID, and a restore into that PID would fail.  On any failure, or when
 * the timeout (default 60 s) passes, it prints one "FAIL" line with the
 * reason and the tails of the logs, kills and reaps everything it started,
 * and exits 1; on success it prints "PASS NAME MODE" and exits 0.  It never
 * skips.  The image directories and the work directory (logs, the
 * workload's files) are removed unless --keep.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "pty.h"
#include "util.h"

enum mode { MODE_KILL, MODE_LEAVE, MODE_TWICE };

static const char *const mode_names[] = {"kill", "leave", "twice"};

struct exited {
	pid_t pid;
	int status;
};

static struct harness {
	enum mode mode;
	int timeout_s;
	int settle_ms;
	long max_image_kb; /* 0: no limit */
	bool keep, counter_lines, own_cgroup, own_cgroups_v1, pty, expect_stopped;
	char cgroup[PATH_MAX];	/* --own-cgroup: the workload's scratch cgroup v2 */
	char cgroups_v1[16][4096]; /* --own-cgroups-v1: one per v1 hierarchy */
	int n_cgroups_v1;
	const char *name, *crf, *dir, *expect_fail, *expect_verify_fail, *expect_restore_fail;
	const char *dump_args[16], *restore_args[8];
	int ndump_args, nrestore_args;
	char **workload;

	char dir2[PATH_MAX];
	char work[64];	    /* logs, ready and verify files, the workload's files */
	char log[PATH_MAX]; /* the workload's stdout and stderr, and crf restore's */
	char ready[PATH_MAX], verify[PATH_MAX];
	char crf_log[PATH_MAX]; /* the last crf dump's output */
	pid_t pid;		/* the workload */
	int64_t deadline_ms;
	/* --outside-pipe/--outside-fifo: the workload's fd, our ends, the name, what we read */
	int outside_fd;
	bool outside_fifo;
	int out_r, out_w;
	char out_name[64];
	char out_log[PATH_MAX];
	char subst[32][256]; /* the arguments with %PIPE% replaced */
	struct exited exited[256];
	int nexited;
	char timings[512];
} h;




/* The workload's environment names our ready file: that is how we know it. */
static bool is_our_workload(pid_t pid)
{
	char path[64], env[65536], want[PATH_MAX + 32];
	size_t len = 0, wlen;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	while (len < sizeof(env) && (n = read(fd, env + len, sizeof(env) - len)) > 0)
		len += (size_t)n;
	close(fd);
	wlen = (size_t)snprintf(want, sizeof(want), "CRF_TEST_READY=%s", h.ready) + 1;
	for (size_t i = 0; i + wlen <= len; i += strnlen(env + i, len - i) + 1)
		if (!memcmp(env + i, want, wlen))
			return true;
	return false;
}


static void reap(void)
{
	pid_t pid;
	int st;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		if (h.nexited == (int)(sizeof(h.exited) / sizeof(h.exited[0]))) {
			memmove(h.exited, h.exited + 1, sizeof(h.exited) - sizeof(h.exited[0]));
			h.nexited--;
		}
		h.exited[h.nexited++] = (struct exited){pid, st};
	}
}

/* Consume the recorded exit of PID: a restored process reuses the PID. */
static bool take_exit(pid_t pid, int *status)
{
	reap();
	for (int i = 0; i < h.nexited; i++) {
		if (h.exited[i].pid != pid)
			continue;
		*status = h.exited[i].status;
		memmove(h.exited + i, h.exited + i + 1,
			sizeof(h.exited[0]) * (size_t)(h.nexited - i - 1));
		h.nexited--;
		return true;
	}
	return false;
}

/* Kill and reap everything we started, and anything that was reparented to us. */
static void kill_all(void)
{
	int64_t until = now_ms() + 10000;
	char state;

	if (h.pid > 0 && (proc_stat(h.pid, &state) == getpid() || is_our_workload(h.pid)))
		kill(h.pid, SIGKILL);
	for (;;) {
		DIR *d = opendir("/proc");
		struct dirent *e;
		bool any = false;

		while (d && (e = readdir(d))) {
			pid_t pid = (pid_t)atoi(e->d_name);

			if (pid > 0 && proc_stat(pid, &state) == getpid()) {
				kill(pid, SIGKILL);
				any = true;
			}
		}
		if (d)
			closedir(d);
		reap();
		if (!any && waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD)
			return;
		if (now_ms() > until) {
			fprintf(stderr, "  note: some children could not be reaped\n");
			return;
		}
		sleep_ms(10);
	}
}



static void clean_up(void)
{
	kill_all();
	if (h.cgroup[0] && e2e_cgroup_remove(h.cgroup) < 0)
		fprintf(stderr, "  could not remove the cgroup %s\n", h.cgroup);
	for (int i = 0; i < h.n_cgroups_v1; i++)
		if (e2e_cgroup_remove(h.cgroups_v1[i]) < 0)
			fprintf(stderr, "  could not remove the cgroup %s\n", h.cgroups_v1[i]);
	h.n_cgroups_v1 = 0;
	if (h.keep) {
		fprintf(stderr, "  kept: %s %s%s\n", h.work, h.dir,
			h.mode == MODE_TWICE ? " (and .2)" : "");
		return;
	}
	remove_images(h.dir);
	if (h.mode == MODE_TWICE)
		remove_images(h.dir2);
	if (h.work[0])
		remove_tree(h.work);
}

static const char *test_mode(void)
{
	if (h.expect_restore_fail)
		return "expect-restore-fail";
	return h.expect_fail ? "expect-dump-fail" : mode_names[h.mode];
}

__attribute__((format(printf, 1, 2))) _Noreturn static void fail(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "FAIL %s %s: ", h.name, test_mode());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (h.crf_log[0])
		print_tail("last crf dump (or refused restore) output", h.crf_log);
	if (h.log[0])
		print_tail("workload and crf restore output", h.log);
	clean_up();
	exit(1);
}

/* Append what the workload wrote into the outside pipe to out_log. */
static void outside_drain(void)
{
	char buf[4096];
	ssize_t n;
	int fd = -1;

	if (h.out_r < 0)
		return;
	while ((n = read(h.out_r, buf, sizeof(buf))) > 0) {
		if (fd < 0)
			fd = open(h.out_log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0 || write(fd, buf, (size_t)n) != n)
			break;
	}
	if (fd >= 0)
		close(fd);
}

/* Wait for PID (our child) to end, within the global deadline. */
static int wait_exit(pid_t pid, const char *what)
{
	int st;

	while (!take_exit(pid, &st)) {
		if (now_ms() > h.deadline_ms)
			fail("timeout (%d s) waiting for %s (PID %d) to end", h.timeout_s, what,
			     (int)pid);
		if (h.pty)
			pty_drain(h.log);
		outside_drain();
		sleep_ms(5);
	}
	return st;
}

static void append_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void append_log(const char *fmt, ...)
{
	va_list ap;
	FILE *f = fopen(h.log, "ae");

	if (!f)
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

static void redirect(int fd, const char *path, int flags)
{
	int nfd = open(path, flags, 0644);

	if (nfd < 0 || dup2(nfd, fd) < 0) {
		dprintf(2, "harness: %s: %s\n", path, strerror(errno));
		_exit(127);
	}
	if (nfd != fd)
		close(nfd);
}

/*
 * Start ARGV with stdin from /dev/null and stdout and stderr into OUT; with
 * --pty, the workload's fds 0-2 and crf restore's fd 0 are the terminal.
 */
static pid_t spawn(char *const argv[], const char *out, bool append, bool workload, bool terminal,
		   bool outside)
{
	pid_t pid = fork();
	char timeout[32];

	if (pid < 0)
		fail("fork: %s", strerror(errno));
	if (pid > 0)
		return pid;
	redirect(0, "/dev/null", O_RDONLY);
	redirect(1, out, O_WRONLY | O_CREAT | O_APPEND | (append ? 0 : O_TRUNC));
	if (dup2(1, 2) < 0)
		_exit(127);
	if (outside && h.out_w >= 0 && dup2(h.out_w, h.outside_fd) < 0)
		_exit(127);
	if (terminal && pty_child(workload) < 0) {
		dprintf(2, "harness: cannot run on the terminal: %s\n", strerror(errno));
		_exit(127);
	}
	if (workload) {
		snprintf(timeout, sizeof(timeout), "%d", h.timeout_s + 10);
		setenv("CRF_TEST_READY", h.ready, 1);
		setenv("CRF_TEST_VERIFY", h.verify, 1);
		setenv("CRF_TEST_TMPDIR", h.work, 1);
		setenv("CRF_TEST_TIMEOUT", timeout, 1);
		if (h.cgroup[0] && e2e_cgroup_enter(h.cgroup) < 0) {
			dprintf(2, "harness: cannot enter %s: %s\n", h.cgroup, strerror(errno));
			_exit(127);
		}
		for (int i = 0; i < h.n_cgroups_v1; i++)
			if (e2e_cgroup_enter(h.cgroups_v1[i]) < 0) {
				dprintf(2, "harness: cannot enter %s: %s\n", h.cgroups_v1[i],
					strerror(errno));
				_exit(127);
			}
	}
	execvp(argv[0], argv);
	dprintf(2, "harness: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/*
 * Run crf with ARGS (on the terminal: @terminal; with the outside pipe's
 * write end: @outside); return its wait status.
 */
static int run_crf(const char *const args[], const char *out, bool append, bool terminal,
		   bool outside, int64_t *took_ms)
{
	char *argv[40], line[1024];
	size_t used = 0;
	int n = 0, st;
	int64_t t0;
	pid_t pid;

	argv[n++] = (char *)h.crf;
	for (int i = 0; args[i] && n < 39; i++)
		argv[n++] = (char *)args[i];
	argv[n] = NULL;
	for (int i = 0; i < n; i++)
		used += (size_t)snprintf(line + used, sizeof(line) - used, "%s%s", i ? " " : "",
					 argv[i]);
	append_log("--- harness: %s ---\n", line);
	t0 = now_ms();
	pid = spawn(argv, out, append, false, terminal, outside);
	st = wait_exit(pid, "crf");
	*took_ms = now_ms() - t0;
	return st;
}

static void note_time(const char *what, int64_t ms)
{
	size_t used = strlen(h.timings);

	snprintf(h.timings + used, sizeof(h.timings) - used, "%s%s %lld ms", used ? ", " : "", what,
		 (long long)ms);
}

/* --expect-stopped: every thread of @pid in a group stop (state T, not t: traced). */
static void check_stopped(pid_t pid, const char *when)
{
	char path[64], state;
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		fail("%s: %s: %s", when, path, strerror(errno));
	while ((e = readdir(d))) {
		pid_t tid = (pid_t)atoi(e->d_name);

		if (tid <= 0)
			continue;
		if (proc_stat(tid, &state) < 0 || state != 'T') {
			closedir(d);
			fail("%s: thread %d of PID %d is not stopped (state %c)", when, (int)tid,
			     (int)pid, state);
		}
	}
	closedir(d);
}

/* --expect-stopped: the workload stops itself after ready; dump it only then. */
static void wait_stopped(void)
{
	char state;

	while (proc_stat(h.pid, &state) >= 0 && state != 'T') {
		if (now_ms() > h.deadline_ms)
			fail("timeout (%d s) waiting for the workload to stop itself", h.timeout_s);
		sleep_ms(5);
	}
}

/* The process must be alive, running (not stopped; --expect-stopped: stopped) and not traced. */
static void check_running(pid_t pid, const char *when)
{
	char path[64], status[4096], *tracer;
	char state;
	int fd;
	ssize_t n;

	if (kill(pid, 0) < 0 || proc_stat(pid, &state) < 0)
		fail("%s: PID %d does not exist", when, (int)pid);
	if (state == 'Z' || state == 'X')
		fail("%s: PID %d is dead (state %c)", when, (int)pid, state);
	if (h.expect_stopped && !h.expect_fail && !h.expect_restore_fail)
		check_stopped(pid, when);
	else if (state == 'T' || state == 't')
		fail("%s: PID %d is left stopped (state %c)", when, (int)pid, state);
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, status, sizeof(status) - 1);
	if (fd >= 0)
		close(fd);
	if (n > 0) {
		status[n] = '\0';
		tracer = strstr(status, "TracerPid:");
		if (tracer && atoi(tracer + 10) != 0)
			fail("%s: PID %d is still traced by PID %d", when, (int)pid,
			     atoi(tracer + 10));
	}
}




static void check_maps_unchanged(const char *before, const char *when)
{
	static char after[1 << 16];
	char was[256], is[256];
	size_t i = 0;

	if (read_maps(h.pid, after, sizeof(after)) < 0)
		fail("cannot read /proc/%d/maps: %s", (int)h.pid, strerror(errno));
	if (!strcmp(before, after))
		return;
	while (before[i] && before[i] == after[i])
		i++;
	line_at(before, i, was, sizeof(was));
	line_at(after, i, is, sizeof(is));
	append_log("--- harness: maps before ---\n%s--- harness: maps after ---\n%s", before, after);
	fail("%s: /proc/%d/maps changed: '%s' became '%s' (both maps are in the workload log)",
	     when, (int)h.pid, was, is);
}

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

/* --max-image-kb: the bytes of the files of @dir. */
static void check_image_size(const char *dir)
{
	char path[PATH_MAX];
	long long bytes = 0;
	struct dirent *e;
	struct stat st;
	DIR *d;

	if (!h.max_image_kb)
		return;
	d = opendir(dir);
	if (!d)
		fail("opendir %s: %s", dir, strerror(errno));
	while ((e = readdir(d)))
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < (int)sizeof(path) &&
		    stat(path, &st) == 0 && S_ISREG(st.st_mode))
			bytes += st.st_size;
	closedir(d);
	if (bytes > h.max_image_kb * 1024)
		fail("the images in %s take %lld KiB, more than --max-image-kb %ld", dir,
		     bytes / 1024, h.max_image_kb);
}

/* The task's maps as the last dump saw them: a restore must give them back. */
static char maps_before[1 << 16];

static void dump(const char *dir, bool leave)
{
	const char *args[32] = {"dump", "-t", NULL, "-D", dir};
	char pidstr[16];
	int n = 5, st;
	int64_t ms;

	snprintf(pidstr, sizeof(pidstr), "%d", (int)h.pid);
	args[2] = pidstr;
	if (leave)
		args[n++] = "--leave-running";
	for (int i = 0; i < h.ndump_args; i++)
		args[n++] = subst(h.dump_args[i], i);
	fresh_dir(dir);
	snprintf(h.crf_log, sizeof(h.crf_log), "%s/crf-dump-%s.log", h.work,
		 dir == h.dir ? "1" : "2");
	if (read_maps(h.pid, maps_before, sizeof(maps_before)) < 0)
		fail("cannot read /proc/%d/maps: %s", (int)h.pid, strerror(errno));
	st = run_crf(args, h.crf_log, false, false, false, &ms);
	note_time("dump", ms);
	if (leave || h.expect_fail)
		check_maps_unchanged(maps_before, h.expect_fail ? "after the refused dump" :
								  "after dump --leave-running");
	if (h.expect_fail) {
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
			fail("crf dump of PID %d succeeded, but it should have refused",
			     (int)h.pid);
		if (!WIFEXITED(st))
			fail("crf dump of PID %d: %s, instead of refusing", (int)h.pid,
			     describe_status(st));
		return;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail("crf dump of PID %d: %s", (int)h.pid, describe_status(st));
	check_image_size(dir);
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

static void check_refusal(void);

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

/* True if @text matches @re (extended, case-insensitive). */
static bool matches(const char *text, const char *re)
{
	regex_t rx;
	int err;

	if (regcomp(&rx, re, REG_EXTENDED | REG_ICASE | REG_NOSUB))
		fail("bad regular expression '%s'", re);
	err = regexec(&rx, text, 0, NULL, 0);
	regfree(&rx);
	return !err;
}

/* The last crf's output must match the expected refusal. */
static void check_refusal(void)
{
	const char *re = h.expect_fail ? h.expect_fail : h.expect_restore_fail;
	char out[16384];
	ssize_t n;
	int fd;

	fd = open(h.crf_log, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, out, sizeof(out) - 1);
	if (fd >= 0)
		close(fd);
	out[n > 0 ? n : 0] = '\0';
	if (!matches(out, re))
		fail("the refused %s's output does not match /%s/",
		     h.expect_fail ? "dump" : "restore", re);
}

/* A "wl-NAME: FAIL: ..." line of the workload's log must match @re. */
static void check_verify_failure(const char *re)
{
	char line[1024];
	bool found = false;
	FILE *f = fopen(h.log, "re");

	if (!f)
		fail("open %s: %s", h.log, strerror(errno));
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, "wl-", 3) && strstr(line, ": FAIL: ") && matches(line, re);
	fclose(f);
	if (!found)
		fail("the workload failed, but no FAIL line of it matches /%s/", re);
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

/* The "counter: N" lines of the log must count 1, 2, 3... without a gap. */
static void check_counter_lines(void)
{
	unsigned long long want = 1, got;
	bool after_restore = false, counted_before = false, counted_after = false;
	char line[512];
	FILE *f = fopen(h.log, "re");

	if (!f)
		fail("open %s: %s", h.log, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "--- harness: ", 13) && strstr(line, " restore "))
			after_restore = true;
		if (sscanf(line, "counter: %llu", &got) != 1)
			continue;
		if (got != want) {
			fclose(f);
			fail("the printed counter went from %llu to %llu", want - 1, got);
		}
		want++;
		counted_before |= !after_restore;
		counted_after |= after_restore;
	}
	fclose(f);
	if (h.mode == MODE_LEAVE || h.expect_fail)
		return;
	if (!counted_before)
		fail("the counter printed nothing before the checkpoint (use --settle)");
	if (!counted_after)
		fail("the restored counter printed nothing into the log after the restore");
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
	ssize_t n;
	int fd, st;

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
	fd = open(h.crf_log, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, out, sizeof(out) - 1);
	if (fd >= 0)
		close(fd);
	out[n > 0 ? n : 0] = '\0';
	if (!matches(out, h.expect_restore_fail))
		fail("the refused restore's output does not match /%s/", h.expect_restore_fail);
	check_running(h.pid, "after the refused restore");
	check_maps_unchanged(maps_before, "after the refused restore");
	verify();
}

static void run(void)
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

/* --outside-pipe: "outside: 1" ... "outside: N", "outside: done N", and nothing else. */
static void check_outside(void)
{
	unsigned long want = 1, got;
	char line[256];
	bool done = false;
	FILE *f;

	outside_drain();
	f = fopen(h.out_log, "re");
	if (!f)
		fail("the outside pipe brought nothing (%s: %s)", h.out_log, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (done || (sscanf(line, "outside: done %lu", &got) == 1 && got != want - 1) ||
		    (!strstr(line, "done") &&
		     (sscanf(line, "outside: %lu", &got) != 1 || got != want++))) {
			fclose(f);
			fail("the outside pipe brought '%.*s' after line %lu",
			     (int)strcspn(line, "\n"), line, want - 1);
		}
		done = strstr(line, "done") != NULL;
	}
	fclose(f);
	if (!done)
		fail("the outside pipe brought no 'done' line (%lu lines)", want - 1);
	printf("  the process outside the tree received all %lu lines\n", want - 1);
}

/* --outside-pipe/--outside-fifo: a pipe from the workload's fd to us, or a FIFO. */
static void outside_setup(void)
{
	struct stat st;
	int fds[2];

	h.out_r = h.out_w = -1;
	if (!h.outside_fd)
		return;
	snprintf(h.out_log, sizeof(h.out_log), "%s/outside.log", h.work);
	if (h.outside_fifo) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/outside.fifo", h.work);
		if (mkfifo(path, 0600) < 0)
			fail("mkfifo %s: %s", path, strerror(errno));
		fds[0] = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		fds[1] = fds[0] < 0 ? -1 : open(path, O_WRONLY | O_CLOEXEC);
	} else if (pipe2(fds, O_CLOEXEC) < 0) {
		fds[0] = fds[1] = -1;
	} else if (fcntl(fds[0], F_SETFL, O_NONBLOCK) < 0) {
		fail("F_SETFL: %s", strerror(errno));
	}
	if (fds[0] < 0 || fds[1] < 0 || fstat(fds[1], &st) < 0)
		fail("the outside pipe: %s", strerror(errno));
	h.out_r = fds[0];
	h.out_w = fds[1];
	snprintf(h.out_name, sizeof(h.out_name), "%s:[%llu]", h.outside_fifo ? "fifo" : "pipe",
		 (unsigned long long)st.st_ino);
}

/*
 * Echo the workload's own notes ("wl-NAME: ...") on success.  A downgrade
 * ("wl-NAME: NOTE: ...", the workload checked less than it says) is repeated
 * as "NOTE NAME MODE: ..." at the start of a line, where scripts/test.sh
 * collects it for its summary.
 */
static void print_notes(void)
{
	char line[512], *note;
	FILE *f = fopen(h.log, "re");

	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "wl-", 3))
			continue;
		printf("  %s", line);
		note = strstr(line, ": NOTE: ");
		if (note)
			printf("NOTE %s %s: %s", h.name, test_mode(), note + 8);
	}
	if (f)
		fclose(f);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: harness [--mode kill|leave|twice] [--timeout S] [--keep] [--name NAME]\n"
		"               [--expect-dump-fail REGEX] [--dump-arg ARG]... [--counter-lines]\n"
		"               [--settle MS] [--own-cgroup] [--own-cgroups-v1] [--pty]\n"
		"               [--restore-arg ARG]... [--expect-stopped]\n"
		"               [--expect-restore-fail REGEX]\n"
		"               [--expect-verify-fail REGEX] [--max-image-kb N]\n"
		"               [--outside-pipe FD | --outside-fifo FD]\n"
		"               --crf PATH --dir DIR -- WORKLOAD [ARGS...]\n");
	exit(2);
}

static void parse(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"mode", required_argument, NULL, 'm'},
		{"timeout", required_argument, NULL, 't'},
		{"crf", required_argument, NULL, 'c'},
		{"dir", required_argument, NULL, 'D'},
		{"keep", no_argument, NULL, 'k'},
		{"name", required_argument, NULL, 'n'},
		{"expect-dump-fail", required_argument, NULL, 'f'},
		{"dump-arg", required_argument, NULL, 'a'},
		{"counter-lines", no_argument, NULL, 'l'},
		{"settle", required_argument, NULL, 's'},
		{"own-cgroup", no_argument, NULL, 'g'},
		{"own-cgroups-v1", no_argument, NULL, 'G'},
		{"pty", no_argument, NULL, 'p'},
		{"restore-arg", required_argument, NULL, 'r'},
		{"expect-verify-fail", required_argument, NULL, 'v'},
		{"max-image-kb", required_argument, NULL, 'M'},
		{"expect-stopped", no_argument, NULL, 'S'},
		{"expect-restore-fail", required_argument, NULL, 'R'},
		{"outside-pipe", required_argument, NULL, 'o'},
		{"outside-fifo", required_argument, NULL, 'O'},
		{NULL, 0, NULL, 0},
	};
	const char *base;
	int c;

	h.timeout_s = 60;
	while ((c = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			for (c = 0; c < 3 && strcmp(optarg, mode_names[c]); c++)
				;
			if (c == 3)
				usage();
			h.mode = (enum mode)c;
			break;
		case 't':
			h.timeout_s = atoi(optarg);
			if (h.timeout_s <= 0)
				usage();
			break;
		case 'c':
			h.crf = optarg;
			break;
		case 'D':
			h.dir = optarg;
			break;
		case 'k':
			h.keep = true;
			break;
		case 'n':
			h.name = optarg;
			break;
		case 'f':
			h.expect_fail = optarg;
			break;
		case 'l':
			h.counter_lines = true;
			break;
		case 's':
			h.settle_ms = atoi(optarg);
			break;
		case 'g':
			h.own_cgroup = true;
			break;
		case 'G':
			h.own_cgroups_v1 = true;
			break;
		case 'p':
			h.pty = true;
			break;
		case 'v':
			h.expect_verify_fail = optarg;
			break;
		case 'M':
			h.max_image_kb = atol(optarg);
			if (h.max_image_kb <= 0)
				usage();
			break;
		case 'S':
			h.expect_stopped = true;
			break;
		case 'R':
			h.expect_restore_fail = optarg;
			break;
		case 'o':
		case 'O':
			h.outside_fd = atoi(optarg);
			h.outside_fifo = c == 'O';
			if (h.outside_fd < 3)
				usage();
			break;
		case 'r':
			if (h.nrestore_args == (int)(sizeof(h.restore_args) / sizeof(h.restore_args[0])))
				usage();
			h.restore_args[h.nrestore_args++] = optarg;
			break;
		case 'a':
			if (h.ndump_args == (int)(sizeof(h.dump_args) / sizeof(h.dump_args[0])))
				usage();
			h.dump_args[h.ndump_args++] = optarg;
			break;
		default:
			usage();
		}
	}
	if (!h.crf || !h.dir || !h.dir[0] || optind >= argc)
		usage();
	h.workload = argv + optind;
	if (!h.name) {
		base = strrchr(h.workload[0], '/');
		base = base ? base + 1 : h.workload[0];
		h.name = strncmp(base, "wl-", 3) ? base : base + 3;
	}
}

int main(int argc, char **argv)
{
	char tmpl[] = "/tmp/crf-e2e-XXXXXX";

	parse(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (h.pty) {
		int r = pty_setup();

		if (r < 0) {
			fprintf(stderr, "FAIL %s: cannot set up a terminal: %s\n", h.name,
				strerror(-r));
			return 1;
		}
	}
	h.deadline_ms = now_ms() + (int64_t)h.timeout_s * 1000;
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		fail("PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
	if (!mkdtemp(tmpl))
		fail("mkdtemp: %s", strerror(errno));
	snprintf(h.work, sizeof(h.work), "%s", tmpl);
	snprintf(h.log, sizeof(h.log), "%s/workload.log", h.work);
	snprintf(h.ready, sizeof(h.ready), "%s/ready", h.work);
	snprintf(h.verify, sizeof(h.verify), "%s/verify", h.work);
	snprintf(h.dir2, sizeof(h.dir2), "%s.2", h.dir);
	outside_setup();

	run();
	if (h.counter_lines)
		check_counter_lines();
	if (h.outside_fd && !h.expect_restore_fail)
		check_outside();
	print_notes();
	printf("  %s\n", h.timings);
	printf("PASS %s %s\n", h.name, test_mode());
	clean_up();
	return 0;
}
