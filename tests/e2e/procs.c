// SPDX-License-Identifier: GPL-2.0-only
/*
 * The harness's processes: the workload and crf started with their fds
 * and environment, their exits recorded (a restored process reuses its
 * PID), and everything killed and reaped at the end (harness.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "harness.h"
#include "pty.h"
#include "util.h"

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
bool take_exit(pid_t pid, int *status)
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

static void redirect(int fd, const char *path, int flags);

/* Run @argv with its output into @out and wait for it, a few seconds at most. */
static void run_quietly(char *const argv[], const char *out)
{
	pid_t pid = fork();

	if (pid < 0)
		return;
	if (pid == 0) {
		redirect(0, "/dev/null", O_RDONLY);
		redirect(1, out, O_WRONLY | O_CREAT | O_TRUNC);
		if (dup2(1, 2) < 0)
			_exit(127);
		execvp(argv[0], argv);
		_exit(127);
	}
	for (int i = 0; i < 500 && waitpid(pid, NULL, WNOHANG) == 0; i++)
		sleep_ms(10);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, WNOHANG);
}

/*
 * A killing dump of TCP connections leaves its network lock (an nftables
 * table) for the restore, and a failed restore keeps it: a test that ends
 * that fails before a restore succeeded drops the table @dir's netlock.img
 * names.
 */
static void drop_lock(const char *dir)
{
	char img[PATH_MAX], out[PATH_MAX], buf[4096], table[64] = "";
	const char *at;
	ssize_t n;
	int fd;

	snprintf(img, sizeof(img), "%s/netlock.img", dir);
	if (access(img, F_OK) < 0 || !h.work[0])
		return;
	snprintf(out, sizeof(out), "%s/netlock.json", h.work);
	run_quietly((char *const[]){(char *)h.crf, "show", (char *)dir, "netlock.img", NULL}, out);
	fd = open(out, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	at = strstr(buf, "\"table\": \"");
	if (!at || sscanf(at + 10, "%63[a-z_0-9]", table) != 1 || strncmp(table, "crf_lock_", 9))
		return;
	/* Gone already where a restore succeeded: nft's error goes to /dev/null. */
	run_quietly((char *const[]){"nft", "delete", "table", "inet", table, NULL}, "/dev/null");
}

void clean_up(bool failed)
{
	kill_all();
	/* Only then: a lock of the same name now is another test's (a PID used again). */
	if (failed) {
		drop_lock(h.dir);
		if (h.mode == MODE_TWICE)
			drop_lock(h.dir2);
	}
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

/* Wait for PID (our child) to end, within the global deadline. */
int wait_exit(pid_t pid, const char *what)
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
pid_t spawn(char *const argv[], const char *out, bool append, bool workload, bool terminal,
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
int run_crf(const char *const args[], const char *out, bool append, bool terminal, bool outside,
	    int64_t *took_ms)
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

void note_time(const char *what, int64_t ms)
{
	size_t used = strlen(h.timings);

	snprintf(h.timings + used, sizeof(h.timings) - used, "%s%s %lld ms", used ? ", " : "", what,
		 (long long)ms);
}
