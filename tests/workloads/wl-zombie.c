// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-zombie: children that ended before the dump and were not reaped.
 *
 * The root forks one child that exits with status 42, one that dies of
 * SIGTERM, and one that lives on.  Once both are zombies (waitid with
 * WNOWAIT, which does not reap) and their SIGCHLD was handled, it is ready.
 * After the restore: both are still zombies, its children, in its group;
 * no SIGCHLD came again (a restore must not deliver it twice); waitpid
 * reaps them with status 42 and SIGTERM; the live child checks itself and
 * exits 0.
 */
#include "wl.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t sigchld_count;
static pid_t by_exit, by_signal;

/* Only the zombies' SIGCHLD counts: the live child ends during the verification. */
static void on_sigchld(int sig, siginfo_t *si, void *uc)
{
	if (si->si_pid == by_exit || si->si_pid == by_signal)
		sigchld_count++;
}

static pid_t spawn_exiting(int how)
{
	pid_t pid = fork();

	if (pid < 0)
		wl_fail("fork: %s", strerror(errno));
	if (pid > 0)
		return pid;
	signal(SIGCHLD, SIG_DFL);
	/* Its name, as /proc/PID/stat shows it to its parent, must survive too. */
	prctl(PR_SET_NAME, how == 42 ? "zombie-exit" : "zombie-term", 0, 0, 0);
	if (how == SIGQUIT) {
		/* Dump core, in the test's directory (core_pattern "core"). */
		struct rlimit core = {1 << 20, 1 << 20};

		if (setrlimit(RLIMIT_CORE, &core) < 0 || chdir(wl_tmpdir()) < 0)
			_exit(1);
		signal(SIGQUIT, SIG_DFL);
		kill(getpid(), SIGQUIT);
	}
	if (how == SIGTERM) {
		signal(SIGTERM, SIG_DFL);
		kill(getpid(), SIGTERM);
	}
	_exit(how);
}

static void wait_zombie(pid_t pid)
{
	siginfo_t si;

	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0)
		wl_fail("waitid(%d, WNOWAIT): %s", (int)pid, strerror(errno));
}

/* The state letter of /proc/PID/stat, and its name (comm) into @comm. */
static char state_of(pid_t pid, char *comm, size_t len)
{
	char path[64], buf[512], *p, *q;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (wl_read_file(path, buf, sizeof(buf)) < 0 || !(p = strrchr(buf, ')')) ||
	    !(q = strchr(buf, '(')))
		return '?';
	snprintf(comm, len, "%.*s", (int)(p - q - 1), q + 1);
	return p[2];
}

static void reap(pid_t pid, const char *what, bool (*ok)(int), int st_want, const char *name)
{
	char comm[64];
	char state = state_of(pid, comm, sizeof(comm));
	int st;

	if (state != 'Z')
		wl_fail("%s (pid %d) is not a zombie but in state %c", what, (int)pid, state);
	if (strcmp(comm, name))
		wl_fail("%s (pid %d) is named '%s', not '%s'", what, (int)pid, comm, name);
	if (getpgid(pid) != getpgid(0) || getsid(pid) != getsid(0))
		wl_fail("%s (pid %d) is not in its parent's group and session", what, (int)pid);
	if (waitpid(pid, &st, WNOHANG) != pid)
		wl_fail("waitpid(%d): %s", (int)pid, strerror(errno));
	if (!ok(st) || st != st_want)
		wl_fail("%s (pid %d) reaped with status %#x, expected %#x", what, (int)pid, st,
			st_want);
}

static bool exited(int st)
{
	return WIFEXITED(st);
}

static bool signaled(int st)
{
	return WIFSIGNALED(st);
}

static _Noreturn void live_child(void)
{
	pid_t self = getpid(), parent = getppid();

	signal(SIGCHLD, SIG_DFL);
	wl_wait_verify();
	if (getpid() != self || getppid() != parent)
		wl_fail("live child: pid %d parent %d, was %d %d", (int)getpid(), (int)getppid(),
			(int)self, (int)parent);
	exit(0);
}

int main(int argc, char **argv)
{
	const struct timespec settle = {0, 50 * 1000 * 1000};
	struct sigaction sa = {.sa_sigaction = on_sigchld, .sa_flags = SA_SIGINFO | SA_RESTART};
	sig_atomic_t count;
	pid_t live;
	sigset_t pending;
	int st;

	wl_init("zombie");
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	by_exit = spawn_exiting(42);
	/* "core": the other child dies of SIGQUIT and dumps core, which the dump refuses. */
	by_signal = spawn_exiting(argc > 1 && !strcmp(argv[1], "core") ? SIGQUIT : SIGTERM);
	live = fork();
	if (live < 0)
		wl_fail("fork: %s", strerror(errno));
	if (live == 0)
		live_child();
	wait_zombie(by_exit);
	wait_zombie(by_signal);
	nanosleep(&settle, NULL);
	sigpending(&pending);
	if (sigismember(&pending, SIGCHLD))
		wl_fail("SIGCHLD still pending before the dump");
	count = sigchld_count;
	wl_ready();
	wl_wait_verify();
	if (sigchld_count != count)
		wl_fail("SIGCHLD handled %d times after the restore, was %d before",
			(int)sigchld_count, (int)count);
	reap(by_exit, "the child that exited", exited, 42 << 8, "zombie-exit");
	if (argc > 1 && !strcmp(argv[1], "core"))
		reap(by_signal, "the child that dumped core", signaled, SIGQUIT | 0x80,
		     "zombie-term");
	else
		reap(by_signal, "the child killed by SIGTERM", signaled, SIGTERM, "zombie-term");
	if (waitpid(live, &st, 0) != live || !WIFEXITED(st) || WEXITSTATUS(st))
		wl_fail("the live child ended with status %#x", st);
	wl_note("zombies kept: reaped with exit status 42 and SIGTERM, no SIGCHLD again");
	return 0;
}
