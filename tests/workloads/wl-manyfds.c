// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-manyfds [COUNT | upto:COUNT]: COUNT fds (1000 by default) in one
 * process keep their numbers and offsets across checkpoint and restore.
 *
 * State: one data file opened COUNT times, at fds 3..COUNT+2, each a
 * description of its own (not dups), every third one O_RDWR and the others
 * O_RDONLY, each at an offset of its own; above them an epoll fd watching
 * an eventfd (count 1, data 0x42).  After restore every fd must be open
 * with its access mode and offset, reading through one must not move
 * another, and the epoll fd must report the eventfd (crf registers it
 * again in a child that must not need a copy of every fd).
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#define FIRST	 3
#define DATA_LEN 8192

static off_t offset_of(int fd)
{
	return (off_t)((fd * 37) % DATA_LEN);
}

static int mode_of(int fd)
{
	return fd % 3 ? O_RDONLY : O_RDWR;
}

static void setup(const char *path, int last)
{
	unsigned char buf[DATA_LEN];
	struct rlimit rl;
	int fd;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur <= (rlim_t)last + 2) {
		rl.rlim_cur = rl.rlim_max;
		if (rl.rlim_cur <= (rlim_t)last + 2 || setrlimit(RLIMIT_NOFILE, &rl))
			wl_fail("RLIMIT_NOFILE does not allow fd %d", last + 2);
	}
	wl_fill(buf, sizeof(buf), 11);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf) || close(fd) < 0)
		wl_fail("write %s: %s", path, strerror(errno));
	for (int want = FIRST; want <= last; want++) {
		fd = open(path, mode_of(want));
		if (fd < 0)
			wl_fail("open %s: %s", path, strerror(errno));
		if (fd != want && (dup2(fd, want) != want || close(fd) < 0))
			wl_fail("dup2 to %d: %s", want, strerror(errno));
		if (lseek(want, offset_of(want), SEEK_SET) != offset_of(want))
			wl_fail("lseek on %d: %s", want, strerror(errno));
	}
}

/* An epoll fd at @last + 1 watching an eventfd at @last + 2. */
static void setup_epoll(int last)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 0x42};
	int ep = epoll_create1(0), efd = eventfd(1, 0);

	/* The lowest free numbers: fds 3..@last are taken, nothing above. */
	WL_CHECK(ep == last + 1 && efd == last + 2, "epoll %d, eventfd %d: %s", ep, efd,
		 strerror(errno));
	WL_CHECK(epoll_ctl(last + 1, EPOLL_CTL_ADD, last + 2, &ev) == 0, "epoll_ctl: %s",
		 strerror(errno));
}

static void check(int last)
{
	struct epoll_event ev;
	char b;

	for (int fd = FIRST; fd <= last; fd++) {
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
	WL_CHECK(epoll_wait(last + 1, &ev, 1, 0) == 1 && ev.data.u64 == 0x42,
		 "epoll fd %d does not report eventfd %d", last + 1, last + 2);
}

/*
 * "COUNT" or "upto:COUNT": the latter as many as the hard RLIMIT_NOFILE
 * leaves room for, up to COUNT (the dump and the restore need a few dozen
 * fds of their own besides the program's), so that a machine with a lower
 * limit tests what it can rather than failing on its set-up.
 */
static int count_of(const char *arg)
{
	struct rlimit rl;
	int want, room;

	if (strncmp(arg, "upto:", 5))
		return atoi(arg);
	want = atoi(arg + 5);
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_max == RLIM_INFINITY ||
	    rl.rlim_max >= (rlim_t)want + 200)
		return want;
	room = (int)rl.rlim_max - 200;
	wl_downgrade("hard RLIMIT_NOFILE %llu: %d fds, not %d", (unsigned long long)rl.rlim_max,
		     room, want);
	return room;
}

int main(int argc, char **argv)
{
	char path[4096];
	int count;

	wl_init("manyfds");
	count = argc > 1 ? count_of(argv[1]) : 1000;
	if (count < 2)
		wl_fail("usage: wl-manyfds [COUNT >= 2 | upto:COUNT]");
	snprintf(path, sizeof(path), "%s/wl-manyfds.dat", wl_tmpdir());
	setup(path, FIRST + count - 1);
	setup_epoll(FIRST + count - 1);
	wl_ready();
	wl_wait_verify();
	check(FIRST + count - 1);
	wl_note("%d fds: numbers, access modes and offsets all equal", count);
	return 0;
}
