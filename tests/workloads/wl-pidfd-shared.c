// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-pidfd-shared: a pidfd shared between two processes, which crf refuses
 * to dump (it cannot make it shared again at restore), leaving both
 * running as they were.
 *
 * The parent opens a pidfd of itself at fd 3 and forks a child, which
 * inherits it.  After the refused dump each checks that fd 3 is still a
 * pidfd of the parent (pidfd_send_signal with signal 0 reaches it, and
 * the fd's fdinfo names the parent's PID); the parent reaps the child and
 * exits with its verdict.
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define FD_PIDFD 3

static void check_pidfd(pid_t parent, const char *who)
{
	char text[4096], want[64];

	WL_CHECK(syscall(SYS_pidfd_send_signal, FD_PIDFD, 0, NULL, 0) == 0,
		 "%s: pidfd_send_signal on fd %d: %s", who, FD_PIDFD, strerror(errno));
	WL_CHECK(wl_read_file("/proc/self/fdinfo/3", text, sizeof(text)) > 0, "%s: fdinfo: %s", who,
		 strerror(errno));
	snprintf(want, sizeof(want), "\nPid:\t%d\n", (int)parent);
	WL_CHECK(strstr(text, want), "%s: fd %d is not a pidfd of pid %d", who, FD_PIDFD,
		 (int)parent);
}

int main(void)
{
	pid_t parent = getpid(), pid;
	int fd, sync[2], status;
	char byte;

	wl_init("pidfd-shared");
	fd = (int)syscall(SYS_pidfd_open, parent, 0);
	WL_CHECK(fd >= 0, "pidfd_open: %s", strerror(errno));
	if (fd != FD_PIDFD) {
		WL_CHECK(dup2(fd, FD_PIDFD) == FD_PIDFD, "dup2: %s", strerror(errno));
		close(fd);
	}
	WL_CHECK(pipe2(sync, O_CLOEXEC) == 0, "pipe: %s", strerror(errno));
	pid = fork();
	WL_CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(sync[0]);
		close(sync[1]);
		wl_wait_verify();
		check_pidfd(parent, "child");
		_exit(0);
	}
	close(sync[1]);
	WL_CHECK(read(sync[0], &byte, 1) == 0, "sync: %s", strerror(errno));
	close(sync[0]);
	wl_ready();
	wl_wait_verify();
	check_pidfd(parent, "parent");
	WL_CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
	WL_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: status %#x", status);
	return 0;
}
