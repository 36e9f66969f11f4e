// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-pipes: pipes and a FIFO keep their ends, capacity, flags and buffered
 * bytes across checkpoint and restore.
 *
 * State during the dump:
 *   A  a pipe from the parent (write end) to its child (read end), with
 *      60 KiB the parent wrote and the child has not read yet
 *   B  a pipe of the parent resized to 256 KiB, holding 100 KiB (more than
 *      a default pipe holds, so the capacity must be back before the bytes)
 *   C  a pipe of the parent whose read end is O_NONBLOCK, holding 10 bytes
 *   F  a FIFO in the test directory opened by the parent for reading and
 *      for writing, holding 3000 bytes
 * After restore the child reads exactly A's 60 KiB (to EOF, which comes when
 * the parent closes its end); the parent checks B's capacity and bytes, C's
 * flags, bytes and EAGAIN once empty, F's bytes, then exits with the
 * child's verdict.  Setup is synchronised with a pipe whose copies are all
 * closed before the parent calls itself ready.
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define A_LEN  (60 * 1024)
#define B_CAP  (256 * 1024)
#define B_LEN  (100 * 1024)
#define C_LEN  10
#define F_LEN  3000
#define SEED_A 0xa11ceULL
#define SEED_B 0xb0bULL
#define SEED_C 0xc0ffeeULL
#define SEED_F 0xf1f0ULL

static void write_all(int fd, size_t len, uint64_t seed)
{
	unsigned char *buf = malloc(len);
	size_t done = 0;

	WL_CHECK(buf, "malloc %zu", len);
	wl_fill(buf, len, seed);
	while (done < len) {
		ssize_t n = write(fd, buf + done, len - done);

		WL_CHECK(n > 0, "write: %s", strerror(errno));
		done += (size_t)n;
	}
	free(buf);
}

/* Read @len bytes and compare them with wl_fill(@seed); then nothing more is buffered. */
static void read_check(int fd, size_t len, uint64_t seed, const char *what)
{
	unsigned char *buf = malloc(len);
	size_t done = 0;
	int left = -1;

	WL_CHECK(buf, "malloc %zu", len);
	while (done < len) {
		ssize_t n = read(fd, buf + done, len - done);

		WL_CHECK(n > 0, "%s: read after %zu of %zu bytes: %s", what, done, len,
			 n < 0 ? strerror(errno) : "EOF");
		done += (size_t)n;
	}
	WL_CHECK(wl_cmp_fill(buf, len, seed) < 0, "%s: bytes differ at %zd", what,
		 wl_cmp_fill(buf, len, seed));
	WL_CHECK(ioctl(fd, FIONREAD, &left) == 0 && left == 0, "%s: %d bytes more", what, left);
	free(buf);
}

/* The child: A's read end only.  Reads A to EOF after the restore. */
static _Noreturn void child(int a_rd)
{
	unsigned char extra;

	wl_wait_verify();
	read_check(a_rd, A_LEN, SEED_A, "child: pipe A");
	WL_CHECK(read(a_rd, &extra, 1) == 0, "child: pipe A: more than %d bytes", A_LEN);
	_exit(0);
}

static int check_fl(int fd, int want, const char *what)
{
	int fl = fcntl(fd, F_GETFL);

	WL_CHECK(fl >= 0 && (fl & (O_ACCMODE | O_NONBLOCK)) == want, "%s: flags %#o, want %#o",
		 what, fl, want);
	return fl;
}

static void verify(int b[2], int c[2], int f_rd, int f_wr)
{
	char byte;
	int cap = fcntl(b[1], F_GETPIPE_SZ);

	WL_CHECK(cap == B_CAP, "pipe B: capacity %d, want %d", cap, B_CAP);
	read_check(b[0], B_LEN, SEED_B, "pipe B");
	check_fl(c[0], O_RDONLY | O_NONBLOCK, "pipe C read end");
	check_fl(c[1], O_WRONLY, "pipe C write end");
	read_check(c[0], C_LEN, SEED_C, "pipe C");
	WL_CHECK(read(c[0], &byte, 1) < 0 && errno == EAGAIN, "pipe C: empty read: %s",
		 strerror(errno));
	check_fl(f_rd, O_RDONLY, "FIFO read end");
	check_fl(f_wr, O_WRONLY, "FIFO write end");
	read_check(f_rd, F_LEN, SEED_F, "FIFO");
	write_all(f_wr, 100, SEED_F + 1);
	read_check(f_rd, 100, SEED_F + 1, "FIFO after restore");
}

int main(void)
{
	int a[2], b[2], c[2], sync[2], f_rd, f_wr, status;
	char fifo[4096], byte;
	pid_t pid;

	wl_init("pipes");
	snprintf(fifo, sizeof(fifo), "%s/wl-pipes.fifo", wl_tmpdir());
	unlink(fifo);
	WL_CHECK(mkfifo(fifo, 0600) == 0, "mkfifo %s: %s", fifo, strerror(errno));
	WL_CHECK(pipe2(sync, O_CLOEXEC) == 0 && pipe2(a, O_CLOEXEC) == 0, "pipe: %s",
		 strerror(errno));
	pid = fork();
	WL_CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(a[1]);
		close(sync[0]);
		close(sync[1]);
		child(a[0]);
	}
	close(a[0]);
	close(sync[1]);
	WL_CHECK(read(sync[0], &byte, 1) == 0, "sync: %s", strerror(errno));
	close(sync[0]);
	write_all(a[1], A_LEN, SEED_A);

	WL_CHECK(pipe2(b, 0) == 0 && pipe2(c, 0) == 0, "pipe: %s", strerror(errno));
	WL_CHECK(fcntl(b[1], F_SETPIPE_SZ, B_CAP) == B_CAP, "F_SETPIPE_SZ: %s", strerror(errno));
	write_all(b[1], B_LEN, SEED_B);
	WL_CHECK(fcntl(c[0], F_SETFL, O_NONBLOCK) == 0, "F_SETFL: %s", strerror(errno));
	write_all(c[1], C_LEN, SEED_C);

	/* The read end first, without blocking; then the write end opens at once. */
	f_rd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	f_wr = open(fifo, O_WRONLY | O_CLOEXEC);
	WL_CHECK(f_rd >= 0 && f_wr >= 0, "open %s: %s", fifo, strerror(errno));
	WL_CHECK(fcntl(f_rd, F_SETFL, 0) == 0, "F_SETFL: %s", strerror(errno));
	write_all(f_wr, F_LEN, SEED_F);

	wl_ready();
	wl_wait_verify();

	verify(b, c, f_rd, f_wr);
	close(a[1]);
	unlink(fifo);
	WL_CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
	WL_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: status %#x", status);
	return 0;
}
