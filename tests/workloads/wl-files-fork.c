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
 *   tmp  an O_TMPFILE file of 3000 bytes (never linked), at offset 7
 *   scm  a regular file the child opened after the fork, at offset 3, and
 *        sent to the parent with SCM_RIGHTS (both closed the socketpair
 *        before the dump)
 * After restore the child reads 100 bytes through its dup of f, 20
 * through mem, 200 through tmp and 40 through scm, writes 5 to ev and
 * exits; the parent, once it has reaped the child, finds f at offset 110,
 * mem at 20, tmp at 207 and scm at 43, reads 5 from ev, and exits with the
 * child's verdict.
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
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
#define TMP_LEN	 3000
#define TMP_POS	 7
#define TMP_READ 200
#define SCM_LEN	 1000
#define SCM_POS	 3
#define SCM_READ 40
#define SEED_TMP 0x7e7ULL
#define SEED_SCM 0x5c5ULL

/* The child's fd of the file it sent to the parent. */
static int return_scm = -1;

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

/* Send @fd over @sock with SCM_RIGHTS. */
static void send_fd(int sock, int fd)
{
	char byte = 'f', cbuf[CMSG_SPACE(sizeof(int))] = {0};
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	WL_CHECK(sendmsg(sock, &mh, 0) == 1, "sendmsg: %s", strerror(errno));
}

static int recv_fd(int sock)
{
	char byte, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c;
	int fd;

	WL_CHECK(recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) == 1, "recvmsg: %s", strerror(errno));
	c = CMSG_FIRSTHDR(&mh);
	WL_CHECK(c && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)),
		 "recvmsg: no fd came");
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* The file the child opens after the fork and sends to the parent. */
static void child_opens(int sock, const char *path)
{
	int scm = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	WL_CHECK(scm >= 0, "child: open %s: %s", path, strerror(errno));
	write_file(scm, SCM_LEN, SEED_SCM);
	WL_CHECK(fsync(scm) == 0 && lseek(scm, SCM_POS, SEEK_SET) == SCM_POS, "child: %s: %s", path,
		 strerror(errno));
	send_fd(sock, scm);
	close(sock);
	return_scm = scm;
}

static _Noreturn void child(int sync_wr, int ev, int mem, int tmp)
{
	uint64_t add = EV_ADD;

	WL_CHECK(dup2(F_DUP, F_DUP) == F_DUP, "fd %d: %s", F_DUP, strerror(errno));
	close(sync_wr);
	wl_wait_verify();
	read_check(F_DUP, F_READ, F_POS, SEED_F, "child: file");
	read_check(mem, MEM_READ, 0, SEED_MEM, "child: memfd");
	read_check(tmp, TMP_READ, TMP_POS, SEED_TMP, "child: O_TMPFILE file");
	read_check(return_scm, SCM_READ, SCM_POS, SEED_SCM, "child: file it sent");
	WL_CHECK(write(ev, &add, sizeof(add)) == sizeof(add), "child: eventfd: %s",
		 strerror(errno));
	_exit(0);
}

/* @fd's offset is @want and the next 10 bytes are those of wl_fill(@seed) there. */
static void check_after(int fd, off_t want, uint64_t seed, const char *what)
{
	off_t pos = lseek(fd, 0, SEEK_CUR);

	WL_CHECK(pos == want, "%s: offset %lld, want %lld", what, (long long)pos, (long long)want);
	read_check(fd, 10, (size_t)want, seed, what);
}

static void verify(int f, int ev, int mem, int tmp, int scm, pid_t pid)
{
	uint64_t got = 0;
	struct stat st;
	int status;

	WL_CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
	WL_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: status %#x", status);
	check_after(f, F_POS + F_READ, SEED_F, "file after the child");
	check_after(mem, MEM_READ, SEED_MEM, "memfd after the child");
	check_after(tmp, TMP_POS + TMP_READ, SEED_TMP, "O_TMPFILE file after the child");
	check_after(scm, SCM_POS + SCM_READ, SEED_SCM, "the child's file after the child");
	WL_CHECK(fstat(tmp, &st) == 0 && st.st_nlink == 0 && st.st_size == TMP_LEN,
		 "O_TMPFILE file: %lu links, %lld bytes", (unsigned long)st.st_nlink,
		 (long long)st.st_size);
	WL_CHECK(read(ev, &got, sizeof(got)) == sizeof(got) && got == EV_ADD,
		 "eventfd: read %llu, want %d: %s", (unsigned long long)got, EV_ADD,
		 strerror(errno));
}

int main(void)
{
	int f, ev, mem, tmp, scm, sync[2], sock[2];
	char path[4096], scm_path[4096], byte;
	pid_t pid;

	wl_init("files-fork");
	snprintf(path, sizeof(path), "%s/wl-files-fork.dat", wl_tmpdir());
	snprintf(scm_path, sizeof(scm_path), "%s/wl-files-fork.scm", wl_tmpdir());
	f = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	WL_CHECK(f >= 0, "open %s: %s", path, strerror(errno));
	write_file(f, F_LEN, SEED_F);
	WL_CHECK(fsync(f) == 0 && lseek(f, F_POS, SEEK_SET) == F_POS, "%s: %s", path,
		 strerror(errno));
	WL_CHECK(dup2(f, F_DUP) == F_DUP, "dup2: %s", strerror(errno));
	ev = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	mem = memfd_create("wl-files-fork", MFD_CLOEXEC);
	tmp = open(wl_tmpdir(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	WL_CHECK(ev >= 0 && mem >= 0 && tmp >= 0, "eventfd, memfd, O_TMPFILE: %s", strerror(errno));
	write_file(mem, MEM_LEN, SEED_MEM);
	write_file(tmp, TMP_LEN, SEED_TMP);
	WL_CHECK(lseek(mem, 0, SEEK_SET) == 0 && lseek(tmp, TMP_POS, SEEK_SET) == TMP_POS,
		 "memfd, O_TMPFILE: %s", strerror(errno));
	WL_CHECK(pipe2(sync, O_CLOEXEC) == 0 &&
			 socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sock) == 0,
		 "pipe, socketpair: %s", strerror(errno));

	pid = fork();
	WL_CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(sync[0]);
		close(sock[0]);
		close(f);
		child_opens(sock[1], scm_path);
		child(sync[1], ev, mem, tmp);
	}
	close(F_DUP);
	close(sync[1]);
	close(sock[1]);
	scm = recv_fd(sock[0]);
	close(sock[0]);
	WL_CHECK(read(sync[0], &byte, 1) == 0, "sync: %s", strerror(errno));
	close(sync[0]);

	wl_ready();
	wl_wait_verify();
	verify(f, ev, mem, tmp, scm, pid);
	close(f);
	unlink(path);
	unlink(scm_path);
	return 0;
}
