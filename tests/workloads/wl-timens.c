// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-timens MODE [moved]: time namespaces of the tree's own, restored by the
 * ns plugin.  A child "outside" is forked first and stays in the time
 * namespace the workload started in.  Then, by MODE:
 *
 *   enter     unshare(CLONE_NEWTIME), offsets set (monotonic +10 days and
 *             a few ns, boottime +1 day), joined by setns; a child "inside"
 *   children  the same namespace, not joined: only the children go there
 *             (the child "inside"); the workload stays where it started
 *   both      "enter", then a second unshare with other offsets (+20 days)
 *             for the children only: its time and time_for_children differ;
 *             a child "middle", forked between the two, is in the first
 *   owned     a child unshares a user and a time namespace, the workload
 *             joins the time one (owned by the child's user namespace) and
 *             the child exits: the dump is refused (the restored one would
 *             be owned by crf's), and the workload still in it after that
 *
 * After the restore: each process in the namespaces it was in, relative to
 * one another (the workload's time and time_for_children, inside's time,
 * outside's time the one the workload started in), each namespace with the
 * offsets it had, and CLOCK_MONOTONIC and CLOCK_BOOTTIME, read in the
 * workload and in inside, no lower than they were just before the dump.
 * With "moved" the e2e test changed the image as if the dump had been on
 * another boot with the namespaces' clocks 100 days ahead: the offsets must
 * then be raised (not lowered) so the clocks are at least that much ahead.
 */
#include "wl.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#define DAY_S	86400LL
#define NSEC	1000000000LL
#define MOVED_S (100 * DAY_S)

static int64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts) < 0)
		wl_fail("clock_gettime: %m");
	return ts.tv_sec * NSEC + ts.tv_nsec;
}

static void link_of(pid_t pid, const char *kind, char *out, size_t len)
{
	char path[96];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, kind);
	n = readlink(path, out, len - 1);
	if (n < 0)
		wl_fail("readlink %s: %m", path);
	out[n] = '\0';
}

static void offsets_of(pid_t pid, char *out, size_t len)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/timens_offsets", (int)pid);
	if (wl_read_file(path, out, len) < 0)
		wl_fail("read %s: %m", path);
}

/* The monotonic offset in a timens_offsets text, in ns. */
static int64_t mono_offset(const char *text)
{
	long long s;
	long ns;

	if (sscanf(text, "monotonic %lld %ld", &s, &ns) != 2)
		wl_fail("timens_offsets '%s'", text);
	return s * NSEC + ns;
}

static void new_timens(long long mono_s, long mono_ns, long long boot_s)
{
	char text[128];
	int fd;

	if (unshare(CLONE_NEWTIME) < 0)
		wl_fail("unshare(CLONE_NEWTIME): %m");
	snprintf(text, sizeof(text), "monotonic %lld %ld\nboottime %lld 0\n", mono_s, mono_ns,
		 boot_s);
	fd = open("/proc/self/timens_offsets", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		wl_fail("write timens_offsets: %m");
	close(fd);
}

static void enter_children_ns(void)
{
	int fd = open("/proc/self/ns/time_for_children", O_RDONLY | O_CLOEXEC);

	if (fd < 0 || setns(fd, CLONE_NEWTIME) < 0)
		wl_fail("setns into time_for_children: %m");
	close(fd);
}

static int clock_pipe[2];
static int64_t at_ready[2];

/* inside: its clocks before the dump, then after it, on request. */
static void inside_main(void)
{
	int64_t v[2];
	char c;

	for (;;) {
		if (read(clock_pipe[0], &c, 1) != 1)
			_exit(1);
		v[0] = clock_ns(CLOCK_MONOTONIC);
		v[1] = clock_ns(CLOCK_BOOTTIME);
		if (write(clock_pipe[1], v, sizeof(v)) != sizeof(v))
			_exit(1);
	}
}

static pid_t spawn(bool inside)
{
	pid_t pid = fork();

	if (pid < 0)
		wl_fail("fork: %m");
	if (pid == 0) {
		if (inside)
			inside_main();
		for (;;)
			pause();
	}
	return pid;
}

/* The parent asks inside for its clocks on one pipe, and reads them on the other. */
static int to_inside[2], from_inside[2];

static void ask_inside(int64_t v[2])
{
	if (write(to_inside[1], "c", 1) != 1 || read(from_inside[0], v, 16) != 16)
		wl_fail("inside's clocks: %m");
}

/* The harness's verify request, waited for on CLOCK_REALTIME: "moved" moves the monotonic one. */
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

static int run_owned(void)
{
	char path[64], want[96], now[96];
	int ready[2], done[2], fd;
	pid_t child;
	char c;

	if (pipe(ready) < 0 || pipe(done) < 0)
		wl_fail("pipe: %m");
	child = fork();
	if (child < 0)
		wl_fail("fork: %m");
	if (child == 0) {
		close(ready[0]);
		close(done[1]);
		if (unshare(CLONE_NEWUSER | CLONE_NEWTIME) < 0 || write(ready[1], "r", 1) != 1)
			_exit(1);
		/* Until the parent joined its time namespace and closes its end. */
		_exit(read(done[0], &c, 1) < 0);
	}
	close(ready[1]);
	close(done[0]);
	if (read(ready[0], &c, 1) != 1)
		wl_fail("the child's namespaces: %m");
	snprintf(path, sizeof(path), "/proc/%d/ns/time_for_children", (int)child);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWTIME) < 0)
		wl_fail("join %s: %m", path);
	close(fd);
	close(done[1]);
	close(ready[0]);
	if (waitpid(child, NULL, 0) != child)
		wl_fail("waitpid: %m");
	link_of(getpid(), "time", want, sizeof(want));
	wl_ready();
	wait_verify();
	link_of(getpid(), "time", now, sizeof(now));
	WL_CHECK(!strcmp(now, want), "in time namespace %s, not %s", now, want);
	return 0;
}

int main(int argc, char **argv)
{
	char start[96], link[96], want_time[96], want_tfc[96], off_self[256], off_in[256], now[256];
	const char *mode = argc > 1 ? argv[1] : "";
	bool moved = argc > 2 && !strcmp(argv[2], "moved");
	bool enter = !strcmp(mode, "enter") || !strcmp(mode, "both");
	int64_t in_before[2], in_after[2];
	pid_t outside, inside, middle = -1;

	wl_init("timens");
	if (!strcmp(mode, "owned"))
		return run_owned();
	if ((!enter && strcmp(mode, "children")) || argc > 3 || (argc > 2 && !moved))
		wl_fail("usage: wl-timens enter|children|both|owned [moved]");
	link_of(getpid(), "time", start, sizeof(start));
	outside = spawn(false);
	new_timens(10 * DAY_S, 123456789, DAY_S);
	if (enter)
		enter_children_ns();
	if (!strcmp(mode, "both")) {
		middle = spawn(false);
		new_timens(20 * DAY_S, 987654321, 2 * DAY_S);
	}
	if (pipe(to_inside) < 0 || pipe(from_inside) < 0)
		wl_fail("pipe: %m");
	clock_pipe[0] = to_inside[0];
	clock_pipe[1] = from_inside[1];
	inside = spawn(true);
	link_of(getpid(), "time", want_time, sizeof(want_time));
	link_of(getpid(), "time_for_children", want_tfc, sizeof(want_tfc));
	offsets_of(getpid(), off_self, sizeof(off_self));
	offsets_of(inside, off_in, sizeof(off_in));
	WL_CHECK(!!strcmp(want_time, start) == enter, "the setup: time %s, started in %s",
		 want_time, start);
	ask_inside(in_before);
	at_ready[0] = clock_ns(CLOCK_MONOTONIC);
	at_ready[1] = clock_ns(CLOCK_BOOTTIME);
	wl_ready();
	wait_verify();
	ask_inside(in_after);
	WL_CHECK(clock_ns(CLOCK_MONOTONIC) >= at_ready[0] + (moved && enter ? MOVED_S * NSEC : 0),
		 "CLOCK_MONOTONIC went back across the restore");
	WL_CHECK(clock_ns(CLOCK_BOOTTIME) >= at_ready[1] + (moved && enter ? MOVED_S * NSEC : 0),
		 "CLOCK_BOOTTIME went back across the restore");
	WL_CHECK(in_after[0] >= in_before[0] + (moved ? MOVED_S * NSEC : 0),
		 "CLOCK_MONOTONIC of the child inside went back across the restore");
	WL_CHECK(in_after[1] >= in_before[1] + (moved ? MOVED_S * NSEC : 0),
		 "CLOCK_BOOTTIME of the child inside went back across the restore");
	/* Relative to one another: the inodes are new, the links between them not. */
	link_of(getpid(), "time", link, sizeof(link));
	WL_CHECK(!!strcmp(link, start) == enter, "the workload is in time %s (started in %s)", link,
		 start);
	link_of(outside, "time", now, sizeof(now));
	WL_CHECK(!strcmp(now, start), "child 'outside' is in time %s, not %s", now, start);
	link_of(inside, "time", now, sizeof(now));
	link_of(getpid(), "time_for_children", link, sizeof(link));
	WL_CHECK(!strcmp(now, link), "child 'inside' is in %s, not its parent's children's %s", now,
		 link);
	link_of(getpid(), "time", now, sizeof(now));
	WL_CHECK(!strcmp(now, link) == !strcmp(want_time, want_tfc),
		 "time %s and time_for_children %s: equal at the dump: %d", now, link,
		 !strcmp(want_time, want_tfc));
	if (middle > 0) {
		link_of(getpid(), "time", link, sizeof(link));
		link_of(middle, "time", now, sizeof(now));
		WL_CHECK(!strcmp(now, link), "child 'middle' is in time %s, not its parent's %s",
			 now, link);
		kill(middle, SIGKILL);
		waitpid(middle, NULL, 0);
	}
	offsets_of(getpid(), now, sizeof(now));
	if (!moved)
		WL_CHECK(!strcmp(now, off_self), "timens_offsets are '%s', not '%s'", now,
			 off_self);
	else
		WL_CHECK(mono_offset(now) >= mono_offset(off_self) + MOVED_S * NSEC - 60 * NSEC,
			 "timens_offsets '%s' not raised from '%s'", now, off_self);
	offsets_of(inside, now, sizeof(now));
	if (!moved)
		WL_CHECK(!strcmp(now, off_in), "inside's timens_offsets are '%s', not '%s'", now,
			 off_in);
	offsets_of(outside, now, sizeof(now));
	WL_CHECK(mono_offset(now) == 0, "outside's timens_offsets are '%s'", now);
	kill(inside, SIGKILL);
	kill(outside, SIGKILL);
	waitpid(inside, NULL, 0);
	waitpid(outside, NULL, 0);
	wl_note("verified");
	return 0;
}
