// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-files: regular files, a directory and stateless character devices
 * keep their fds across checkpoint and restore.
 *
 * State, at fixed fd numbers (the low ones are those crf itself uses while
 * it restores, so they must be put back after crf's are gone):
 *   3  A  the data file, O_RDWR, offset 1000, no close-on-exec
 *   4  B  dup(A): shares A's description, so A's offset
 *   5  C  the data file opened again, O_RDONLY | O_CLOEXEC, offset 500
 *   6  D  a log file, O_WRONLY | O_APPEND, written twice
 *   7  E  the workload's directory, O_RDONLY | O_DIRECTORY
 *   8  F  /dev/null, O_RDWR
 *   9  G  /dev/urandom, O_RDONLY | O_NONBLOCK
 *   10 U  a temp file, O_RDWR, filled with known bytes, offset 12345, then
 *         unlinked: after restore it must still be unlinked (st_nlink 0,
 *         its name absent from the directory, linkat() refused as it was)
 *         and hold the same bytes
 *   1002 H  the data file, O_RDONLY | O_CLOEXEC, offset 300 (a number above
 *         the 1000 where crf's restorer used to keep its own fds)
 * After restore every number, offset, flag and close-on-exec bit must be
 * the same; a read through A must move B and not C; the data written
 * before the dump must be in the file; the directory must be listable and
 * fchdir()-able, the devices must read and write as before.
 */
#include "wl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DATA_LEN  (64 * 1024)
#define FD_A	  3
#define FD_B	  4
#define FD_C	  5
#define FD_D	  6
#define FD_E	  7
#define FD_F	  8
#define FD_G	  9
#define FD_H	  1002
#define FD_U	  10
#define UNL_LEN	  (200 * 1024 + 17)
#define UNL_POS	  12345
#define UNL_NAME  "wl-files.unlinked"
#define APPENDED  "one line appended\n"
#define SPOT	  2000
#define SPOT_LEN  100
#define STATUS_FL (O_ACCMODE | O_APPEND | O_NONBLOCK)

struct want {
	int fd;
	int fl; /* F_GETFL & STATUS_FL */
	bool cloexec;
	off_t pos;
};

static char data_path[4096], log_path[4096], unl_path[4096];

/* Open PATH with FLAGS at fd number FD. */
static void open_at(int fd, const char *path, int flags)
{
	int tmp = open(path, flags | O_CLOEXEC, 0644);

	if (tmp < 0)
		wl_fail("open %s: %s", path, strerror(errno));
	if (tmp == fd) {
		if (fcntl(fd, F_SETFD, flags & O_CLOEXEC ? FD_CLOEXEC : 0) < 0)
			wl_fail("F_SETFD on %d: %s", fd, strerror(errno));
		return;
	}
	if (dup3(tmp, fd, flags & O_CLOEXEC) < 0)
		wl_fail("dup3 to %d: %s", fd, strerror(errno));
	close(tmp);
}

static void write_data(void)
{
	unsigned char *buf = malloc(DATA_LEN);
	int fd;

	if (!buf)
		wl_fail("out of memory");
	wl_fill(buf, DATA_LEN, 7);
	fd = open(data_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, buf, DATA_LEN) != DATA_LEN || close(fd) < 0)
		wl_fail("write %s: %s", data_path, strerror(errno));
	free(buf);
}

/* FD_U: written, then unlinked while open. */
static void setup_unlinked(void)
{
	unsigned char *buf = malloc(UNL_LEN);

	if (!buf)
		wl_fail("out of memory");
	wl_fill(buf, UNL_LEN, 9);
	open_at(FD_U, unl_path, O_RDWR | O_CREAT | O_TRUNC);
	if (write(FD_U, buf, UNL_LEN) != UNL_LEN || lseek(FD_U, UNL_POS, SEEK_SET) != UNL_POS ||
	    unlink(unl_path) < 0)
		wl_fail("the unlinked file: %s", strerror(errno));
	free(buf);
}

static void setup(void)
{
	unsigned char spot[SPOT_LEN], skip[500];
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur <= FD_H) {
		rl.rlim_cur = rl.rlim_max;
		if (rl.rlim_cur <= FD_H || setrlimit(RLIMIT_NOFILE, &rl))
			wl_fail("RLIMIT_NOFILE does not allow fd %d", FD_H);
	}
	write_data();
	open_at(FD_A, data_path, O_RDWR);
	if (dup2(FD_A, FD_B) != FD_B)
		wl_fail("dup2: %s", strerror(errno));
	open_at(FD_C, data_path, O_RDONLY | O_CLOEXEC);
	open_at(FD_D, log_path, O_WRONLY | O_APPEND | O_CREAT | O_TRUNC);
	open_at(FD_E, wl_tmpdir(), O_RDONLY | O_DIRECTORY);
	open_at(FD_F, "/dev/null", O_RDWR);
	open_at(FD_G, "/dev/urandom", O_RDONLY | O_NONBLOCK);
	open_at(FD_H, data_path, O_RDONLY | O_CLOEXEC);
	setup_unlinked();
	wl_fill(spot, SPOT_LEN, 8);
	if (pwrite(FD_A, spot, SPOT_LEN, SPOT) != SPOT_LEN || lseek(FD_B, 1000, SEEK_SET) != 1000 ||
	    read(FD_C, skip, sizeof(skip)) != (ssize_t)sizeof(skip) ||
	    lseek(FD_H, 300, SEEK_SET) != 300)
		wl_fail("moving the offsets: %s", strerror(errno));
	for (int i = 0; i < 2; i++)
		if (write(FD_D, APPENDED, strlen(APPENDED)) != (ssize_t)strlen(APPENDED))
			wl_fail("append: %s", strerror(errno));
}

static void check_fd(const struct want *w)
{
	int fl = fcntl(w->fd, F_GETFL), fdfl = fcntl(w->fd, F_GETFD);
	off_t pos = lseek(w->fd, 0, SEEK_CUR);

	WL_CHECK(fl >= 0 && fdfl >= 0, "fd %d is not open: %s", w->fd, strerror(errno));
	WL_CHECK((fl & STATUS_FL) == w->fl, "fd %d: flags %#o, were %#o", w->fd, fl & STATUS_FL,
		 w->fl);
	WL_CHECK(!!(fdfl & FD_CLOEXEC) == w->cloexec, "fd %d: close-on-exec is %d, was %d", w->fd,
		 !!(fdfl & FD_CLOEXEC), w->cloexec);
	WL_CHECK(pos == w->pos, "fd %d: offset %lld, was %lld", w->fd, (long long)pos,
		 (long long)w->pos);
}

static void check_content(void)
{
	unsigned char *buf = malloc(DATA_LEN), *want = malloc(DATA_LEN);

	if (!buf || !want)
		wl_fail("out of memory");
	WL_CHECK(pread(FD_C, buf, DATA_LEN, 0) == DATA_LEN, "pread: %s", strerror(errno));
	wl_fill(want, DATA_LEN, 7);
	wl_fill(want + SPOT, SPOT_LEN, 8);
	for (size_t i = 0; i < DATA_LEN; i++)
		WL_CHECK(buf[i] == want[i], "the data file differs at byte %zu%s", i,
			 i >= SPOT && i < SPOT + SPOT_LEN ? " (written before the dump)" : "");
	free(want);
	free(buf);
}

/* A and B share one offset; C has its own. */
static void check_sharing(void)
{
	char b[10];

	WL_CHECK(read(FD_A, b, sizeof(b)) == (ssize_t)sizeof(b), "read: %s", strerror(errno));
	WL_CHECK(lseek(FD_B, 0, SEEK_CUR) == 1010, "a read through fd %d did not move fd %d", FD_A,
		 FD_B);
	WL_CHECK(lseek(FD_C, 0, SEEK_CUR) == 500, "a read through fd %d moved fd %d", FD_A, FD_C);
	WL_CHECK(lseek(FD_H, 0, SEEK_CUR) == 300, "a read through fd %d moved fd %d", FD_A, FD_H);
}

static void check_dir_and_devices(void)
{
	char buf[4096], name[] = "wl-files.dat";
	long n;

	WL_CHECK(fchdir(FD_E) == 0, "fchdir: %s", strerror(errno));
	WL_CHECK(access(name, R_OK) == 0, "%s is not in the directory of fd %d", name, FD_E);
	n = syscall(SYS_getdents64, FD_E, buf, sizeof(buf));
	WL_CHECK(n > 0, "getdents64 on fd %d: %ld (%s)", FD_E, n, strerror(errno));
	WL_CHECK(write(FD_F, buf, 10) == 10 && read(FD_F, buf, 10) == 0, "/dev/null misbehaves");
	WL_CHECK(read(FD_G, buf, 16) == 16, "/dev/urandom: %s", strerror(errno));
	WL_CHECK(write(FD_D, APPENDED, strlen(APPENDED)) == (ssize_t)strlen(APPENDED) &&
			 lseek(FD_D, 0, SEEK_CUR) == (off_t)(3 * strlen(APPENDED)),
		 "the appended file does not grow at its end");
}

static void check_unlinked(void)
{
	unsigned char *buf = malloc(UNL_LEN);
	char proc[64];
	struct stat st;
	ssize_t bad;

	if (!buf)
		wl_fail("out of memory");
	WL_CHECK(fstat(FD_U, &st) == 0, "fstat of fd %d: %s", FD_U, strerror(errno));
	WL_CHECK(S_ISREG(st.st_mode) && st.st_nlink == 0,
		 "fd %d: the unlinked file has %lu links after restore", FD_U,
		 (unsigned long)st.st_nlink);
	WL_CHECK(st.st_size == UNL_LEN, "fd %d: the unlinked file has %lld bytes, had %d", FD_U,
		 (long long)st.st_size, UNL_LEN);
	WL_CHECK(pread(FD_U, buf, UNL_LEN, 0) == UNL_LEN, "pread of fd %d: %s", FD_U,
		 strerror(errno));
	bad = wl_cmp_fill(buf, UNL_LEN, 9);
	WL_CHECK(bad < 0, "the unlinked file differs at byte %zd", bad);
	WL_CHECK(access(unl_path, F_OK) < 0 && errno == ENOENT, "%s has a name again", unl_path);
	/* Unlinked, not made with O_TMPFILE: the kernel lets no one link it again. */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", FD_U);
	WL_CHECK(linkat(AT_FDCWD, proc, AT_FDCWD, unl_path, AT_SYMLINK_FOLLOW) < 0 &&
			 errno == ENOENT,
		 "fd %d: the unlinked file could be linked as %s", FD_U, unl_path);
	free(buf);
}

int main(void)
{
	const off_t log_len = (off_t)(2 * strlen(APPENDED));
	const struct want wants[] = {
		{FD_A, O_RDWR, false, 1000},
		{FD_B, O_RDWR, false, 1000},
		{FD_C, O_RDONLY, true, 500},
		{FD_D, O_WRONLY | O_APPEND, false, log_len},
		{FD_E, O_RDONLY, false, 0},
		{FD_F, O_RDWR, false, 0},
		{FD_G, O_RDONLY | O_NONBLOCK, false, 0},
		{FD_H, O_RDONLY, true, 300},
		{FD_U, O_RDWR, false, UNL_POS},
	};

	wl_init("files");
	snprintf(data_path, sizeof(data_path), "%s/wl-files.dat", wl_tmpdir());
	snprintf(log_path, sizeof(log_path), "%s/wl-files.log", wl_tmpdir());
	snprintf(unl_path, sizeof(unl_path), "%s/" UNL_NAME, wl_tmpdir());
	setup();
	wl_ready();
	wl_wait_verify();
	for (size_t i = 0; i < sizeof(wants) / sizeof(wants[0]); i++)
		check_fd(&wants[i]);
	check_content();
	check_sharing();
	check_dir_and_devices();
	check_unlinked();
	wl_note("%zu fds: numbers, flags, offsets, sharing and contents all equal",
		sizeof(wants) / sizeof(wants[0]));
	return 0;
}
