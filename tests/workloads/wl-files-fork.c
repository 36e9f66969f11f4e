// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-files-fork: open file descriptions a parent shares with its child by
 * fork stay shared across checkpoint and restore, so that what one side
 * does through its fd is seen through the other's.
 *
 * State during the dump, each held by both processes:
 *   f    a regular file of 4096 bytes, read up to offset 10; the child
 *        also holds a dup of it at fd 50
 *   ev   an eventfd, count 0
 *   mem  a memfd of 200 bytes at offset 0
 * After restore the child reads 100 bytes through its dup of f and 20
 * through mem, writes 5 to ev and exits; the parent, once it has reaped
 * the child, finds f at offset 110 and mem at 20, reads 5 from ev, and
 * exits with the child's verdict.
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define F_LEN	 4096
#define F_POS	 10
#define F_READ	 100
#define MEM_LEN	 200
#define MEM_READ 20
#define EV_ADD	 5
#define F_DUP	 50
#define SEED_F	 0xf0f0ULL
#define SEED_MEM 0x3e3ULL

static void write_file(int fd, size_t len, uint64_t seed)
{
	unsigned char buf[F_LEN];

	wl_fill(buf, len, seed);
	WL_CHECK(write(fd, buf, len) == (ssize_t)len, "write: %s", strerror(errno));
}

/* Read @len bytes at the description's offset, @from bytes into wl_fill(@seed). */
static void read_check(int fd, size_t len, size_t from, uint64_t seed, const char *what)
{
	unsigned char buf[F_LEN], want[F_LEN];

	WL_CHECK(read(fd, buf, len) == (ssize_t)len, "%s: read %zu: %s", what, len,
		 strerror(errno));
	wl_fill(want, from + len, seed);
	WL_CHECK(!memcmp(buf, want + from, len), "%s: bytes differ", what);
}

static _Noreturn void child(int sync_wr, int ev, int mem)
{
	uint64_t add = EV_ADD;

	WL_CHECK(dup2(F_DUP, F_DUP) == F_DUP, "fd %d: %s", F_DUP, strerror(errno));
	close(sync_wr);
	wl_wait_verify();
	read_check(F_DUP, F_READ, F_POS, SEED_F, "child: file");
	read_check(mem, MEM_READ, 0, SEED_MEM, "child: memfd");
	WL_CHECK(write(ev, &add, sizeof(add)) == sizeof(add), "child: eventfd: %s",
		 strerror(errno));
	_exit(0);
}

static void verify(int f, int ev, int mem, pid_t pid)
{
	uint64_t got = 0;
	off_t pos;
	int status;

	WL_CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
	WL_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: status %#x", status);
	pos = lseek(f, 0, SEEK_CUR);
	WL_CHECK(pos == F_POS + F_READ, "file: offset %lld, want %d", (long long)pos,
		 F_POS + F_READ);
	read_check(f, 10, F_POS + F_READ, SEED_F, "file after the child");
	pos = lseek(mem, 0, SEEK_CUR);
	WL_CHECK(pos == MEM_READ, "memfd: offset %lld, want %d", (long long)pos, MEM_READ);
	WL_CHECK(read(ev, &got, sizeof(got)) == sizeof(got) && got == EV_ADD,
		 "eventfd: read %llu, want %d: %s", (unsigned long long)got, EV_ADD,
		 strerror(errno));
}

int main(void)
{
	int f, ev, mem, sync[2];
	char path[4096], byte;
	pid_t pid;

	wl_init("files-fork");
	snprintf(path, sizeof(path), "%s/wl-files-fork.dat", wl_tmpdir());
	f = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	WL_CHECK(f >= 0, "open %s: %s", path, strerror(errno));
	write_file(f, F_LEN, SEED_F);
	WL_CHECK(fsync(f) == 0 && lseek(f, F_POS, SEEK_SET) == F_POS, "%s: %s", path,
		 strerror(errno));
	WL_CHECK(dup2(f, F_DUP) == F_DUP, "dup2: %s", strerror(errno));
	ev = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	mem = memfd_create("wl-files-fork", MFD_CLOEXEC);
	WL_CHECK(ev >= 0 && mem >= 0, "eventfd, memfd: %s", strerror(errno));
	write_file(mem, MEM_LEN, SEED_MEM);
	WL_CHECK(lseek(mem, 0, SEEK_SET) == 0, "memfd: %s", strerror(errno));
	WL_CHECK(pipe2(sync, O_CLOEXEC) == 0, "pipe: %s", strerror(errno));

	pid = fork();
	WL_CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(sync[0]);
		close(f);
		child(sync[1], ev, mem);
	}
	close(F_DUP);
	close(sync[1]);
	WL_CHECK(read(sync[0], &byte, 1) == 0, "sync: %s", strerror(errno));
	close(sync[0]);

	wl_ready();
	wl_wait_verify();
	verify(f, ev, mem, pid);
	close(f);
	unlink(path);
	return 0;
}
