// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-pidfd-shared: pidfds a parent shares with a child by fork still name
 * their processes after restore, in both.
 *
 * The parent opens a pidfd of itself at fd 3, forks child A, opens a
 * pidfd of A at fd 4 (O_NONBLOCK), and forks child B, which inherits both.
 * After restore fd 3 must name the parent and fd 4 A, with their flags, in
 * the parent and in B (fdinfo's Pid:, pidfd_send_signal with signal 0).
 * B then sends SIGUSR1 through fd 4, which A waits for (blocked, with
 * sigwaitinfo) before it exits, and waits on fd 4 until A's exit shows
 * through it (poll): fd 4 is a pidfd of the restored A.  The parent reaps
 * both.
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define FD_SELF 3
#define FD_A	4

/* fd @fd is a pidfd of @pid with O_NONBLOCK as @nonblock says. */
static void check_pidfd(int fd, pid_t pid, bool nonblock, const char *who)
{
	char path[64], text[4096], want[64];
	int fl = fcntl(fd, F_GETFL);

	WL_CHECK(syscall(SYS_pidfd_send_signal, fd, 0, NULL, 0) == 0,
		 "%s: pidfd_send_signal on fd %d: %s", who, fd, strerror(errno));
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	WL_CHECK(wl_read_file(path, text, sizeof(text)) > 0, "%s: %s: %s", who, path,
		 strerror(errno));
	snprintf(want, sizeof(want), "\nPid:\t%d\n", (int)pid);
	WL_CHECK(strstr(text, want), "%s: fd %d is not a pidfd of pid %d", who, fd, (int)pid);
	WL_CHECK(fl >= 0 && !!(fl & O_NONBLOCK) == nonblock, "%s: fd %d: flags %#x", who, fd, fl);
}

/* Put @fd at number @at. */
static void move_to(int fd, int at)
{
	WL_CHECK(fd >= 0, "pidfd_open: %s", strerror(errno));
	if (fd == at)
		return;
	WL_CHECK(dup2(fd, at) == at, "dup2: %s", strerror(errno));
	close(fd);
}

static void reap(pid_t pid, const char *who)
{
	int status;

	WL_CHECK(waitpid(pid, &status, 0) == pid, "waitpid %s: %s", who, strerror(errno));
	WL_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: status %#x", who, status);
}

int main(void)
{
	pid_t parent = getpid(), a, b;
	struct pollfd pfd = {.fd = FD_A, .events = POLLIN};

	wl_init("pidfd-shared");
	move_to((int)syscall(SYS_pidfd_open, parent, 0), FD_SELF);
	a = fork();
	WL_CHECK(a >= 0, "fork: %s", strerror(errno));
	if (a == 0) {
		sigset_t usr1;

		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		WL_CHECK(sigprocmask(SIG_BLOCK, &usr1, NULL) == 0, "sigprocmask: %s",
			 strerror(errno));
		wl_wait_verify();
		WL_CHECK(sigwaitinfo(&usr1, NULL) == SIGUSR1, "child A: sigwaitinfo: %s",
			 strerror(errno));
		_exit(0);
	}
	move_to((int)syscall(SYS_pidfd_open, a, O_NONBLOCK), FD_A);
	b = fork();
	WL_CHECK(b >= 0, "fork: %s", strerror(errno));
	if (b == 0) {
		wl_wait_verify();
		check_pidfd(FD_SELF, parent, false, "child B");
		check_pidfd(FD_A, a, true, "child B");
		WL_CHECK(syscall(SYS_pidfd_send_signal, FD_A, SIGUSR1, NULL, 0) == 0,
			 "child B: SIGUSR1 through fd %d: %s", FD_A, strerror(errno));
		WL_CHECK(poll(&pfd, 1, 10000) == 1 && (pfd.revents & POLLIN),
			 "child B: A's exit did not show through fd %d", FD_A);
		_exit(0);
	}
	wl_ready();
	wl_wait_verify();
	check_pidfd(FD_SELF, parent, false, "parent");
	check_pidfd(FD_A, a, true, "parent");
	reap(a, "child A");
	reap(b, "child B");
	wl_note("pidfds shared by fork name their processes in both");
	return 0;
}
