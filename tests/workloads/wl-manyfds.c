// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-manyfds: 1000 fds in one process keep their numbers and offsets
 * across checkpoint and restore.
 *
 * State: one data file opened 1000 times, at fds 3..1002, each a
 * description of its own (not dups), every third one O_RDWR and the others
 * O_RDONLY, each at an offset of its own.  After restore every fd must be
 * open with its access mode and offset, and reading through one must not
 * move another.
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define FIRST	 3
#define COUNT	 1000
#define LAST	 (FIRST + COUNT - 1)
#define DATA_LEN 8192

static off_t offset_of(int fd)
{
	return (off_t)((fd * 37) % DATA_LEN);
}

static int mode_of(int fd)
{
	return fd % 3 ? O_RDONLY : O_RDWR;
}

static void setup(const char *path)
{
	unsigned char buf[DATA_LEN];
	struct rlimit rl;
	int fd;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur <= LAST) {
		rl.rlim_cur = rl.rlim_max;
		if (rl.rlim_cur <= LAST || setrlimit(RLIMIT_NOFILE, &rl))
			wl_fail("RLIMIT_NOFILE does not allow fd %d", LAST);
	}
	wl_fill(buf, sizeof(buf), 11);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf) || close(fd) < 0)
		wl_fail("write %s: %s", path, strerror(errno));
	for (int want = FIRST; want <= LAST; want++) {
		fd = open(path, mode_of(want));
		if (fd < 0)
			wl_fail("open %s: %s", path, strerror(errno));
		if (fd != want && (dup2(fd, want) != want || close(fd) < 0))
			wl_fail("dup2 to %d: %s", want, strerror(errno));
		if (lseek(want, offset_of(want), SEEK_SET) != offset_of(want))
			wl_fail("lseek on %d: %s", want, strerror(errno));
	}
}

static void check(void)
{
	char b;

	for (int fd = FIRST; fd <= LAST; fd++) {
		int fl = fcntl(fd, F_GETFL);
		off_t pos = lseek(fd, 0, SEEK_CUR);

		WL_CHECK(fl >= 0, "fd %d is not open: %s", fd, strerror(errno));
		WL_CHECK((fl & O_ACCMODE) == mode_of(fd), "fd %d: access mode %d, was %d", fd,
			 fl & O_ACCMODE, mode_of(fd));
		WL_CHECK(pos == offset_of(fd), "fd %d: offset %lld, was %lld", fd, (long long)pos,
			 (long long)offset_of(fd));
	}
	WL_CHECK(read(FIRST, &b, 1) == 1, "read of fd %d: %s", FIRST, strerror(errno));
	WL_CHECK(lseek(FIRST + 1, 0, SEEK_CUR) == offset_of(FIRST + 1),
		 "a read through fd %d moved fd %d", FIRST, FIRST + 1);
}

int main(void)
{
	char path[4096];

	wl_init("manyfds");
	snprintf(path, sizeof(path), "%s/wl-manyfds.dat", wl_tmpdir());
	setup(path);
	wl_ready();
	wl_wait_verify();
	check();
	wl_note("%d fds: numbers, access modes and offsets all equal", COUNT);
	return 0;
}
