// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-epoll: an epoll set and an inotify fd keep their registrations and
 * watches across checkpoint and restore.
 *
 * State:
 *   ep     an epoll fd with 50 targets: 30 eventfds and the read ends of
 *          20 pipes, target i with data 0x1000 + i, level-triggered
 *          (i % 3 == 0), EPOLLET (1) or EPOLLONESHOT (2); the even ones
 *          are readable, and nothing was waited for before the dump
 *   fired  an epoll fd with one oneshot eventfd that fired before the dump
 *   moved  an epoll fd whose eventfd (count 1, data 0x55) was registered
 *          as fd N, then dup'ed to M and closed; fd N now holds another
 *          eventfd, also registered (count 0, data 0x66)
 *   in     an inotify fd watching a directory (wd 1, IN_CREATE) and a
 *          file (wd 2, IN_MODIFY) in CRF_TEST_TMPDIR
 * After restore: epoll_wait reports exactly the even targets with their
 * data; a second wait only the level-triggered ones; a write to an idle
 * edge-triggered target and EPOLL_CTL_MOD of a fired oneshot one (by its
 * fd number) report them; fired stays quiet until re-armed; creating a
 * file in the directory gives an event with wd 1, writing the file wd 2.
 * moved reports 0x55 only; 0x66 too once fd N is written; after
 * EPOLL_CTL_DEL of fd N, draining M silences it and writing M wakes it.
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#define N_TARGETS 50
#define N_EVENTFD 30
#define DATA(i)	  (0x1000u + (uint64_t)(i))
#define CHECK(c)  WL_CHECK(c, "errno: %s", strerror(errno))

struct state {
	int ep, fired, fired_ev, in;
	int moved, moved_n, moved_m;
	int rd[N_TARGETS], wr[N_TARGETS];
	char dir[PATH_MAX], file[PATH_MAX];
};

static uint32_t mode(int i)
{
	return i % 3 == 0 ? 0 : i % 3 == 1 ? EPOLLET : EPOLLONESHOT;
}

static void make_ready(const struct state *s, int i)
{
	uint64_t one = 1;

	CHECK(write(s->wr[i], &one, i < N_EVENTFD ? 8 : 1) > 0);
}

static void setup_epoll(struct state *s)
{
	struct epoll_event ev = {.events = EPOLLIN | EPOLLONESHOT};

	s->ep = epoll_create1(0);
	CHECK(s->ep >= 0);
	for (int i = 0; i < N_TARGETS; i++) {
		int p[2];

		if (i < N_EVENTFD) {
			s->rd[i] = s->wr[i] = eventfd(0, EFD_NONBLOCK);
			CHECK(s->rd[i] >= 0);
		} else {
			CHECK(pipe2(p, O_NONBLOCK) == 0);
			s->rd[i] = p[0];
			s->wr[i] = p[1];
		}
		ev.events = EPOLLIN | mode(i);
		ev.data.u64 = DATA(i);
		CHECK(epoll_ctl(s->ep, EPOLL_CTL_ADD, s->rd[i], &ev) == 0);
		if (i % 2 == 0)
			make_ready(s, i);
	}
	s->fired = epoll_create1(EPOLL_CLOEXEC);
	s->fired_ev = eventfd(1, EFD_NONBLOCK);
	ev.events = EPOLLIN | EPOLLONESHOT;
	ev.data.u64 = 77;
	CHECK(epoll_ctl(s->fired, EPOLL_CTL_ADD, s->fired_ev, &ev) == 0);
	CHECK(epoll_wait(s->fired, &ev, 1, 0) == 1 && ev.data.u64 == 77);
}

static void setup_moved(struct state *s)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 0x55};

	s->moved = epoll_create1(0);
	s->moved_n = eventfd(1, EFD_NONBLOCK);
	CHECK(s->moved >= 0 && s->moved_n >= 0);
	CHECK(epoll_ctl(s->moved, EPOLL_CTL_ADD, s->moved_n, &ev) == 0);
	s->moved_m = dup(s->moved_n);
	CHECK(s->moved_m >= 0 && close(s->moved_n) == 0);
	CHECK(eventfd(0, EFD_NONBLOCK) == s->moved_n);
	ev.data.u64 = 0x66;
	CHECK(epoll_ctl(s->moved, EPOLL_CTL_ADD, s->moved_n, &ev) == 0);
}

/* The data moved reports, ORed (0 when nothing is ready). */
static uint64_t moved_ready(const struct state *s)
{
	struct epoll_event evs[4];
	int n = epoll_wait(s->moved, evs, 4, 0);
	uint64_t got = 0;

	CHECK(n >= 0);
	for (int i = 0; i < n; i++)
		got |= evs[i].data.u64;
	return got;
}

static void check_moved(const struct state *s)
{
	uint64_t v, one = 1;

	WL_CHECK(moved_ready(s) == 0x55, "moved reported %#llx, not 0x55",
		 (unsigned long long)moved_ready(s));
	CHECK(write(s->moved_n, &one, 8) == 8);
	WL_CHECK(moved_ready(s) == 0x77, "moved reported %#llx, not 0x55|0x66",
		 (unsigned long long)moved_ready(s));
	CHECK(epoll_ctl(s->moved, EPOLL_CTL_DEL, s->moved_n, NULL) == 0);
	CHECK(read(s->moved_m, &v, 8) == 8 && v == 1);
	WL_CHECK(moved_ready(s) == 0, "moved reported %#llx once drained",
		 (unsigned long long)moved_ready(s));
	CHECK(write(s->moved_m, &one, 8) == 8);
	WL_CHECK(moved_ready(s) == 0x55, "moved reported %#llx, not 0x55 again",
		 (unsigned long long)moved_ready(s));
}

static void setup_inotify(struct state *s)
{
	int f;

	snprintf(s->dir, sizeof(s->dir), "%s/wl-epoll-dir.%d", wl_tmpdir(), (int)getpid());
	snprintf(s->file, sizeof(s->file), "%s/wl-epoll-file.%d", wl_tmpdir(), (int)getpid());
	CHECK(mkdir(s->dir, 0700) == 0);
	f = open(s->file, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	CHECK(f >= 0);
	close(f);
	s->in = inotify_init1(IN_NONBLOCK);
	CHECK(s->in >= 0);
	CHECK(inotify_add_watch(s->in, s->dir, IN_CREATE) == 1);
	CHECK(inotify_add_watch(s->in, s->file, IN_MODIFY) == 2);
}

/* One epoll_wait(0): a bitmap of the targets reported, checking data and events. */
static uint64_t reported(int ep)
{
	struct epoll_event evs[N_TARGETS + 1];
	uint64_t seen = 0;
	int n = epoll_wait(ep, evs, N_TARGETS + 1, 0);

	CHECK(n >= 0);
	for (int k = 0; k < n; k++) {
		uint64_t i = evs[k].data.u64 - DATA(0);

		if (i >= N_TARGETS)
			wl_fail("epoll reported data %#llx", (unsigned long long)evs[k].data.u64);
		CHECK(evs[k].events == EPOLLIN);
		seen |= 1ull << i;
	}
	return seen;
}

static uint64_t expect(int (*pick)(int))
{
	uint64_t m = 0;

	for (int i = 0; i < N_TARGETS; i++)
		if (pick(i))
			m |= 1ull << i;
	return m;
}

static int even(int i)
{
	return i % 2 == 0;
}

static int even_level(int i)
{
	return i % 2 == 0 && mode(i) == 0;
}

static void check_epoll(const struct state *s)
{
	struct epoll_event ev = {.events = EPOLLIN | EPOLLONESHOT, .data.u64 = DATA(2)};
	uint64_t got = reported(s->ep);

	if (got != expect(even))
		wl_fail("epoll reported %#llx, not %#llx", (unsigned long long)got,
			(unsigned long long)expect(even));
	got = reported(s->ep);
	if (got != expect(even_level))
		wl_fail("second wait reported %#llx, not %#llx", (unsigned long long)got,
			(unsigned long long)expect(even_level));
	/* Target 1: edge-triggered and idle; target 2: a oneshot that fired. */
	make_ready(s, 1);
	CHECK(epoll_ctl(s->ep, EPOLL_CTL_MOD, s->rd[2], &ev) == 0);
	got = reported(s->ep);
	if (got != (expect(even_level) | 1u << 1 | 1u << 2))
		wl_fail("after new events epoll reported %#llx", (unsigned long long)got);
	CHECK(epoll_ctl(s->ep, EPOLL_CTL_DEL, s->rd[N_TARGETS - 1], NULL) == 0);
	ev.data.u64 = 77;
	CHECK(epoll_wait(s->fired, &ev, 1, 0) == 0);
	CHECK(epoll_ctl(s->fired, EPOLL_CTL_MOD, s->fired_ev, &ev) == 0);
	CHECK(epoll_wait(s->fired, &ev, 1, 0) == 1 && ev.data.u64 == 77);
}

/* The next inotify event: its wd and mask. */
static void next_event(int in, int wd, uint32_t mask)
{
	char buf[4096] __attribute__((aligned(8)));
	const struct inotify_event *e = (const void *)buf;
	ssize_t n = read(in, buf, sizeof(buf));

	if (n < (ssize_t)sizeof(*e))
		wl_fail("no inotify event: %s", n < 0 ? strerror(errno) : "short read");
	if (e->wd != wd || !(e->mask & mask))
		wl_fail("inotify event wd %d mask %#x, not wd %d mask %#x", e->wd, e->mask, wd,
			mask);
}

static void check_inotify(const struct state *s)
{
	char path[PATH_MAX + 8];
	int f;

	CHECK(read(s->in, path, sizeof(path)) < 0 && errno == EAGAIN);
	snprintf(path, sizeof(path), "%s/new", s->dir);
	f = open(path, O_CREAT | O_WRONLY, 0600);
	CHECK(f >= 0);
	close(f);
	next_event(s->in, 1, IN_CREATE);
	f = open(s->file, O_WRONLY);
	CHECK(f >= 0 && write(f, "x", 1) == 1);
	close(f);
	next_event(s->in, 2, IN_MODIFY);
	unlink(path);
	rmdir(s->dir);
	unlink(s->file);
}

/*
 * "pending": an inotify event is queued and unread at the dump, which crf
 * cannot queue again, so the dump must refuse; the refused dump must not
 * have read it either.
 */
static void make_pending(const struct state *s, char *path, size_t len)
{
	int f;

	snprintf(path, len, "%s/early", s->dir);
	f = open(path, O_CREAT | O_WRONLY, 0600);
	CHECK(f >= 0);
	close(f);
}

int main(int argc, char **argv)
{
	static struct state s;
	bool pending = argc > 1 && !strcmp(argv[1], "pending");
	char early[PATH_MAX + 8];

	wl_init("epoll");
	setup_epoll(&s);
	setup_moved(&s);
	setup_inotify(&s);
	if (pending)
		make_pending(&s, early, sizeof(early));
	wl_ready();
	wl_wait_verify();
	if (pending) {
		next_event(s.in, 1, IN_CREATE);
		unlink(early);
	}
	check_epoll(&s);
	check_moved(&s);
	check_inotify(&s);
	wl_note("epoll readiness, data and modes and inotify watches all as before");
	return 0;
}
