// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-cwd [MODE]: a process's cwd and root come back where they were, or
 * the dump is refused while the tree runs on.
 *
 *   (none)        restored: the parent's cwd is its own /proc directory
 *                 (chdir("/proc/self")), one child's the parent's
 *                 /proc/PID/fdinfo, and another child is chrooted into a
 *                 directory of the test with its cwd in a subdirectory of
 *                 it; after restore each finds its cwd (and root) as they
 *                 were, and its /proc directory is its own again
 *   deleted       refused: the parent's cwd is a directory it removed
 *   deleted-root  refused: a child's root is a directory the parent removed
 *   proc-outside  refused: the parent's cwd is /proc/1, a process outside
 *                 the tree (after a restore PID 1 could be another one)
 * After a refusal each process checks that its cwd and root did not move.
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void read_link(const char *path, char *buf, size_t len)
{
	ssize_t n = readlink(path, buf, len - 1);

	WL_CHECK(n > 0, "readlink %s: %s", path, strerror(errno));
	buf[n] = '\0';
}

static void check_cwd(const char *want, const char *what)
{
	char now[4096];

	read_link("/proc/self/cwd", now, sizeof(now));
	WL_CHECK(!strcmp(now, want), "%s: cwd is %s, was %s", what, now, want);
}

/* "Pid:" of the status file in the cwd (a /proc/PID directory) is @pid. */
static void check_proc_cwd(pid_t pid, const char *what)
{
	char text[4096], want[64];

	WL_CHECK(wl_read_file("status", text, sizeof(text)) > 0, "%s: ./status: %s", what,
		 strerror(errno));
	snprintf(want, sizeof(want), "\nPid:\t%d\n", (int)pid);
	WL_CHECK(strstr(text, want), "%s: ./status is not pid %d's", what, (int)pid);
}

static void mkdir_p(const char *path)
{
	WL_CHECK(mkdir(path, 0755) == 0 || errno == EEXIST, "mkdir %s: %s", path, strerror(errno));
}

static void ino_of(const char *path, struct stat *st)
{
	WL_CHECK(stat(path, st) == 0, "stat %s: %s", path, strerror(errno));
}

/*
 * Chrooted into @jail, its cwd @jail/sub (or @jail itself): it waits for a
 * byte on @go (no path of the test reaches it there), then checks.
 */
static _Noreturn void jailed(const char *jail, bool sub, int ready_wr, int go)
{
	struct stat root, cwd, now;
	char buf[4096], byte;

	WL_CHECK(chdir(jail) == 0 && (!sub || chdir("sub") == 0), "chdir %s: %s", jail,
		 strerror(errno));
	WL_CHECK(chroot(jail) == 0, "chroot %s: %s", jail, strerror(errno));
	ino_of("/", &root);
	ino_of(".", &cwd);
	close(ready_wr);
	WL_CHECK(read(go, &byte, 1) == 1, "jailed child: no word from the parent");
	ino_of("/", &now);
	WL_CHECK(now.st_ino == root.st_ino && now.st_dev == root.st_dev,
		 "jailed child: its root moved (inode %lu, was %lu)", (unsigned long)now.st_ino,
		 (unsigned long)root.st_ino);
	ino_of(".", &now);
	WL_CHECK(now.st_ino == cwd.st_ino && now.st_dev == cwd.st_dev,
		 "jailed child: its cwd moved (inode %lu, was %lu)", (unsigned long)now.st_ino,
		 (unsigned long)cwd.st_ino);
	if (sub) {
		WL_CHECK(getcwd(buf, sizeof(buf)) && !strcmp(buf, "/sub"),
			 "jailed child: getcwd says %s, not /sub", buf);
		WL_CHECK(access("/marker", F_OK) == 0, "jailed child: /marker: %s",
			 strerror(errno));
	}
	_exit(0);
}

/* A child whose cwd is the parent's /proc/PID/fdinfo. */
static _Noreturn void in_parent_proc(pid_t parent, int ready_wr)
{
	char path[64], cwd[4096];

	snprintf(path, sizeof(path), "/proc/%d/fdinfo", (int)parent);
	WL_CHECK(chdir(path) == 0, "chdir %s: %s", path, strerror(errno));
	read_link("/proc/self/cwd", cwd, sizeof(cwd));
	close(ready_wr);
	wl_wait_verify();
	check_cwd(cwd, "child in the parent's /proc");
	WL_CHECK(access("0", F_OK) == 0, "child: ./0 (the parent's fdinfo of fd 0): %s",
		 strerror(errno));
	_exit(0);
}

static pid_t spawn(int ready_wr, int go, const char *jail, bool sub, int kind)
{
	pid_t parent = getpid(), pid = fork();

	WL_CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid)
		return pid;
	if (kind)
		in_parent_proc(parent, ready_wr);
	jailed(jail, sub, ready_wr, go);
}

static void reap(pid_t pid, const char *what)
{
	int status;

	WL_CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
	WL_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: status %#x", what, status);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	char jail[2048], path[4096], cwd[4096], byte;
	int sync[2], go[2], fd;
	pid_t jailed_pid, proc_pid = 0;

	wl_init("cwd");
	snprintf(jail, sizeof(jail), "%s/wl-cwd.jail", wl_tmpdir());
	mkdir_p(jail);
	snprintf(path, sizeof(path), "%s/sub", jail);
	mkdir_p(path);
	snprintf(path, sizeof(path), "%s/marker", jail);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	WL_CHECK(fd >= 0, "%s: %s", path, strerror(errno));
	close(fd);
	WL_CHECK(pipe2(sync, O_CLOEXEC) == 0 && pipe2(go, O_CLOEXEC) == 0, "pipe: %s",
		 strerror(errno));
	if (!strcmp(mode, "deleted-root")) {
		snprintf(jail, sizeof(jail), "%s/wl-cwd.gone-root", wl_tmpdir());
		mkdir_p(jail);
	}
	jailed_pid = spawn(sync[1], go[0], jail, !mode[0], 0);
	if (!mode[0])
		proc_pid = spawn(sync[1], go[0], jail, false, 1);
	close(sync[1]);
	close(go[0]);
	WL_CHECK(read(sync[0], &byte, 1) == 0, "sync: %s", strerror(errno));
	close(sync[0]);
	if (!strcmp(mode, "deleted-root"))
		WL_CHECK(rmdir(jail) == 0, "rmdir %s: %s", jail, strerror(errno));

	if (!strcmp(mode, "deleted")) {
		snprintf(path, sizeof(path), "%s/wl-cwd.gone", wl_tmpdir());
		mkdir_p(path);
		WL_CHECK(chdir(path) == 0 && rmdir(path) == 0, "%s: %s", path, strerror(errno));
	} else if (!strcmp(mode, "proc-outside")) {
		WL_CHECK(chdir("/proc/1") == 0, "chdir /proc/1: %s", strerror(errno));
	} else if (!mode[0]) {
		WL_CHECK(chdir("/proc/self") == 0, "chdir /proc/self: %s", strerror(errno));
	}
	read_link("/proc/self/cwd", cwd, sizeof(cwd));
	wl_ready();
	wl_wait_verify();
	check_cwd(cwd, "parent");
	if (!mode[0])
		check_proc_cwd(getpid(), "parent");
	WL_CHECK(write(go[1], "g", 1) == 1, "telling the jailed child: %s", strerror(errno));
	reap(jailed_pid, "jailed child");
	if (proc_pid)
		reap(proc_pid, "child in the parent's /proc");
	return 0;
}
