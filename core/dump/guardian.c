// SPDX-License-Identifier: GPL-2.0-only
/*
 * The dump's guardian (guardian.h).  It speaks a line protocol on a pipe:
 * "F DIR" (DIR's cgroup.freeze is 1 because of crf), "T" (thawed), "O"
 * (the image directory is this dump's), "K" (keep the images), "D" (done).
 * End of file without "D" means crf died.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "crf-private.h"
#include "guardian.h"
#include "util.h"

static int guard_fd = -1;
static pid_t guard_pid;

struct watch {
	char frozen[PATH_MAX]; /* the cgroup to thaw; "" when none */
	bool owned;	       /* the directory is this dump's to write */
	bool keep;
	bool done;
};

static void thaw(const char *dir)
{
	char path[PATH_MAX + 16];
	int fd;

	snprintf(path, sizeof(path), "%s/cgroup.freeze", dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "0", 1) != 1)
		dprintf(2, "crf guardian: cannot thaw %s: %s\n", dir, strerror(errno));
	else
		dprintf(2, "crf guardian: crf died: thawed %s\n", dir);
	if (fd >= 0)
		close(fd);
}

/* What an unfinished dump wrote: its images, their temporary files, the directory. */
static void remove_images(const char *dir, bool created)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n;

	if (!d)
		return;
	while ((e = readdir(d))) {
		n = strlen(e->d_name);
		if ((n > 4 && !strcmp(e->d_name + n - 4, ".img")) ||
		    (e->d_name[0] == '.' && n > 8 && !strcmp(e->d_name + n - 8, ".img.tmp")))
			unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
	if (created)
		rmdir(dir);
	dprintf(2, "crf guardian: crf died: removed the unfinished dump in %s\n", dir);
}

static void note(struct watch *w, const char *line)
{
	switch (line[0]) {
	case 'F':
		if (strlen(line + 2) < sizeof(w->frozen))
			memcpy(w->frozen, line + 2, strlen(line + 2) + 1);
		break;
	case 'T':
		w->frozen[0] = '\0';
		break;
	case 'O':
		w->owned = true;
		break;
	case 'K':
		w->keep = true;
		break;
	case 'D':
		w->done = true;
		break;
	}
}

/* Take in what is on the pipe: 1 when it read something, 0 at its end or when empty. */
static int take_lines(struct watch *w, int fd, char *buf, size_t len, size_t *used)
{
	ssize_t n;
	char *nl;

	do
		n = read(fd, buf + *used, len - 1 - *used);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return 0;
	*used += (size_t)n;
	buf[*used] = '\0';
	while ((nl = strchr(buf, '\n'))) {
		*nl = '\0';
		note(w, buf);
		*used -= (size_t)(nl + 1 - buf);
		memmove(buf, nl + 1, *used + 1);
	}
	return 1;
}

/*
 * Until "done", or crf's end: the pipe's end, or crf's exit seen on its
 * pidfd (a child crf forked may still hold the pipe open after crf died).
 */
static void __attribute__((noreturn)) guard(int fd, pid_t crf, const char *imgdir, bool created)
{
	int pidfd = (int)syscall(SYS_pidfd_open, crf, 0);
	int pidfd_err = pidfd < 0 ? errno : 0;
	struct watch w = {.keep = false};
	char buf[PATH_MAX + 8];
	size_t used = 0;

	while (!w.done && pidfd >= 0) {
		struct pollfd p[2] = {{.fd = fd, .events = POLLIN},
				      {.fd = pidfd, .events = POLLIN}};

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if ((p[0].revents & (POLLIN | POLLHUP)) &&
		    !take_lines(&w, fd, buf, sizeof(buf), &used))
			break;
		if (p[1].revents & POLLIN)
			break;
	}
	/* Without pidfds (before Linux 5.3): the pipe's end alone tells. */
	while (pidfd_err && pidfd_err != ESRCH && !w.done &&
	       take_lines(&w, fd, buf, sizeof(buf), &used))
		;
	/* crf is gone: what it had written is all there is. */
	fcntl(fd, F_SETFL, O_NONBLOCK);
	while (!w.done && take_lines(&w, fd, buf, sizeof(buf), &used))
		;
	if (!w.done && w.frozen[0])
		thaw(w.frozen);
	/* Images only of this dump: a directory that turned out to hold another is left. */
	if (!w.done && !w.keep && w.owned)
		remove_images(imgdir, created);
	else if (!w.done && created)
		rmdir(imgdir);
	_exit(0);
}

void guardian_start(const char *imgdir, bool created)
{
	pid_t crf;
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0) {
		crf_warn("no guardian for the dump: pipe: %s", strerror(errno));
		return;
	}
	crf = getpid();
	pid = fork();
	if (pid < 0) {
		crf_warn("no guardian for the dump: fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return;
	}
	if (pid == 0) {
		/* Only the pipe and stderr: nothing of the dump stays open here. */
		if (dup2(p[0], 3) < 0 || syscall(SYS_close_range, 4, ~0u, 0) < 0)
			_exit(1);
		setpgid(0, 0);
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		prctl(PR_SET_NAME, "crf-guardian", 0, 0, 0);
		guard(3, crf, imgdir, created);
	}
	close(p[0]);
	guard_fd = p[1];
	guard_pid = pid;
}

static void say(const char *line)
{
	size_t n = strlen(line);

	if (guard_fd >= 0 && write(guard_fd, line, n) != (ssize_t)n)
		crf_warn("the dump's guardian did not get its message: %s", strerror(errno));
}

void guardian_frozen(const char *dir)
{
	char line[PATH_MAX + 8];

	if ((size_t)snprintf(line, sizeof(line), "F %s\n", dir) < sizeof(line))
		say(line);
}

void guardian_thawed(void)
{
	say("T\n");
}

void guardian_owned(void)
{
	say("O\n");
}

void guardian_complete(void)
{
	say("K\n");
}

void guardian_stop(void)
{
	if (guard_fd < 0)
		return;
	say("D\n");
	close(guard_fd);
	guard_fd = -1;
	while (waitpid(guard_pid, NULL, 0) < 0 && errno == EINTR)
		;
}
