// SPDX-License-Identifier: GPL-2.0-only
/*
 * rich-tree: a small tree holding most kinds of state crf's plugins save,
 * for dumps that are taken apart (hostile-images.sh, tests/fuzz/mkcorpus.sh):
 * a thread, a child, a pipe with bytes in it and epoll on it, inotify,
 * eventfd, timerfd, signalfd, a shared memfd and a shared anonymous mapping,
 * an unlinked file, a POSIX timer that signals the main thread.  It closes every fd it did not
 * make, sleeps until killed, and verifies nothing.  Small on purpose: its dump is a fuzzer seed.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static void *sleeper(void *arg)
{
	for (;;)
		pause();
	return arg;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

int main(void)
{
	struct sigevent sev = {.sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGUSR2};
	struct epoll_event ev = {.events = EPOLLIN};
	timer_t timer;
	int p[2], ep, in, mfd, fd;
	pthread_t th;
	sigset_t set;
	char *m;

	for (int i = 3; i < 1024; i++)
		close(i);
	if (pipe(p) < 0 || write(p[1], "queued bytes", 12) != 12)
		die("pipe");
	ep = epoll_create1(0);
	ev.data.fd = p[0];
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev) < 0)
		die("epoll");
	/* IN_DELETE_SELF on /usr: a watch that gets no events. */
	in = inotify_init1(0);
	if (in < 0 || inotify_add_watch(in, "/usr", IN_DELETE_SELF) < 0)
		die("inotify");
	if (eventfd(7, 0) < 0 || timerfd_create(CLOCK_MONOTONIC, 0) < 0)
		die("eventfd, timerfd");
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	if (signalfd(-1, &set, 0) < 0)
		die("signalfd");
	mfd = memfd_create("crf-rich", 0);
	if (mfd < 0 || ftruncate(mfd, 8192) < 0)
		die("memfd");
	m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	if (m == MAP_FAILED)
		die("mmap memfd");
	memcpy(m, "memfd", 5);
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		die("mmap shared");
	memcpy(m, "anon", 4);
	fd = open("/tmp", O_TMPFILE | O_RDWR, 0600);
	if (fd < 0 || write(fd, "unlinked", 8) != 8)
		die("O_TMPFILE");
	sev._sigev_un._tid = gettid();
	if (timer_create(CLOCK_MONOTONIC, &sev, &timer) < 0)
		die("timer_create");
	if (pthread_create(&th, NULL, sleeper, NULL))
		die("pthread_create");
	if (fork() == 0)
		for (;;)
			pause();
	for (;;)
		pause();
}
