// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-nsjoin KIND [outside]: a namespace two processes of the tree are in
 * although neither inherits it (the second joined it with setns(), as runc
 * exec's processes join a container's), restored as one (plugins/ns/share.c).
 *
 * Child "maker" unshares a namespace of KIND and puts something in it:
 *   uts  hostname "crf-nsjoin"
 *   ipc  a SysV message queue (key 0x5eed77) holding one message
 *   net  lo up
 *   time monotonic and boottime offsets of +1000 s (it joins the namespace)
 *   mnt  a tmpfs on TMPDIR/nsjoin-mnt holding a file (everything private)
 * child "joiner" (another child of the workload) joins it with setns.  After
 * restore each checks from inside that it is in one namespace with the
 * other (same /proc/PID/ns link), not the workload's, and that what the
 * maker put there is there; the workload checks it is still in its own.
 *
 * external PATH (net): the maker joins the namespace of PATH (made by
 * `ip netns add`, outside the tree) instead of making one; after restore
 * both children must be in that very namespace (its inode), which the e2e
 * test (nsext.sh) gives crf restore with --inherit-fd.
 *
 * outside: the joiner is an orphan of a double fork (the harness's child,
 * outside the tree): the dump is refused naming it (a restore would leave
 * it in the old namespace); after the refusal the same checks hold.
 * outside-fd: the orphan only holds an fd of the namespace: refused too.
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/msg.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

#define MSG_KEY	 0x5eed77
#define MSG_TEXT "crf-nsjoin message"
#define HOST	 "crf-nsjoin"
#define FILE_TXT "crf-nsjoin file\n"

static const char *kind;
static char mnt_dir[512];
static int result[2];	     /* each child writes a byte once its checks passed */
static const char *ext_path; /* external PATH */

static void link_of(pid_t pid, const char *k, char *out, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, k);
	n = readlink(path, out, len - 1);
	if (n < 0)
		wl_fail("readlink %s: %m", path);
	out[n] = '\0';
}

static int nstype(void)
{
	if (!strcmp(kind, "uts"))
		return CLONE_NEWUTS;
	if (!strcmp(kind, "ipc"))
		return CLONE_NEWIPC;
	if (!strcmp(kind, "net"))
		return CLONE_NEWNET;
	if (!strcmp(kind, "time"))
		return CLONE_NEWTIME;
	if (!strcmp(kind, "mnt"))
		return CLONE_NEWNS;
	wl_fail("usage: wl-nsjoin uts|ipc|net|time|mnt [outside]");
}

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		wl_fail("write %s: %m", path);
	close(fd);
}

static void read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, len - 1);

	if (n < 0)
		wl_fail("read %s: %m", path);
	buf[n] = '\0';
	close(fd);
}

static bool lo_up(void)
{
	struct ifreq ifr = {0};
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int r;

	if (s < 0)
		wl_fail("socket: %m");
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	r = ioctl(s, SIOCGIFFLAGS, &ifr);
	if (r < 0)
		wl_fail("SIOCGIFFLAGS lo: %m");
	if (ifr.ifr_flags & IFF_UP) {
		close(s);
		return true;
	}
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		wl_fail("SIOCSIFFLAGS lo: %m");
	close(s);
	return false;
}

/* What the maker puts in the namespace, in it. */
static void fill(void)
{
	struct {
		long type;
		char text[64];
	} m = {1, MSG_TEXT};
	char path[600];
	int q;

	if (!strcmp(kind, "uts") && sethostname(HOST, strlen(HOST)) < 0)
		wl_fail("sethostname: %m");
	if (!strcmp(kind, "ipc")) {
		q = msgget(MSG_KEY, IPC_CREAT | 0600);
		if (q < 0 || msgsnd(q, &m, sizeof(MSG_TEXT), 0) < 0)
			wl_fail("msgget/msgsnd: %m");
	}
	if (!strcmp(kind, "net"))
		lo_up();
	if (!strcmp(kind, "time")) {
		write_file("/proc/self/timens_offsets", "monotonic 1000 0\nboottime 1000 0\n");
		snprintf(path, sizeof(path), "/proc/self/ns/time_for_children");
		q = open(path, O_RDONLY | O_CLOEXEC);
		if (q < 0 || setns(q, CLONE_NEWTIME) < 0)
			wl_fail("join its time namespace: %m");
		close(q);
	}
	if (!strcmp(kind, "mnt")) {
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mount("wl-nsjoin", mnt_dir, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k") < 0)
			wl_fail("mount tmpfs on %s: %m", mnt_dir);
		snprintf(path, sizeof(path), "%s/file", mnt_dir);
		write_file(path, FILE_TXT);
	}
}

/* After restore, in either child: what the maker put there is there. */
static void check_inside(const char *who)
{
	struct {
		long type;
		char text[64];
	} m;
	char buf[256], path[600];
	struct utsname u;
	int q;

	if (!strcmp(kind, "uts")) {
		if (uname(&u) < 0)
			wl_fail("uname: %m");
		WL_CHECK(!strcmp(u.nodename, HOST), "%s: hostname '%s', not '%s'", who, u.nodename,
			 HOST);
	}
	if (!strcmp(kind, "ipc")) {
		q = msgget(MSG_KEY, 0);
		WL_CHECK(q >= 0, "%s: no message queue of key %#x: %s", who, MSG_KEY,
			 strerror(errno));
		WL_CHECK(msgrcv(q, &m, sizeof(m.text), 0, IPC_NOWAIT | MSG_COPY) ==
					 sizeof(MSG_TEXT) &&
				 !strcmp(m.text, MSG_TEXT),
			 "%s: the message is not there: %s", who, strerror(errno));
	}
	if (!strcmp(kind, "net"))
		WL_CHECK(lo_up(), "%s: lo is down", who);
	if (!strcmp(kind, "time")) {
		long long mono = 0, boot = 0, ns1 = -1, ns2 = -1;
		char n1[16], n2[16];

		read_file("/proc/self/timens_offsets", buf, sizeof(buf));
		WL_CHECK(sscanf(buf, "%15s %lld %lld %15s %lld %lld", n1, &mono, &ns1, n2, &boot,
				&ns2) == 6 &&
				 mono == 1000 && boot == 1000 && !ns1 && !ns2,
			 "%s: offsets '%s'", who, buf);
	}
	if (!strcmp(kind, "mnt")) {
		snprintf(path, sizeof(path), "%s/file", mnt_dir);
		read_file(path, buf, sizeof(buf));
		WL_CHECK(!strcmp(buf, FILE_TXT), "%s: %s reads '%s'", who, path, buf);
	}
}

/* The verify request, on CLOCK_REALTIME: a time namespace moves the monotonic clock. */
static void wait_verify(void)
{
	const char *path = getenv("CRF_TEST_VERIFY"), *t = getenv("CRF_TEST_TIMEOUT");
	time_t end = time(NULL) + (t && atoi(t) > 0 ? atoi(t) : 3600);

	while (!path || access(path, F_OK) < 0) {
		if (time(NULL) > end)
			wl_fail("no verify request within CRF_TEST_TIMEOUT; giving up");
		usleep(10000);
	}
}

/* Each child: wait, then check it is in @other's namespace and the contents. */
static _Noreturn void child_wait_check(const char *who, int peer_pipe)
{
	char mine[96], its[96];
	pid_t other;

	if (read(peer_pipe, &other, sizeof(other)) != sizeof(other))
		_exit(2);
	close(peer_pipe);
	wait_verify();
	link_of(getpid(), kind, mine, sizeof(mine));
	link_of(other, kind, its, sizeof(its));
	WL_CHECK(!strcmp(mine, its), "%s is in %s, the other (pid %d) in %s", who, mine, (int)other,
		 its);
	if (ext_path) {
		struct stat st;

		if (stat(ext_path, &st) < 0)
			wl_fail("stat %s: %m", ext_path);
		snprintf(its, sizeof(its), "%s:[%lu]", kind, (unsigned long)st.st_ino);
		WL_CHECK(!strcmp(mine, its), "%s is in %s, not %s's %s", who, mine, ext_path, its);
	}
	check_inside(who);
	/* Alive until the workload has both answers: the other reads this one's link. */
	if (write(result[1], "k", 1) != 1)
		_exit(3);
	for (;;)
		pause();
}

static pid_t maker(int ready, int *peer)
{
	int p[2];
	pid_t pid;

	if (pipe(p) < 0)
		wl_fail("pipe: %m");
	pid = fork();
	if (pid < 0)
		wl_fail("fork: %m");
	if (pid == 0) {
		close(p[1]);
		if (ext_path) {
			int fd = open(ext_path, O_RDONLY | O_CLOEXEC);

			if (fd < 0 || setns(fd, nstype()) < 0)
				wl_fail("join %s: %m", ext_path);
			close(fd);
		} else if (unshare(nstype()) < 0) {
			wl_fail("unshare %s: %m", kind);
		}
		fill();
		if (write(ready, "r", 1) != 1)
			_exit(1);
		close(ready);
		child_wait_check("maker", p[0]);
	}
	close(p[0]);
	*peer = p[1];
	return pid;
}

static void join(pid_t of)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)of, kind);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, nstype()) < 0)
		wl_fail("join %s: %m", path);
	close(fd);
}

static pid_t joiner(pid_t of, int *peer)
{
	int p[2], ready[2];
	pid_t pid;
	char c;

	if (pipe(p) < 0 || pipe(ready) < 0)
		wl_fail("pipe: %m");
	pid = fork();
	if (pid < 0)
		wl_fail("fork: %m");
	if (pid == 0) {
		close(p[1]);
		close(ready[0]);
		join(of);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		close(ready[1]);
		child_wait_check("joiner", p[0]);
	}
	close(p[0]);
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1)
		wl_fail("the joiner failed");
	close(ready[0]);
	*peer = p[1];
	return pid;
}

/* An orphan (the harness's child by now) in @of's namespace (@fd_only: with an fd of it). */
static pid_t outsider(pid_t of, bool fd_only)
{
	int p[2];
	pid_t mid, got = 0;

	if (pipe(p) < 0)
		wl_fail("pipe: %m");
	mid = fork();
	if (mid < 0)
		wl_fail("fork: %m");
	if (mid == 0) {
		pid_t g = fork();

		if (g == 0) {
			char path[64];

			/* Nothing of the tree's but the namespace: its pipes are the tree's. */
			for (int fd = 3; fd < 1024; fd++)
				if (fd != p[1])
					close(fd);
			snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)of, kind);
			if (!fd_only)
				join(of);
			else if (open(path, O_RDONLY) < 0)
				wl_fail("open %s: %m", path);
			g = getpid();
			if (write(p[1], &g, sizeof(g)) != sizeof(g))
				_exit(1);
			close(p[1]);
			for (;;)
				pause();
		}
		_exit(g < 0);
	}
	close(p[1]);
	WL_CHECK(waitpid(mid, NULL, 0) == mid, "waitpid: %m");
	if (read(p[0], &got, sizeof(got)) != sizeof(got))
		wl_fail("the outsider did not start");
	close(p[0]);
	return got;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	WL_CHECK(waitpid(pid, NULL, 0) == pid, "waitpid: %m");
}

int main(int argc, char **argv)
{
	bool fd_only = argc == 3 && !strcmp(argv[2], "outside-fd");
	bool outside = argc == 3 && (!strcmp(argv[2], "outside") || fd_only);
	char start[96], now[96], a[96], b[96];
	int ready[2], pm, pj = -1;
	pid_t m, j = 0, o = 0;
	char c;

	wl_init("nsjoin");
	if (argc == 4 && !strcmp(argv[2], "external"))
		ext_path = argv[3];
	else if (argc < 2 || argc > 3 || (argc == 3 && !outside))
		wl_fail("usage: wl-nsjoin uts|ipc|net|time|mnt [outside | outside-fd | external "
			"PATH]");
	kind = argv[1];
	nstype();
	snprintf(mnt_dir, sizeof(mnt_dir), "%s/nsjoin-mnt", wl_tmpdir());
	if (!strcmp(kind, "mnt") && mkdir(mnt_dir, 0755) < 0 && errno != EEXIST)
		wl_fail("mkdir %s: %m", mnt_dir);
	link_of(getpid(), kind, start, sizeof(start));
	if (pipe(result) < 0 || pipe(ready) < 0)
		wl_fail("pipe: %m");
	m = maker(ready[1], &pm);
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1)
		wl_fail("the maker failed");
	close(ready[0]);
	if (outside)
		o = outsider(m, fd_only);
	else
		j = joiner(m, &pj);
	link_of(m, kind, a, sizeof(a));
	link_of(fd_only ? m : outside ? o : j, kind, b, sizeof(b));
	WL_CHECK(!strcmp(a, b) && strcmp(a, start), "set up: %s, %s, the workload's %s", a, b,
		 start);
	if (outside) {
		pj = pm;
		j = fd_only ? m : o;
	} else if (write(pj, &m, sizeof(m)) != sizeof(m)) {
		wl_fail("write: %m");
	}
	if (write(pm, &j, sizeof(j)) != sizeof(j))
		wl_fail("write: %m");
	close(pm);
	if (!outside)
		close(pj);
	wl_ready();
	wl_wait_verify();
	link_of(getpid(), kind, now, sizeof(now));
	WL_CHECK(!strcmp(now, start), "the workload is in %s, not %s where it was", now, start);
	close(result[1]);
	/* A child that failed said why and exited; the other waits: not forever. */
	alarm(20);
	for (int got = 0, want = outside ? 1 : 2; got < want;)
		WL_CHECK(read(result[0], &c, 1) == 1 && ++got, "a child's checks failed (above)");
	alarm(0);
	reap(m);
	if (outside)
		kill(o, SIGKILL);
	else
		reap(j);
	return 0;
}
