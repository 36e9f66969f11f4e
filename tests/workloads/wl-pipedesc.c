// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-pipedesc: every open file description of a pipe or FIFO comes back
 * as one description of its own, with its own flags, shared by the same
 * fds as before (O_NONBLOCK is a property of the description, not the fd).
 *
 * State during the dump, in the parent:
 *   p    a pipe whose read end is blocking and write end O_NONBLOCK, with
 *        two more descriptions of it opened through /proc/self/fd: a read
 *        end with O_NONBLOCK (and a dup of it) and a read-write one; 100
 *        bytes buffered
 *   f    a FIFO opened four times: for reading with and without
 *        O_NONBLOCK, for writing with and without it; 3000 bytes buffered
 *   d    a packet-mode pipe (pipe2(O_DIRECT)), empty
 * and, shared with the child by fork, the read end of pipe q; the child
 * also opened q's read end again through /proc/self/fd.
 * After restore every fd has its flags of before, and kcmp(KCMP_FILE)
 * pairs them as before; O_NONBLOCK set through one description shows on its
 * dups and nowhere else (the child sets it on q's shared end: the parent
 * sees it, the child's other description does not); the FIFO's atime,
 * mtime and ctime are those of before the dump (its bytes went back in
 * without a write); d still reads one packet per write.
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/kcmp.h>

#define P_LEN	  100
#define F_LEN	  3000
#define SEED_P	  0x9d1ULL
#define SEED_F	  0xf1f0ULL
#define N_FDS	  11
#define LARGEFILE 0100000 /* the kernel's O_LARGEFILE; glibc's is 0 on x86_64 */

static const char *const names[N_FDS] = {
	"pipe p read end",
	"pipe p write end",
	"p read end opened again (O_NONBLOCK)",
	"dup of that",
	"p opened again read-write",
	"FIFO read end (O_NONBLOCK)",
	"FIFO write end",
	"FIFO read end",
	"FIFO write end (O_NONBLOCK)",
	"packet pipe read end",
	"packet pipe write end",
};

struct state {
	int fd[N_FDS];
	int fl[N_FDS];
	bool same[N_FDS][N_FDS];
};

static int reopen(int fd, int flags)
{
	char path[64];
	int r;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	r = open(path, flags);
	WL_CHECK(r >= 0, "open %s: %s", path, strerror(errno));
	return r;
}

static int flags_of(int fd, const char *what)
{
	int fl = fcntl(fd, F_GETFL);

	WL_CHECK(fl >= 0, "%s: F_GETFL: %s", what, strerror(errno));
	return fl;
}

static bool same_desc(int a, int b)
{
	long r = syscall(SYS_kcmp, getpid(), getpid(), KCMP_FILE, a, b);

	WL_CHECK(r >= 0, "kcmp of fds %d and %d: %s", a, b, strerror(errno));
	return r == 0;
}

static void record(struct state *s)
{
	for (int i = 0; i < N_FDS; i++) {
		s->fl[i] = flags_of(s->fd[i], names[i]);
		for (int j = 0; j < N_FDS; j++)
			s->same[i][j] = same_desc(s->fd[i], s->fd[j]);
	}
}

static void compare(const struct state *before)
{
	struct state now = *before;

	record(&now);
	for (int i = 0; i < N_FDS; i++) {
		WL_CHECK(now.fl[i] == before->fl[i], "%s (fd %d): flags %#o, want %#o", names[i],
			 before->fd[i], now.fl[i], before->fl[i]);
		for (int j = 0; j < i; j++)
			WL_CHECK(now.same[i][j] == before->same[i][j],
				 "%s and %s: %s one description now", names[i], names[j],
				 now.same[i][j] ? "share" : "no longer share");
	}
}

static void write_all(int fd, size_t len, uint64_t seed)
{
	unsigned char buf[F_LEN];

	wl_fill(buf, len, seed);
	WL_CHECK(write(fd, buf, len) == (ssize_t)len, "write %zu: %s", len, strerror(errno));
}

static void read_check(int fd, size_t len, uint64_t seed, const char *what)
{
	unsigned char buf[F_LEN];
	int left = -1;

	WL_CHECK(read(fd, buf, len) == (ssize_t)len, "%s: read %zu: %s", what, len,
		 strerror(errno));
	WL_CHECK(wl_cmp_fill(buf, len, seed) < 0, "%s: bytes differ", what);
	WL_CHECK(ioctl(fd, FIONREAD, &left) == 0 && left == 0, "%s: %d bytes more", what, left);
}

static void set_nonblock(int fd, const char *what)
{
	WL_CHECK(fcntl(fd, F_SETFL, flags_of(fd, what) | O_NONBLOCK) == 0, "%s: F_SETFL: %s", what,
		 strerror(errno));
}

/* The child: q's read end shared with the parent, and one description of its own. */
static _Noreturn void child(int q_rd, int sync_wr)
{
	int mine = reopen(q_rd, O_RDONLY), fl_q = flags_of(q_rd, "q"), fl_mine;

	fl_mine = flags_of(mine, "q opened again");
	close(sync_wr);
	wl_wait_verify();
	WL_CHECK(flags_of(q_rd, "child: q") == fl_q, "child: q: flags %#o, want %#o",
		 flags_of(q_rd, "q"), fl_q);
	WL_CHECK(flags_of(mine, "child: q again") == fl_mine,
		 "child: q opened again: flags %#o, want %#o", flags_of(mine, "q"), fl_mine);
	WL_CHECK(!same_desc(q_rd, mine), "child: q's two read ends are one description now");
	set_nonblock(q_rd, "child: q");
	WL_CHECK(!(flags_of(mine, "child: q again") & O_NONBLOCK),
		 "child: O_NONBLOCK on q's shared read end shows on its other description");
	_exit(0);
}

static void check_times(const char *fifo, const struct stat *before)
{
	struct stat st;

	WL_CHECK(stat(fifo, &st) == 0, "stat %s: %s", fifo, strerror(errno));
	WL_CHECK(!memcmp(&st.st_mtim, &before->st_mtim, sizeof(st.st_mtim)) &&
			 !memcmp(&st.st_ctim, &before->st_ctim, sizeof(st.st_ctim)) &&
			 !memcmp(&st.st_atim, &before->st_atim, sizeof(st.st_atim)),
		 "FIFO %s: atime/mtime/ctime %lld.%09ld/%lld.%09ld/%lld.%09ld, were "
		 "%lld.%09ld/%lld.%09ld/%lld.%09ld",
		 fifo, (long long)st.st_atim.tv_sec, st.st_atim.tv_nsec,
		 (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, (long long)st.st_ctim.tv_sec,
		 st.st_ctim.tv_nsec, (long long)before->st_atim.tv_sec, before->st_atim.tv_nsec,
		 (long long)before->st_mtim.tv_sec, before->st_mtim.tv_nsec,
		 (long long)before->st_ctim.tv_sec, before->st_ctim.tv_nsec);
}

static void verify(const struct state *s, const char *fifo, const struct stat *fifo_st)
{
	char buf[64];

	check_times(fifo, fifo_st);
	compare(s);
	set_nonblock(s->fd[2], "p read end opened again");
	WL_CHECK(flags_of(s->fd[3], "dup") & O_NONBLOCK, "O_NONBLOCK does not show on a dup");
	read_check(s->fd[2], P_LEN, SEED_P, "pipe p");
	WL_CHECK(read(s->fd[2], buf, 1) < 0 && errno == EAGAIN, "pipe p: empty read: %s",
		 strerror(errno));
	read_check(s->fd[5], F_LEN, SEED_F, "FIFO");
	write_all(s->fd[10], 10, 1);
	write_all(s->fd[10], 20, 2);
	WL_CHECK(read(s->fd[9], buf, sizeof(buf)) == 10 && read(s->fd[9], buf, sizeof(buf)) == 20,
		 "packet pipe: not one packet per write");
}

int main(void)
{
	int p[2], q[2], d[2], sync[2], status;
	struct state s;
	struct stat fifo_st;
	char fifo[4096], byte;
	pid_t pid;

	wl_init("pipedesc");
	snprintf(fifo, sizeof(fifo), "%s/wl-pipedesc.fifo", wl_tmpdir());
	unlink(fifo);
	WL_CHECK(mkfifo(fifo, 0600) == 0, "mkfifo %s: %s", fifo, strerror(errno));
	WL_CHECK(pipe2(q, O_CLOEXEC) == 0 && pipe2(sync, O_CLOEXEC) == 0, "pipe: %s",
		 strerror(errno));
	pid = fork();
	WL_CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(q[1]);
		close(sync[0]);
		child(q[0], sync[1]);
	}
	close(sync[1]);
	WL_CHECK(read(sync[0], &byte, 1) == 0, "sync: %s", strerror(errno));
	close(sync[0]);

	WL_CHECK(pipe(p) == 0 && pipe2(d, O_DIRECT) == 0, "pipe: %s", strerror(errno));
	set_nonblock(p[1], "pipe p write end");
	s.fd[0] = p[0];
	s.fd[1] = p[1];
	s.fd[2] = reopen(p[0], O_RDONLY | O_NONBLOCK);
	s.fd[3] = dup(s.fd[2]);
	s.fd[4] = reopen(p[0], O_RDWR);
	s.fd[5] = open(fifo, O_RDONLY | O_NONBLOCK);
	s.fd[6] = open(fifo, O_WRONLY);
	s.fd[7] = open(fifo, O_RDONLY);
	s.fd[8] = open(fifo, O_WRONLY | O_NONBLOCK);
	s.fd[9] = d[0];
	s.fd[10] = d[1];
	for (int i = 0; i < N_FDS; i++)
		WL_CHECK(s.fd[i] >= 0, "%s: %s", names[i], strerror(errno));
	write_all(p[1], P_LEN, SEED_P);
	write_all(s.fd[6], F_LEN, SEED_F);
	record(&s);
	WL_CHECK(s.fl[2] & LARGEFILE && !(s.fl[0] & LARGEFILE), "O_LARGEFILE: %#o %#o", s.fl[2],
		 s.fl[0]);
	WL_CHECK(stat(fifo, &fifo_st) == 0, "stat %s: %s", fifo, strerror(errno));
	wl_ready();
	wl_wait_verify();
	verify(&s, fifo, &fifo_st);
	WL_CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
	WL_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: status %#x", status);
	WL_CHECK(flags_of(q[0], "q") & O_NONBLOCK,
		 "O_NONBLOCK the child set on q's shared read end does not show in the parent");
	unlink(fifo);
	return 0;
}
