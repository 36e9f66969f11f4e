// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe of the interfaces the files plugin dumps an fd table with: it takes
 * each fd from the frozen task with pidfd_getfd, tells shared open file
 * descriptions apart with kcmp, reads flags, position and per-kind state from
 * fdinfo, and copies pipe contents with tee without consuming them.  Every
 * test runs on fds of our own.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/kcmp.h>

#include <crf/cleanup.h>

#include "files.h"

static void probe_pidfd(struct crf_ctx *ctx, int fd)
{
	_cleanup_close_ int pidfd = -1, copy = -1;
	struct stat a, b;

	pidfd = syscall(SYS_pidfd_open, getpid(), 0);
	if (pidfd < 0) {
		crf_probe_feature(ctx, "pidfd-open", false, true, "pidfd_open: %s",
				  strerror(errno));
		crf_probe_feature(ctx, "pidfd-getfd", false, true, "needs pidfd_open");
		return;
	}
	crf_probe_feature(ctx, "pidfd-open", true, true, "opened a pidfd on ourselves");
	copy = syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	if (copy < 0)
		crf_probe_feature(ctx, "pidfd-getfd", false, true, "pidfd_getfd: %s",
				  strerror(errno));
	else if (fstat(copy, &a) || fstat(fd, &b) || a.st_ino != b.st_ino)
		crf_probe_feature(ctx, "pidfd-getfd", false, true,
				  "pidfd_getfd gave an fd of another file");
	else
		crf_probe_feature(ctx, "pidfd-getfd", true, true,
				  "copied our own fd %d through the pidfd", fd);
}

/* kcmp() is only useful if it tells a shared description from a different one. */
static void probe_kcmp(struct crf_ctx *ctx, const int p[2])
{
	pid_t pid = getpid();
	_cleanup_close_ int copy = -1;
	long same, other;

	copy = dup(p[0]);
	if (copy < 0) {
		crf_probe_feature(ctx, "kcmp-file", false, true, "dup: %s", strerror(errno));
		return;
	}
	same = syscall(SYS_kcmp, pid, pid, KCMP_FILE, p[0], copy);
	other = same < 0 ? -1 : syscall(SYS_kcmp, pid, pid, KCMP_FILE, p[0], p[1]);
	if (other < 0)
		crf_probe_feature(ctx, "kcmp-file", false, true, "kcmp(KCMP_FILE): %s",
				  strerror(errno));
	else
		crf_probe_feature(
			ctx, "kcmp-file", same == 0 && other != 0, true,
			"kcmp(KCMP_FILE) gave %ld for a dup and %ld for the other pipe end%s", same,
			other, same == 0 && other != 0 ? "" : " (expected 0 and not 0)");
}

struct fdinfo {
	unsigned long long pos, count;
	unsigned int flags;
	bool has_pos, has_flags, has_count;
};

static int read_fdinfo(int fd, struct fdinfo *info)
{
	_cleanup_fclose_ FILE *f = NULL;
	char path[64], line[256];

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "pos: %llu", &info->pos) == 1)
			info->has_pos = true;
		else if (sscanf(line, "flags: %o", &info->flags) == 1)
			info->has_flags = true;
		else if (sscanf(line, "eventfd-count: %llx", &info->count) == 1)
			info->has_count = true;
	}
	return 0;
}

/* An eventfd shows both the common fields and a per-kind one we can check. */
static void probe_fdinfo(struct crf_ctx *ctx)
{
	struct fdinfo info = {0};
	bool ok;
	int fd, r;

	fd = eventfd(5, EFD_CLOEXEC | EFD_NONBLOCK);
	if (fd < 0) {
		crf_probe_feature(ctx, "fdinfo", false, true, "eventfd: %s", strerror(errno));
		return;
	}
	r = read_fdinfo(fd, &info);
	close(fd);
	if (r < 0) {
		crf_probe_feature(ctx, "fdinfo", false, true, "open /proc/self/fdinfo: %s",
				  strerror(-r));
		return;
	}
	if (!info.has_pos || !info.has_flags || !info.has_count) {
		crf_probe_feature(ctx, "fdinfo", false, true, "an eventfd's fdinfo lacks%s%s%s",
				  info.has_pos ? "" : " pos", info.has_flags ? "" : " flags",
				  info.has_count ? "" : " eventfd-count");
		return;
	}
	ok = info.pos == 0 && (info.flags & O_ACCMODE) == O_RDWR && (info.flags & O_NONBLOCK) &&
	     info.count == 5;
	crf_probe_feature(ctx, "fdinfo", ok, true,
			  "an eventfd reads pos %llu, flags %#o, eventfd-count %llu%s", info.pos,
			  info.flags, info.count, ok ? "" : " (expected 0, O_RDWR|O_NONBLOCK, 5)");
}

static void probe_pipe_size(struct crf_ctx *ctx, int fd)
{
	int size = fcntl(fd, F_GETPIPE_SZ);

	if (size < 0)
		crf_probe_feature(ctx, "pipe-size", false, true, "F_GETPIPE_SZ: %s",
				  strerror(errno));
	else
		crf_probe_feature(ctx, "pipe-size", true, true, "F_GETPIPE_SZ: %d bytes", size);
}

/*
 * Without CAP_SYS_RESOURCE a pipe cannot grow past fs.pipe-max-size, so a
 * restored pipe with more buffered data than that cannot be refilled.
 */
static void probe_pipe_max(struct crf_ctx *ctx, int fd)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/sys/fs/pipe-max-size", "re");
	long max = -1;
	int got;

	if (f && fscanf(f, "%ld", &max) != 1)
		max = -1;
	if (max <= 0) {
		crf_probe_feature(ctx, "pipe-max-size", false, false,
				  "cannot read /proc/sys/fs/pipe-max-size");
		return;
	}
	got = fcntl(fd, F_SETPIPE_SZ, (int)max);
	if (got < 0)
		crf_probe_feature(ctx, "pipe-max-size", false, false,
				  "fs.pipe-max-size is %ld, but F_SETPIPE_SZ to it: %s", max,
				  strerror(errno));
	else
		crf_probe_feature(ctx, "pipe-max-size", true, false,
				  "fs.pipe-max-size is %ld; a pipe grew to %d bytes", max, got);
}

/* tee() must copy what a pipe holds and leave it there. */
static void probe_tee(struct crf_ctx *ctx, const int p[2])
{
	static const char msg[] = "crf";
	char left[8], copied[8];
	ssize_t n, nl, nc;
	int q[2];

	if (pipe2(q, O_CLOEXEC | O_NONBLOCK)) {
		crf_probe_feature(ctx, "tee", false, true, "pipe2: %s", strerror(errno));
		return;
	}
	if (write(p[1], msg, sizeof(msg)) != (ssize_t)sizeof(msg)) {
		crf_probe_feature(ctx, "tee", false, true, "write to a pipe: %s", strerror(errno));
		goto out;
	}
	n = tee(p[0], q[1], sizeof(msg), SPLICE_F_NONBLOCK);
	if (n < 0)
		crf_probe_feature(ctx, "tee", false, true, "tee: %s", strerror(errno));
	nc = read(q[0], copied, sizeof(copied));
	nl = read(p[0], left, sizeof(left));
	if (n < 0)
		goto out;
	if (n == (ssize_t)sizeof(msg) && nc == n && nl == n && !memcmp(copied, msg, n) &&
	    !memcmp(left, msg, n))
		crf_probe_feature(ctx, "tee", true, true,
				  "tee copied %zd bytes and left them in the pipe", n);
	else
		crf_probe_feature(ctx, "tee", false, true,
				  "tee returned %zd; %zd bytes copied, %zd left (expected %zu)", n,
				  nc, nl, sizeof(msg));
out:
	close(q[0]);
	close(q[1]);
}

int files_probe(struct crf_ctx *ctx)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC | O_NONBLOCK))
		return crf_error_errno(errno, "cannot create a pipe to probe with");
	probe_pidfd(ctx, p[0]);
	probe_kcmp(ctx, p);
	probe_fdinfo(ctx);
	probe_pipe_size(ctx, p[0]);
	probe_pipe_max(ctx, p[0]);
	probe_tee(ctx, p);
	close(p[0]);
	close(p[1]);
	return 0;
}
