// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-clonefiles [MODE]: processes that share one fd table
 * (clone(CLONE_FILES) without CLONE_THREAD) share one again after restore.
 *
 *   (none)   restored: the parent P made child C with CLONE_FILES, C made
 *            its own child G the same way, and P forked N (a copy of the
 *            table, its own).  After restore kcmp(KCMP_FILES) finds P, C
 *            and G on one table and N on another; an fd opened before the
 *            dump by C is P's too; after restore P, C and G each open a
 *            file and the others find it at that number, while N's new
 *            file is not P's, and C closes an fd P had opened: gone for P.
 *            P's table has fd 1500 too, above where crf puts its own.
 *   sibling  refused: P forked A, which made B with
 *            CLONE_FILES | CLONE_PARENT (a sibling of A sharing A's
 *            table): both would be forked by P, which does not share it
 *   outside  refused: P made O with CLONE_FILES | CLONE_PARENT: O is the
 *            harness's child, outside the tree, and shares P's table
 *   fs       refused: P made a child with CLONE_FS (one cwd, root and
 *            umask for both), which crf does not restore yet
 * After a refusal the processes check their sharing did not change.
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/kcmp.h>

#define STACK_SIZE (256 * 1024)
#define HIGH_FD	   1500

/* One-way channels as pipes: in a shared table, closing an end closes it for all. */
struct chan {
	int to_c[2], from_c[2], from_g[2], from_n[2];
	int done[2]; /* one byte for each of C, G and N: the parent's checks are over */
};

static struct chan ch;
static char dir[2048];
static int pre_p, pre_c;

static void put(int fd, int v)
{
	WL_CHECK(write(fd, &v, sizeof(v)) == sizeof(v), "write: %s", strerror(errno));
}

static int get(int fd)
{
	int v;

	WL_CHECK(read(fd, &v, sizeof(v)) == sizeof(v), "read: %s", strerror(errno));
	return v;
}

/* Until the parent has checked everything: a process that exited has no table. */
static void get_byte(void)
{
	char c;

	WL_CHECK(read(ch.done[0], &c, 1) == 1, "the parent is gone before its checks were over");
}

static bool same_table(pid_t a, pid_t b)
{
	long r = syscall(SYS_kcmp, a, b, KCMP_FILES, 0, 0);

	WL_CHECK(r >= 0, "kcmp(KCMP_FILES, %d, %d): %s", (int)a, (int)b, strerror(errno));
	return r == 0;
}

static int open_file(const char *name)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/wl-clonefiles.%s", dir, name);
	fd = open(path, O_RDWR | O_CREAT, 0644);
	WL_CHECK(fd >= 0, "open %s: %s", path, strerror(errno));
	return fd;
}

/* fd @fd of this process is the file @name (same inode). */
static bool is_file(int fd, const char *name)
{
	char path[4096];
	struct stat a, b;

	snprintf(path, sizeof(path), "%s/wl-clonefiles.%s", dir, name);
	return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_ino == b.st_ino &&
	       a.st_dev == b.st_dev;
}

static pid_t clone_with(int (*fn)(void *), unsigned long flags)
{
	char *stack = malloc(STACK_SIZE);
	pid_t pid;

	WL_CHECK(stack, "malloc");
	pid = clone(fn, stack + STACK_SIZE, (int)flags, NULL);
	WL_CHECK(pid > 0, "clone: %s", strerror(errno));
	return pid;
}

static int grandchild(void *arg)
{
	int mine;

	(void)arg;
	put(ch.from_g[1], (int)getpid());
	wl_wait_verify();
	mine = open_file("after-g");
	put(ch.from_g[1], mine);
	get_byte();
	_exit(0);
}

static int child(void *arg)
{
	pid_t g = clone_with(grandchild, CLONE_FILES | SIGCHLD);
	int status, p_fd, mine;

	(void)arg;
	pre_c = open_file("pre-c");
	put(ch.from_c[1], pre_c);
	wl_wait_verify();
	WL_CHECK(same_table(getpid(), getppid()), "child: not on its parent's fd table");
	WL_CHECK(is_file(HIGH_FD, "pre-p"), "child: fd %d is not its parent's file", HIGH_FD);
	p_fd = get(ch.to_c[0]);
	WL_CHECK(is_file(p_fd, "after-p"), "child: fd %d is not the file its parent opened", p_fd);
	mine = open_file("after-c");
	WL_CHECK(close(pre_p) == 0, "child: close of its parent's fd %d: %s", pre_p,
		 strerror(errno));
	put(ch.from_c[1], mine);
	get_byte();
	WL_CHECK(waitpid(g, &status, 0) == g && WIFEXITED(status) && !WEXITSTATUS(status),
		 "grandchild: status %#x", status);
	_exit(0);
}

static _Noreturn void forked(void)
{
	int mine;

	wl_wait_verify();
	mine = open_file("after-n");
	put(ch.from_n[1], mine);
	get_byte();
	_exit(0);
}

/* An fd above 1000, where crf's restorers put their fds: theirs must go above. */
static void high_fd(void)
{
	struct rlimit rl;

	WL_CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0, "getrlimit: %s", strerror(errno));
	if (rl.rlim_cur <= HIGH_FD && rl.rlim_max > HIGH_FD) {
		rl.rlim_cur = HIGH_FD + 1;
		WL_CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0, "setrlimit: %s", strerror(errno));
	}
	WL_CHECK(dup2(pre_p, HIGH_FD) == HIGH_FD, "dup2 to %d: %s", HIGH_FD, strerror(errno));
}

static void reap(pid_t pid, const char *what)
{
	int status;

	WL_CHECK(waitpid(pid, &status, 0) == pid, "waitpid %s: %s", what, strerror(errno));
	WL_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: status %#x", what, status);
}

static void verify(pid_t c, pid_t g, pid_t n)
{
	int p_fd, c_fd, g_fd, n_fd;

	WL_CHECK(same_table(getpid(), c), "the child %d is not on our fd table", (int)c);
	WL_CHECK(same_table(getpid(), g), "the grandchild %d is not on our fd table", (int)g);
	WL_CHECK(!same_table(getpid(), n), "the forked child %d is on our fd table", (int)n);
	WL_CHECK(is_file(pre_c, "pre-c"), "fd %d the child opened before the dump: not here",
		 pre_c);
	p_fd = open_file("after-p");
	put(ch.to_c[1], p_fd);
	c_fd = get(ch.from_c[0]);
	g_fd = get(ch.from_g[0]);
	n_fd = get(ch.from_n[0]);
	WL_CHECK(is_file(c_fd, "after-c"), "fd %d the child opened after restore: not here", c_fd);
	WL_CHECK(is_file(g_fd, "after-g"), "fd %d the grandchild opened: not here", g_fd);
	WL_CHECK(!is_file(n_fd, "after-n"), "fd %d the forked child opened is here", n_fd);
	/* Its number may be the grandchild's file now. */
	WL_CHECK(!is_file(pre_p, "pre-p"), "fd %d the child closed is still open here", pre_p);
	WL_CHECK(same_table(getpid(), c) && same_table(getpid(), g) && !same_table(getpid(), n),
		 "the tables moved while the children worked");
	WL_CHECK(write(ch.done[1], "ddd", 3) == 3, "done: %s", strerror(errno));
	reap(c, "child");
	reap(n, "forked child");
}

/* B or O: on another's table until told to go. */
static int sharer_b(void *arg)
{
	(void)arg;
	wl_wait_verify();
	get(ch.to_c[0]);
	_exit(0);
}

/* A: forks its sibling B on its table, then both wait. */
static _Noreturn void sibling_a(void)
{
	pid_t b = clone_with(sharer_b, CLONE_FILES | CLONE_PARENT);

	put(ch.from_c[1], (int)b);
	wl_wait_verify();
	WL_CHECK(same_table(getpid(), b), "A and its sibling B no longer share their table");
	_exit(0);
}

static void refused(const char *mode)
{
	pid_t a = 0, other;
	int status;

	if (!strcmp(mode, "sibling")) {
		a = fork();
		WL_CHECK(a >= 0, "fork: %s", strerror(errno));
		if (!a)
			sibling_a();
		other = (pid_t)get(ch.from_c[0]);
	} else if (!strcmp(mode, "fs")) {
		other = clone_with(sharer_b, CLONE_FS | SIGCHLD);
	} else {
		other = clone_with(sharer_b, CLONE_FILES | CLONE_PARENT);
	}
	wl_ready();
	wl_wait_verify();
	if (!strcmp(mode, "fs")) {
		WL_CHECK(syscall(SYS_kcmp, getpid(), other, KCMP_FS, 0, 0) == 0,
			 "no longer one cwd, root and umask with pid %d", (int)other);
		put(ch.to_c[1], 1);
		reap(other, "the child sharing our cwd");
		return;
	}
	if (!a) {
		WL_CHECK(same_table(getpid(), other), "no longer on one table with pid %d",
			 (int)other);
		put(ch.to_c[1], 1);
		return;
	}
	reap(a, "A");
	put(ch.to_c[1], 1);
	/* B is our child too (CLONE_PARENT). */
	WL_CHECK(waitpid(other, &status, 0) == other && WIFEXITED(status) && !WEXITSTATUS(status),
		 "B: status %#x", status);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	pid_t c, g, n;

	wl_init("clonefiles");
	snprintf(dir, sizeof(dir), "%s", wl_tmpdir());
	WL_CHECK(pipe(ch.to_c) == 0 && pipe(ch.from_c) == 0 && pipe(ch.from_g) == 0 &&
			 pipe(ch.from_n) == 0 && pipe(ch.done) == 0,
		 "pipe: %s", strerror(errno));
	if (mode[0]) {
		refused(mode);
		return 0;
	}
	pre_p = open_file("pre-p");
	high_fd();
	c = clone_with(child, CLONE_FILES | SIGCHLD);
	pre_c = get(ch.from_c[0]);
	g = (pid_t)get(ch.from_g[0]);
	n = fork();
	WL_CHECK(n >= 0, "fork: %s", strerror(errno));
	if (!n)
		forked();
	WL_CHECK(is_file(pre_c, "pre-c"), "fd %d the child opened: not here", pre_c);
	wl_ready();
	wl_wait_verify();
	verify(c, g, n);
	return 0;
}
