// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-epoll-shared: an epoll fd and an inotify fd a parent shares with its
 * child by fork are one description each after restore, with their
 * registrations and watches, seen from both processes.
 *
 * State during the dump, each held by both processes (fork):
 *   ep    an epoll fd registered by the parent with two eventfds: a
 *         (count 1, data 0xa1, level-triggered) and b (count 0, data 0xb2,
 *         edge-triggered)
 *   in    an inotify fd watching a directory in CRF_TEST_TMPDIR (IN_CREATE)
 *   done  a pipe: the parent writes a byte once its checks are over
 * After restore the parent sees only a reported by ep, registers a third
 * eventfd c (data 0xc3, ready) and writes the byte; the child, once it has
 * read it, sees a and c, writes to b and sees b, creates a file in the
 * directory and reads its IN_CREATE event, and exits 0; the parent exits
 * with the child's verdict.
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
#include <sys/wait.h>
#include <unistd.h>

#define CHECK(c) WL_CHECK(c, "errno: %s", strerror(errno))

struct state {
	int ep, in, a, b, c, done[2];
	char dir[PATH_MAX];
};

/* The data of the ready targets of @ep, ORed (0 when none). */
static uint64_t ready(int ep)
{
	struct epoll_event evs[4];
	int n = epoll_wait(ep, evs, 4, 0);
	uint64_t got = 0;

	CHECK(n >= 0);
	for (int i = 0; i < n; i++)
		got |= evs[i].data.u64;
	return got;
}

static void add(int ep, int fd, uint32_t events, uint64_t data)
{
	struct epoll_event ev = {.events = events, .data.u64 = data};

	CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0);
}

static void setup(struct state *s)
{
	snprintf(s->dir, sizeof(s->dir), "%s/wl-epoll-shared.%d", wl_tmpdir(), (int)getpid());
	CHECK(mkdir(s->dir, 0700) == 0);
	s->ep = epoll_create1(EPOLL_CLOEXEC);
	s->a = eventfd(1, EFD_NONBLOCK);
	s->b = eventfd(0, EFD_NONBLOCK);
	s->in = inotify_init1(IN_NONBLOCK);
	CHECK(s->ep >= 0 && s->a >= 0 && s->b >= 0 && s->in >= 0);
	add(s->ep, s->a, EPOLLIN, 0xa1);
	add(s->ep, s->b, EPOLLIN | EPOLLET, 0xb2);
	CHECK(inotify_add_watch(s->in, s->dir, IN_CREATE) == 1);
	CHECK(pipe(s->done) == 0);
}

static int child(struct state *s)
{
	struct inotify_event *e;
	char buf[4096] __attribute__((aligned(8))), path[PATH_MAX + 8];
	uint64_t one = 1, got;
	int f;

	wl_wait_verify();
	CHECK(read(s->done[0], buf, 1) == 1);
	got = ready(s->ep);
	WL_CHECK(got == (0xa1 | 0xc3), "child: ep reported %#llx, not a and c",
		 (unsigned long long)got);
	CHECK(write(s->b, &one, 8) == 8);
	got = ready(s->ep);
	WL_CHECK(got == (0xa1 | 0xb2 | 0xc3), "child: ep reported %#llx after b was written",
		 (unsigned long long)got);
	snprintf(path, sizeof(path), "%s/new", s->dir);
	f = open(path, O_CREAT | O_WRONLY, 0600);
	CHECK(f >= 0 && close(f) == 0);
	CHECK(read(s->in, buf, sizeof(buf)) >= (ssize_t)sizeof(*e));
	e = (struct inotify_event *)buf;
	WL_CHECK(e->wd == 1 && (e->mask & IN_CREATE) && !strcmp(e->name, "new"),
		 "child: inotify event wd %d mask %#x name %s", e->wd, e->mask, e->name);
	CHECK(unlink(path) == 0 && rmdir(s->dir) == 0);
	return 0;
}

int main(void)
{
	static struct state s;
	uint64_t got;
	int status;
	pid_t pid;

	wl_init("epoll-shared");
	setup(&s);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(child(&s));
	wl_ready();
	wl_wait_verify();
	got = ready(s.ep);
	WL_CHECK(got == 0xa1, "ep reported %#llx, not a alone", (unsigned long long)got);
	s.c = eventfd(1, EFD_NONBLOCK);
	CHECK(s.c >= 0);
	add(s.ep, s.c, EPOLLIN, 0xc3);
	CHECK(write(s.done[1], "x", 1) == 1);
	CHECK(waitpid(pid, &status, 0) == pid);
	WL_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child failed (status %#x)",
		 status);
	/* The child's registration of nothing new, and its write to b, are seen here too. */
	got = ready(s.ep);
	WL_CHECK(got == (0xa1 | 0xc3), "ep reported %#llx after the child, not a and c",
		 (unsigned long long)got);
	wl_note("an epoll fd and an inotify fd shared with a child: one description each");
	return 0;
}
