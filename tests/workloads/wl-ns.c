// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-ns KIND: a process in a namespace of its own, holding state there,
 * which crf cannot restore yet and must refuse to dump (by kind and inode),
 * leaving the process as it was:
 *
 *   net            unshare(CLONE_NEWNET), its loopback link brought up
 *   uts            unshare(CLONE_NEWUTS), a hostname of its own
 *   mnt            unshare(CLONE_NEWNS), a private tmpfs holding a file it
 *                  keeps open
 *   ipc            unshare(CLONE_NEWIPC), a System V message queue with a
 *                  message in it
 *   cgroup         unshare(CLONE_NEWCGROUP)
 *   user           unshare(CLONE_NEWUSER), uid and gid maps 0 -> 0
 *   time           unshare(CLONE_NEWTIME), a monotonic offset, entered
 *   time-children  unshare(CLONE_NEWTIME) only: children go there
 *   pid-children   unshare(CLONE_NEWPID) only: the next child is PID 1
 *
 * After the refused dump it checks that it is still in the same namespaces
 * (the inodes of /proc/self/ns/) and that the state is intact: the link is
 * up, the hostname is its own, the file reads back, the message is queued,
 * the maps and offsets are the same, a child forked now lands in the
 * namespace made for it.
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/msg.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#define TMPFS_MAGIC_NR 0x01021994
#define TIME_OFFSET_S  864000 /* ten days */

static const char payload[] = "kept on a private tmpfs";
static char hostname[64], mnt_dir[4096], offsets[256], uid_map[256];
static int file_fd = -1, queue = -1;

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		wl_fail("write %s: %m", path);
	close(fd);
}

static void link_of(const char *name, char *out, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/ns/%s", name);
	n = readlink(path, out, len - 1);
	if (n < 0)
		wl_fail("readlink %s: %m", path);
	out[n] = '\0';
}

static int lo_flags(void)
{
	struct ifreq ifr = {0};
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		wl_fail("SIOCGIFFLAGS lo: %m");
	close(s);
	return ifr.ifr_flags;
}

static void setup_net(void)
{
	struct ifreq ifr = {0};
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	ifr.ifr_flags = (short)(lo_flags() | IFF_UP);
	if (s < 0 || ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		wl_fail("SIOCSIFFLAGS lo: %m");
	close(s);
}

static void check_net(void)
{
	WL_CHECK(lo_flags() & IFF_UP, "the loopback link of the net namespace is down");
}

static void setup_uts(void)
{
	snprintf(hostname, sizeof(hostname), "crf-wl-ns-%d", (int)getpid());
	if (sethostname(hostname, strlen(hostname)) < 0)
		wl_fail("sethostname: %m");
}

static void check_uts(void)
{
	char now[64] = "";

	if (gethostname(now, sizeof(now)) < 0)
		wl_fail("gethostname: %m");
	WL_CHECK(!strcmp(now, hostname), "hostname is '%s', not '%s'", now, hostname);
}

static void setup_mnt(void)
{
	char path[4200];

	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		wl_fail("make / private: %m");
	snprintf(mnt_dir, sizeof(mnt_dir), "%s/ns-tmpfs", wl_tmpdir());
	if (mkdir(mnt_dir, 0700) < 0 || mount("crf-wl-ns", mnt_dir, "tmpfs", 0, "size=1m") < 0)
		wl_fail("tmpfs on %s: %m", mnt_dir);
	snprintf(path, sizeof(path), "%s/file", mnt_dir);
	file_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (file_fd < 0 || pwrite(file_fd, payload, sizeof(payload), 0) != sizeof(payload))
		wl_fail("%s: %m", path);
}

static void check_mnt(void)
{
	char back[sizeof(payload)] = "";
	struct statfs sf;

	WL_CHECK(statfs(mnt_dir, &sf) == 0 && sf.f_type == TMPFS_MAGIC_NR,
		 "%s is no longer the private tmpfs", mnt_dir);
	WL_CHECK(pread(file_fd, back, sizeof(back), 0) == sizeof(back) &&
			 !memcmp(back, payload, sizeof(back)),
		 "the file on the tmpfs reads back '%.*s'", (int)sizeof(back), back);
}

struct msg {
	long type;
	char text[32];
};

static void setup_ipc(void)
{
	struct msg m = {.type = 7};

	snprintf(m.text, sizeof(m.text), "queued in the ipc namespace");
	queue = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
	if (queue < 0 || msgsnd(queue, &m, sizeof(m.text), 0) < 0)
		wl_fail("message queue: %m");
}

static void check_ipc(void)
{
	struct msg m = {0};

	WL_CHECK(msgrcv(queue, &m, sizeof(m.text), 7, IPC_NOWAIT) == sizeof(m.text) &&
			 !strcmp(m.text, "queued in the ipc namespace"),
		 "the queued message is gone: %m");
	msgctl(queue, IPC_RMID, NULL);
}

static void setup_user(void)
{
	write_file("/proc/self/setgroups", "deny");
	write_file("/proc/self/uid_map", "0 0 1");
	write_file("/proc/self/gid_map", "0 0 1");
	if (wl_read_file("/proc/self/uid_map", uid_map, sizeof(uid_map)) < 0)
		wl_fail("read uid_map: %m");
}

static void check_user(void)
{
	char now[256];

	WL_CHECK(wl_read_file("/proc/self/uid_map", now, sizeof(now)) >= 0 && !strcmp(now, uid_map),
		 "uid_map changed: '%s'", now);
	WL_CHECK(getuid() == 0, "uid %d inside the namespace", (int)getuid());
}

static void set_time_offset(void)
{
	char text[64];

	snprintf(text, sizeof(text), "monotonic %d 0", TIME_OFFSET_S);
	write_file("/proc/self/timens_offsets", text);
	if (wl_read_file("/proc/self/timens_offsets", offsets, sizeof(offsets)) < 0)
		wl_fail("read timens_offsets: %m");
}

static void setup_time(void)
{
	uint64_t before = wl_now_ns(), after;
	int fd;

	set_time_offset();
	fd = open("/proc/self/ns/time_for_children", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWTIME) < 0)
		wl_fail("enter the new time namespace: %m");
	close(fd);
	after = wl_now_ns();
	WL_CHECK(after - before >= TIME_OFFSET_S * 1000000000ULL, "the offset did not apply");
}

static void check_time(void)
{
	char now[256];

	WL_CHECK(wl_read_file("/proc/self/timens_offsets", now, sizeof(now)) >= 0 &&
			 !strcmp(now, offsets),
		 "timens_offsets changed: '%s'", now);
}

/* Fork a child that runs @fn and exits with its verdict. */
static void in_child(int (*fn)(void), const char *what)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		wl_fail("fork: %m");
	if (pid == 0)
		_exit(fn());
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		wl_fail("a child forked now is not %s", what);
}

static int child_time(void)
{
	char now[256];

	return !(wl_read_file("/proc/self/timens_offsets", now, sizeof(now)) >= 0 &&
		 !strcmp(now, offsets));
}

static void check_time_children(void)
{
	in_child(child_time, "in the time namespace made for it (other offsets)");
}

static int child_pid(void)
{
	return getpid() != 1;
}

static void check_pid_children(void)
{
	in_child(child_pid, "PID 1 of the pid namespace made for it");
}

static void nothing(void)
{
}

static const struct ns_case {
	const char *arg;
	int flag;
	/* The /proc/self/ns/ entry that changes; none for pid_for_children,
	 * which the kernel shows only once the namespace has its init. */
	const char *link;
	void (*setup)(void), (*check)(void);
} cases[] = {
	{"net", CLONE_NEWNET, "net", setup_net, check_net},
	{"uts", CLONE_NEWUTS, "uts", setup_uts, check_uts},
	{"mnt", CLONE_NEWNS, "mnt", setup_mnt, check_mnt},
	{"ipc", CLONE_NEWIPC, "ipc", setup_ipc, check_ipc},
	{"cgroup", CLONE_NEWCGROUP, "cgroup", nothing, nothing},
	{"user", CLONE_NEWUSER, "user", setup_user, check_user},
	{"time", CLONE_NEWTIME, "time", setup_time, check_time},
	{"time-children", CLONE_NEWTIME, "time_for_children", set_time_offset, check_time_children},
	{"pid-children", CLONE_NEWPID, NULL, nothing, check_pid_children},
};

int main(int argc, char **argv)
{
	const struct ns_case *c = NULL;
	char before[96], after[96];

	wl_init("ns");
	for (size_t i = 0; argc > 1 && i < sizeof(cases) / sizeof(cases[0]); i++)
		if (!strcmp(argv[1], cases[i].arg))
			c = &cases[i];
	if (!c)
		wl_fail("usage: wl-ns net|uts|mnt|ipc|cgroup|user|time|time-children|pid-children");
	if (unshare(c->flag) < 0)
		wl_fail("unshare(%s): %m", c->arg);
	c->setup();
	/* A time namespace moved CLOCK_MONOTONIC, which the timeout counts in. */
	wl_init("ns");
	if (c->link) {
		link_of(c->link, before, sizeof(before));
		wl_note("in %s", before);
	}
	wl_ready();
	wl_wait_verify();
	wl_check_untraced();
	if (c->link) {
		link_of(c->link, after, sizeof(after));
		WL_CHECK(!strcmp(before, after), "now in %s, not %s", after, before);
	}
	c->check();
	wl_note("%s namespace and its state intact", c->arg);
	return 0;
}
