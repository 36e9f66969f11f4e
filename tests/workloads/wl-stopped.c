// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-stopped: processes stopped with SIGSTOP come back stopped, every
 * thread, and SIGCONT resumes them with their state intact.  Run with the
 * harness's --expect-stopped.
 *
 * State: the root R, with a second thread that counts, blocks SIGCHLD and
 * has two children, each stopped with SIGSTOP: C1, with a second thread,
 * whose stop R has waited for (waitpid WUNTRACED) and which has a SIGUSR1
 * pending (sent while it was stopped, not blocked, handled); C2, whose
 * stop R has not waited for; C3, in a process group of its own, stopped by
 * SIGTSTP (a job-control stop, not waited for).  The SIGCHLD of each stop
 * is taken.  Then R stops itself, both threads.
 *
 * After restore (the harness checks that R is stopped and sends SIGCONT):
 * R's counting thread counts on; no SIGCHLD is pending for R; waitpid
 * reports no stop of C1, one of C2, by SIGSTOP, and one of C3, by SIGTSTP;
 * the three are still stopped, every thread; after SIGCONT, C1's SIGUSR1
 * handler runs once (not before), C1's thread counts on, and all exit 0.
 */
#include "wl.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAGIC 0x5709ed5709edULL

static atomic_ulong ticks;
static volatile sig_atomic_t usr1;
static uint64_t memory[512];

static void *count(void *arg)
{
	const struct timespec ms = {0, 1000000};

	for (;;) {
		atomic_fetch_add(&ticks, 1);
		nanosleep(&ms, NULL);
	}
	return arg;
}

static void start_counter(void)
{
	pthread_t t;
	int e = pthread_create(&t, NULL, count, NULL);

	if (e)
		wl_fail("pthread_create: %s", strerror(e));
}

/* The counter moves: the thread runs (again). */
static void check_counting(const char *who)
{
	unsigned long before = atomic_load(&ticks);

	for (int i = 0; i < 2000 && atomic_load(&ticks) == before; i++)
		usleep(1000);
	WL_CHECK(atomic_load(&ticks) != before, "%s: the second thread does not run", who);
}

static char state_of(pid_t pid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (wl_read_file(path, buf, sizeof(buf)) < 0 || !(p = strrchr(buf, ')')))
		return '?';
	return p[2];
}

/* Every thread of @pid in state T. */
static void check_stopped(pid_t pid, const char *who)
{
	char path[64];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		wl_fail("%s: %s: %s", who, path, strerror(errno));
	while ((e = readdir(d))) {
		pid_t tid = (pid_t)atoi(e->d_name);
		char st;

		if (tid <= 0)
			continue;
		n++;
		st = state_of(tid);
		if (st != 'T') {
			closedir(d);
			wl_fail("%s: thread %d is in state %c, not stopped", who, (int)tid, st);
		}
	}
	closedir(d);
	WL_CHECK(n > 0, "%s: no threads", who);
}

static void on_usr1(int sig)
{
	usr1++;
}

/* C1: a second thread, a handler, a stop; after SIGCONT the handler runs once. */
static int child1(void)
{
	struct sigaction sa = {.sa_handler = on_usr1};

	sigaction(SIGUSR1, &sa, NULL);
	wl_fill(memory, sizeof(memory), MAGIC);
	start_counter();
	raise(SIGSTOP);
	for (int i = 0; i < 2000 && !usr1; i++)
		usleep(1000);
	WL_CHECK(usr1 == 1, "C1: SIGUSR1 ran %d times after SIGCONT, not once", (int)usr1);
	WL_CHECK(wl_cmp_fill(memory, sizeof(memory), MAGIC) < 0, "C1: memory differs");
	check_counting("C1");
	return 0;
}

static pid_t fork_stopped(int (*fn)(void))
{
	pid_t pid = fork();

	if (pid < 0)
		wl_fail("fork: %s", strerror(errno));
	if (pid == 0)
		_exit(fn());
	return pid;
}

static int child2(void)
{
	raise(SIGSTOP);
	return 0;
}

/* C3: a job-control stop, in a group of its own (not orphaned: R is outside it). */
static int child3(void)
{
	if (setpgid(0, 0) < 0)
		wl_fail("C3: setpgid: %s", strerror(errno));
	raise(SIGTSTP);
	return 0;
}

/* Wait for the SIGCHLD of @pid's stop (SIGCHLD is blocked) and take it. */
static void take_sigchld(pid_t pid)
{
	const struct timespec limit = {30, 0};
	sigset_t chld;
	siginfo_t si;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (sigtimedwait(&chld, &si, &limit) != SIGCHLD)
		wl_fail("no SIGCHLD for the stop of %d: %s", (int)pid, strerror(errno));
	WL_CHECK(si.si_pid == pid && si.si_code == CLD_STOPPED,
		 "SIGCHLD from %d code %d, not the stop of %d", (int)si.si_pid, si.si_code,
		 (int)pid);
}

/* @pid's stop, not waited for, is reported once, by @sig. */
static void check_report(pid_t pid, int sig, const char *who)
{
	siginfo_t si = {0};

	WL_CHECK(waitid(P_PID, (id_t)pid, &si, WSTOPPED | WNOHANG) == 0 && si.si_pid == pid,
		 "no stop report of %s (%d)", who, (int)pid);
	WL_CHECK(si.si_code == CLD_STOPPED && si.si_status == sig, "%s's report: code %d status %d",
		 who, si.si_code, si.si_status);
}

static void check_children(pid_t c1, pid_t c2, pid_t c3)
{
	sigset_t pend;
	int st;

	sigpending(&pend);
	WL_CHECK(!sigismember(&pend, SIGCHLD), "a SIGCHLD is pending (the restored stops')");
	WL_CHECK(waitpid(c1, &st, WUNTRACED | WNOHANG) == 0,
		 "waitpid reports C1 (%d) again, status %#x", (int)c1, st);
	check_report(c2, SIGSTOP, "C2");
	check_report(c3, SIGTSTP, "C3");
	check_stopped(c1, "C1");
	check_stopped(c2, "C2");
	check_stopped(c3, "C3");
	kill(c1, SIGCONT);
	kill(c2, SIGCONT);
	kill(c3, SIGCONT);
	WL_CHECK(waitpid(c1, &st, 0) == c1 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		 "C1 ended with status %#x", st);
	WL_CHECK(waitpid(c2, &st, 0) == c2 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		 "C2 ended with status %#x", st);
	WL_CHECK(waitpid(c3, &st, 0) == c3 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		 "C3 ended with status %#x", st);
}

int main(void)
{
	sigset_t chld;
	pid_t c1, c2, c3;
	int st;

	wl_init("stopped");
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	c1 = fork_stopped(child1);
	take_sigchld(c1);
	WL_CHECK(waitpid(c1, &st, WUNTRACED) == c1 && WIFSTOPPED(st), "C1 did not stop");
	WL_CHECK(kill(c1, SIGUSR1) == 0, "SIGUSR1 to C1: %s", strerror(errno));
	c2 = fork_stopped(child2);
	take_sigchld(c2);
	WL_CHECK(state_of(c2) == 'T', "C2 is not stopped");
	c3 = fork_stopped(child3);
	take_sigchld(c3);
	start_counter();
	wl_ready();
	raise(SIGSTOP);
	/* The harness sent SIGCONT, then asks for the verification. */
	wl_wait_verify();
	check_counting("R");
	check_children(c1, c2, c3);
	wl_note("R, C1, C2 and C3 (SIGTSTP) were stopped, every thread; the stop reports and "
		"SIGCHLD as they were; all resumed");
	return 0;
}
