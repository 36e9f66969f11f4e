// SPDX-License-Identifier: GPL-2.0-only
/* The harness's --pty terminal (see pty.h). */
#include "pty.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

static int master = -1, slave_fd = -1;
static char slave[64];
static struct termios shell_tio;

/* A group leader cannot make a session: its child does, and it waits. */
static int lead_session(void)
{
	pid_t pid;
	int st;

	if (getsid(0) == getpid() || setsid() >= 0)
		return 0;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		return setsid() < 0 ? -errno : 0;
	signal(SIGINT, SIG_IGN);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			exit(1);
	exit(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
}

int pty_setup(void)
{
	struct termios tio;
	int r = lead_session(), fd;

	if (r < 0)
		return r;
	master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0 ||
	    ptsname_r(master, slave, sizeof(slave)))
		return -errno;
	fd = open(slave, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, TIOCSCTTY, 0) < 0 || tcgetattr(fd, &tio) < 0)
		return -errno;
	/* No echo of what the harness types; a shell's line editing is off too. */
	tio.c_lflag &= ~(tcflag_t)(ECHO | ECHOE | ECHOK);
	tio.c_cc[VERASE] = 0x08;
	if (tcsetattr(fd, TCSANOW, &tio) < 0 || fcntl(master, F_SETFL, O_NONBLOCK) < 0 ||
	    tcgetattr(fd, &shell_tio) < 0)
		return -errno;
	slave_fd = fd;
	/* The harness keeps the slave open, so the master never reads EIO between jobs. */
	signal(SIGTTOU, SIG_IGN);
	return 0;
}

int pty_child(bool all)
{
	int fd;

	if (setpgid(0, 0) < 0)
		return -errno;
	fd = open(slave, O_RDWR);
	if (fd < 0 || tcsetpgrp(fd, getpid()) < 0)
		return -errno;
	signal(SIGTTOU, SIG_DFL);
	for (int i = 0; i < (all ? 3 : 1); i++)
		if (dup2(fd, i) < 0)
			return -errno;
	if (fd > 2)
		close(fd);
	return 0;
}

void pty_drain(const char *log)
{
	char buf[4096];
	ssize_t n;
	int fd = -1;

	while ((n = read(master, buf, sizeof(buf))) > 0) {
		if (fd < 0)
			fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		if (fd >= 0 && write(fd, buf, (size_t)n) < 0)
			break;
	}
	if (fd >= 0)
		close(fd);
}

int pty_type(const char *text)
{
	size_t len = strlen(text);

	return write(master, text, len) == (ssize_t)len ? 0 : -errno;
}

int pty_shell_resume(void)
{
	static const struct winsize ws = {24, 80, 0, 0};

	if (tcsetpgrp(slave_fd, getpgrp()) < 0 || tcsetattr(slave_fd, TCSANOW, &shell_tio) < 0 ||
	    ioctl(slave_fd, TIOCSWINSZ, &ws) < 0)
		return -errno;
	return 0;
}
