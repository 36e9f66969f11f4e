// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-locks: file locks and signal-driven I/O survive checkpoint and restore.
 *
 * State during the dump, on one file F of 4096 bytes:
 *   parent P  POSIX write lock on bytes 0-99 and read lock from 1000 to EOF,
 *             through fd p; an OFD write lock on 500-599 through fd o; a
 *             flock(LOCK_EX) through fd s.  p, o and s are shared with K
 *             by fork, so o's and s's locks are those of descriptions
 *             the two share.
 *   child K   POSIX write lock on 100-199 and read lock on 1000-1099,
 *             through its copy of p; an OFD read lock on 700-799 through
 *             a description of its own.  K is in a process group of its own.
 *   pipe A    P's read end: O_ASYNC, owner P (F_OWNER_PID), SIGRTMIN+1
 *   pipe B    P's read end: O_ASYNC, owner K (F_OWNER_PID), SIGRTMIN+2
 *   pipe C    P's read end: O_ASYNC, owner K's group (F_OWNER_PGRP), SIGIO
 *   pipe D    P's read end: O_ASYNC, owner P's thread (F_OWNER_TID), SIGRTMIN+3
 * After restore P checks the owners, signals and flags, writes to A and
 * takes SIGRTMIN+1 with si_fd of A's read end, and the same with D; a checker it forks finds
 * every lock with F_GETLK / F_OFD_GETLK (type, range, l_pid) and flock
 * refused.  P writes to B and C; K takes their signals.  Then the holders
 * unlock, one side at a time, and a checker finds first only K's locks,
 * then none.  P exits with K's verdict.
 *
 * "wl-locks lease": one process holding a read lease, which crf refuses to
 * dump; it must still hold it afterwards.
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define F_LEN 4096
#define SIG_A (SIGRTMIN + 1)
#define SIG_B (SIGRTMIN + 2)
#define SIG_D (SIGRTMIN + 3)

/* One expected answer of F_GETLK (posix) or F_OFD_GETLK for a write lock request. */
struct probe {
	bool ofd;
	off_t at;   /* the one byte asked about */
	short type; /* F_UNLCK: free */
	int who;    /* 'P', 'K' or 0 for an OFD lock's -1 */
	off_t start, len;
};

/* Every lock held (stage 0), only K's (1), none (2). */
static const size_t n_probes[3] = {8, 6, 3};
static const struct probe stages[3][8] = {
	{
		{false, 0, F_WRLCK, 'P', 0, 100},
		{false, 150, F_WRLCK, 'K', 100, 100},
		{false, 250, F_UNLCK, 0, 0, 0},
		{false, 2000, F_RDLCK, 'P', 1000, 0},
		{true, 550, F_WRLCK, 0, 500, 100},
		{true, 750, F_RDLCK, 0, 700, 100},
		{true, 450, F_UNLCK, 0, 0, 0},
		{false, 650, F_UNLCK, 0, 0, 0},
	},
	{
		{false, 50, F_UNLCK, 0, 0, 0},
		{false, 150, F_WRLCK, 'K', 100, 100},
		{false, 1050, F_RDLCK, 'K', 1000, 100},
		{false, 2000, F_UNLCK, 0, 0, 0},
		{true, 550, F_UNLCK, 0, 0, 0},
		{true, 750, F_RDLCK, 0, 700, 100},
	},
	{
		{false, 150, F_UNLCK, 0, 0, 0},
		{false, 1050, F_UNLCK, 0, 0, 0},
		{true, 750, F_UNLCK, 0, 0, 0},
	},
};

static char path[4096];
static pid_t pid_p, pid_k;

static void lock(int fd, int cmd, short type, off_t start, off_t len)
{
	struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len};

	WL_CHECK(fcntl(fd, cmd, &fl) == 0, "fd %d: lock %d at %lld: %s", fd, type, (long long)start,
		 strerror(errno));
}

/* In a fresh process: what another process finds of the locks at @stage. */
static _Noreturn void checker(int stage)
{
	int fd = open(path, O_RDWR | O_CLOEXEC), r;

	WL_CHECK(fd >= 0, "checker: open %s: %s", path, strerror(errno));
	for (size_t i = 0; i < n_probes[stage]; i++) {
		const struct probe *p = &stages[stage][i];
		struct flock fl = {
			.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = p->at, .l_len = 1};
		pid_t want = p->who == 'P' ? pid_p : p->who == 'K' ? pid_k : -1;

		WL_CHECK(fcntl(fd, p->ofd ? F_OFD_GETLK : F_GETLK, &fl) == 0, "checker: GETLK: %s",
			 strerror(errno));
		WL_CHECK(fl.l_type == p->type, "stage %d: byte %lld: lock type %d, want %d", stage,
			 (long long)p->at, fl.l_type, p->type);
		if (p->type == F_UNLCK)
			continue;
		WL_CHECK(fl.l_pid == want && fl.l_start == p->start && fl.l_len == p->len,
			 "stage %d: byte %lld: pid %d, bytes %lld+%lld; want pid %d, %lld+%lld",
			 stage, (long long)p->at, (int)fl.l_pid, (long long)fl.l_start,
			 (long long)fl.l_len, (int)want, (long long)p->start, (long long)p->len);
	}
	r = flock(fd, LOCK_SH | LOCK_NB);
	if (stage == 0)
		WL_CHECK(r < 0 && errno == EWOULDBLOCK, "stage 0: flock(LOCK_SH) was not refused");
	else
		WL_CHECK(r == 0, "stage %d: flock(LOCK_SH): %s", stage, strerror(errno));
	_exit(0);
}

static void check_locks(int stage)
{
	pid_t pid = fork();
	int st;

	WL_CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0)
		checker(stage);
	WL_CHECK(waitpid(pid, &st, 0) == pid, "waitpid: %s", strerror(errno));
	WL_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the checker of stage %d failed", stage);
}

/* Take signal @sig, which a write to a pipe sent; check it names @fd (when > 0). */
static void take_signal(int sig, int fd, const char *what)
{
	const struct timespec t = {5, 0};
	siginfo_t si;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, sig);
	WL_CHECK(sigtimedwait(&set, &si, &t) == sig, "%s: no signal %d: %s", what, sig,
		 strerror(errno));
	if (fd > 0)
		WL_CHECK(si.si_fd == fd && si.si_code == POLL_IN, "%s: si_fd %d, si_code %d", what,
			 si.si_fd, si.si_code);
}

static void check_owner(int fd, int type, pid_t pid, int sig, const char *what)
{
	struct f_owner_ex ex;

	WL_CHECK(fcntl(fd, F_GETOWN_EX, &ex) == 0, "%s: F_GETOWN_EX: %s", what, strerror(errno));
	WL_CHECK((int)ex.type == type && ex.pid == pid,
		 "%s: owner %d of type %d, want %d of type %d", what, ex.pid, ex.type, (int)pid,
		 type);
	WL_CHECK(fcntl(fd, F_GETSIG) == sig, "%s: F_GETSIG %d, want %d", what, fcntl(fd, F_GETSIG),
		 sig);
	WL_CHECK(fcntl(fd, F_GETFL) & O_ASYNC, "%s: no O_ASYNC", what);
}

static void set_owner(int fd, int type, pid_t pid, int sig)
{
	struct f_owner_ex ex = {.type = type, .pid = pid};
	int fl = fcntl(fd, F_GETFL);

	WL_CHECK(fcntl(fd, F_SETOWN_EX, &ex) == 0 && fcntl(fd, F_SETSIG, sig) == 0 &&
			 fcntl(fd, F_SETFL, fl | O_ASYNC) == 0,
		 "fd %d: owner: %s", fd, strerror(errno));
}

static void put(int fd)
{
	WL_CHECK(write(fd, "x", 1) == 1, "write fd %d: %s", fd, strerror(errno));
}

static void get(int fd)
{
	char c;

	WL_CHECK(read(fd, &c, 1) == 1, "read fd %d: %s", fd, strerror(errno));
}

static _Noreturn void child(int p, int ready, int go, int done, int rb, int rc)
{
	int own = open(path, O_RDONLY | O_CLOEXEC);

	WL_CHECK(own >= 0, "child: open: %s", strerror(errno));
	lock(p, F_SETLK, F_WRLCK, 100, 100);
	lock(p, F_SETLK, F_RDLCK, 1000, 100);
	lock(own, F_OFD_SETLK, F_RDLCK, 700, 100);
	close(ready);
	wl_wait_verify();
	get(go);
	take_signal(SIG_B, rb, "pipe B");
	take_signal(SIGIO, 0, "pipe C");
	lock(p, F_SETLK, F_UNLCK, 0, 0);
	lock(own, F_OFD_SETLK, F_UNLCK, 700, 100);
	put(done);
	get(go);
	_exit(0);
}

static int lease(void)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	WL_CHECK(fd >= 0 && write(fd, "lease", 5) == 5, "%s: %s", path, strerror(errno));
	close(fd);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	WL_CHECK(fd >= 0 && fcntl(fd, F_SETLEASE, F_RDLCK) == 0, "F_SETLEASE: %s", strerror(errno));
	wl_ready();
	wl_wait_verify();
	WL_CHECK(fcntl(fd, F_GETLEASE) == F_RDLCK, "the lease is gone");
	close(fd);
	unlink(path);
	return 0;
}

int main(int argc, char **argv)
{
	int p, o, s, a[2], b[2], c[2], d[2], ready[2], go[2], done[2], st;
	unsigned char buf[F_LEN];
	sigset_t set;

	wl_init("locks");
	pid_p = getpid();
	snprintf(path, sizeof(path), "%s/wl-locks.dat", wl_tmpdir());
	if (argc > 1 && !strcmp(argv[1], "lease"))
		return lease();
	p = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	WL_CHECK(p >= 0, "open %s: %s", path, strerror(errno));
	wl_fill(buf, F_LEN, 0x10c5);
	WL_CHECK(write(p, buf, F_LEN) == F_LEN && fsync(p) == 0, "%s: %s", path, strerror(errno));
	o = open(path, O_RDWR | O_CLOEXEC);
	s = open(path, O_RDONLY | O_CLOEXEC);
	WL_CHECK(o >= 0 && s >= 0, "open %s: %s", path, strerror(errno));
	lock(p, F_SETLK, F_WRLCK, 0, 100);
	lock(p, F_SETLK, F_RDLCK, 1000, 0);
	lock(o, F_OFD_SETLK, F_WRLCK, 500, 100);
	WL_CHECK(flock(s, LOCK_EX | LOCK_NB) == 0, "flock: %s", strerror(errno));

	sigemptyset(&set);
	sigaddset(&set, SIG_A);
	sigaddset(&set, SIG_B);
	sigaddset(&set, SIG_D);
	sigaddset(&set, SIGIO);
	WL_CHECK(sigprocmask(SIG_BLOCK, &set, NULL) == 0, "sigprocmask: %s", strerror(errno));
	WL_CHECK(!pipe2(a, O_CLOEXEC | O_NONBLOCK) && !pipe2(b, O_CLOEXEC | O_NONBLOCK) &&
			 !pipe2(c, O_CLOEXEC | O_NONBLOCK) && !pipe2(d, O_CLOEXEC | O_NONBLOCK) &&
			 !pipe2(ready, O_CLOEXEC) && !pipe2(go, O_CLOEXEC) &&
			 !pipe2(done, O_CLOEXEC),
		 "pipe: %s", strerror(errno));
	set_owner(a[0], F_OWNER_PID, pid_p, SIG_A);
	set_owner(d[0], F_OWNER_TID, gettid(), SIG_D);

	pid_k = fork();
	WL_CHECK(pid_k >= 0, "fork: %s", strerror(errno));
	if (pid_k == 0) {
		WL_CHECK(setpgid(0, 0) == 0, "child: setpgid: %s", strerror(errno));
		close(ready[0]), close(go[1]), close(done[0]);
		close(a[0]), close(a[1]), close(b[1]), close(c[0]), close(c[1]);
		close(d[0]), close(d[1]);
		child(p, ready[1], go[0], done[1], b[0], c[0]);
	}
	close(ready[1]), close(go[0]), close(done[1]);
	if (setpgid(pid_k, pid_k) < 0 && errno != EACCES)
		wl_fail("setpgid(%d): %s", (int)pid_k, strerror(errno));
	set_owner(b[0], F_OWNER_PID, pid_k, SIG_B);
	set_owner(c[0], F_OWNER_PGRP, pid_k, 0);
	WL_CHECK(read(ready[0], buf, 1) == 0, "sync: %s", strerror(errno));
	close(ready[0]);

	wl_ready();
	wl_wait_verify();
	check_owner(a[0], F_OWNER_PID, pid_p, SIG_A, "pipe A");
	check_owner(b[0], F_OWNER_PID, pid_k, SIG_B, "pipe B");
	check_owner(c[0], F_OWNER_PGRP, pid_k, 0, "pipe C");
	put(a[1]);
	take_signal(SIG_A, a[0], "pipe A");
	check_owner(d[0], F_OWNER_TID, pid_p, SIG_D, "pipe D");
	put(d[1]);
	take_signal(SIG_D, d[0], "pipe D");
	check_locks(0);
	put(b[1]);
	put(c[1]);
	lock(p, F_SETLK, F_UNLCK, 0, 0);
	lock(o, F_OFD_SETLK, F_UNLCK, 500, 100);
	WL_CHECK(flock(s, LOCK_UN) == 0, "flock(LOCK_UN): %s", strerror(errno));
	check_locks(1);
	put(go[1]);
	get(done[0]);
	check_locks(2);
	put(go[1]);
	WL_CHECK(waitpid(pid_k, &st, 0) == pid_k, "waitpid: %s", strerror(errno));
	WL_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child: status %#x", st);
	close(p);
	unlink(path);
	return 0;
}
