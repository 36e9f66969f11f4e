// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-timers: timers and clocks survive checkpoint and restore.
 *
 * State: ITIMER_REAL (30 s, interval 30 s), ITIMER_VIRTUAL (100 s of CPU
 * time), and a POSIX timer on CLOCK_MONOTONIC signalling SIGRTMIN (40 s,
 * interval 7 s) whose ID is not the first one (a timer created before it
 * was deleted), so a restore that recreates timers without their IDs shows.
 *
 * After restore: every timer's remaining time is at most what it was just
 * before ready and at least that minus the wall time elapsed since (minus a
 * second of slack); intervals are exact; the POSIX timer answers to its old
 * ID and /proc/self/timers reads the same; no timer fired; the vDSO's
 * clock_gettime and gettimeofday agree with the system calls and never go
 * backwards over many calls.
 */
#include "wl.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define NS	 1000000000LL
#define SLACK_NS (NS / 100) /* clock and timer granularity */

static volatile sig_atomic_t fired;
static char timers_before[4096], timers_after[4096];

static void on_timer(int sig)
{
	fired = sig;
}

static long long tv_ns(struct timeval tv)
{
	return tv.tv_sec * NS + tv.tv_usec * 1000LL;
}

static long long ts_ns(struct timespec ts)
{
	return ts.tv_sec * NS + ts.tv_nsec;
}

static void check_remaining(const char *what, long long before, long long now, long long elapsed)
{
	if (now <= 0)
		wl_fail("%s: disarmed (remaining %lld ns, was %lld ns)", what, now, before);
	if (now > before + SLACK_NS)
		wl_fail("%s: %lld ms remain, more than the %lld ms before the checkpoint", what,
			now / 1000000, before / 1000000);
	if (now < before - elapsed - NS)
		wl_fail("%s: %lld ms remain, but %lld ms remained %lld ms ago", what, now / 1000000,
			before / 1000000, elapsed / 1000000);
}

static void check_clocks(long long t1)
{
	struct timespec a, b;
	struct timeval tv;
	long long last = t1, v;

	for (int i = 0; i < 200000; i++) {
		clock_gettime(CLOCK_MONOTONIC, &a);
		v = ts_ns(a);
		if (v < last)
			wl_fail("CLOCK_MONOTONIC went back from %lld to %lld (call %d)", last, v,
				i);
		last = v;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &b);
	if (ts_ns(b) - ts_ns(a) < 0 || ts_ns(b) - ts_ns(a) > NS / 20)
		wl_fail("vDSO CLOCK_MONOTONIC %lld and the system call's %lld disagree", ts_ns(a),
			ts_ns(b));
	clock_gettime(CLOCK_REALTIME, &a);
	syscall(SYS_clock_gettime, CLOCK_REALTIME, &b);
	if (ts_ns(b) - ts_ns(a) < 0 || ts_ns(b) - ts_ns(a) > NS / 20)
		wl_fail("vDSO CLOCK_REALTIME %lld and the system call's %lld disagree", ts_ns(a),
			ts_ns(b));
	gettimeofday(&tv, NULL);
	if (tv_ns(tv) - ts_ns(b) < -NS / 1000 || tv_ns(tv) - ts_ns(b) > NS / 20)
		wl_fail("gettimeofday %lld and CLOCK_REALTIME %lld disagree", tv_ns(tv), ts_ns(b));
}

/*
 * "overrun": a timer whose last signal came with overruns (expirations while
 * it was blocked), so that timer_getoverrun() says so: the dump must refuse.
 */
static void make_overrun(void)
{
	struct itimerspec fast = {{0, 1000000}, {0, 1000000}};
	struct sigevent sev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGRTMIN + 1};
	const struct timespec wait = {0, 20 * 1000000};
	sigset_t set;
	timer_t t;

	signal(SIGRTMIN + 1, on_timer);
	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN + 1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (timer_create(CLOCK_MONOTONIC, &sev, &t) < 0 || timer_settime(t, 0, &fast, NULL) < 0)
		wl_fail("timer_create: %s", strerror(errno));
	nanosleep(&wait, NULL);
	/*
	 * Delivered once, then blocked again: the count of that delivery stays
	 * (a disarm would clear it) while the next signal waits, blocked.
	 */
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (timer_getoverrun(t) <= 0)
		wl_fail("no overrun after 20 ms of a 1 ms timer with its signal blocked");
}

int main(int argc, char **argv)
{
	struct itimerval real = {{30, 0}, {30, 0}}, virt = {{0, 0}, {100, 0}};
	struct itimerval real0, virt0, real1, virt1, prof1;
	struct itimerspec spec = {{7, 0}, {40, 0}}, spec0, spec1;
	struct sigevent sev;
	timer_t first, timer;
	long long t0, t1;
	ssize_t n;

	wl_init("timers");
	if (argc > 1 && !strcmp(argv[1], "overrun")) {
		make_overrun();
		wl_ready();
		wl_wait_verify();
		return 0;
	}
	signal(SIGALRM, on_timer);
	signal(SIGVTALRM, on_timer);
	signal(SIGRTMIN, on_timer);

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGRTMIN;
	sev.sigev_value.sival_int = 1;
	if (timer_create(CLOCK_MONOTONIC, &sev, &first) < 0)
		wl_fail("timer_create: %s", strerror(errno));
	sev.sigev_value.sival_int = 2;
	if (timer_create(CLOCK_MONOTONIC, &sev, &timer) < 0)
		wl_fail("timer_create: %s", strerror(errno));
	timer_delete(first);
	if (timer_settime(timer, 0, &spec, NULL) < 0)
		wl_fail("timer_settime: %s", strerror(errno));
	if (setitimer(ITIMER_REAL, &real, NULL) < 0 || setitimer(ITIMER_VIRTUAL, &virt, NULL) < 0)
		wl_fail("setitimer: %s", strerror(errno));

	n = wl_read_file("/proc/self/timers", timers_before, sizeof(timers_before));
	if (n < 0)
		wl_fail("read /proc/self/timers: %s", strerror((int)-n));
	t0 = (long long)wl_now_ns();
	getitimer(ITIMER_REAL, &real0);
	getitimer(ITIMER_VIRTUAL, &virt0);
	timer_gettime(timer, &spec0);

	wl_ready();
	wl_wait_verify();

	t1 = (long long)wl_now_ns();
	getitimer(ITIMER_REAL, &real1);
	getitimer(ITIMER_VIRTUAL, &virt1);
	getitimer(ITIMER_PROF, &prof1);
	if (timer_gettime(timer, &spec1) < 0)
		wl_fail("timer_gettime on the POSIX timer's ID %ld: %s", (long)(intptr_t)timer,
			strerror(errno));
	if (fired)
		wl_fail("signal %d (%s) from a timer that should not have expired", (int)fired,
			strsignal((int)fired));

	check_remaining("ITIMER_REAL", tv_ns(real0.it_value), tv_ns(real1.it_value), t1 - t0);
	if (tv_ns(real1.it_interval) != 30 * NS)
		wl_fail("ITIMER_REAL interval is %lld ns", tv_ns(real1.it_interval));
	check_remaining("ITIMER_VIRTUAL", tv_ns(virt0.it_value), tv_ns(virt1.it_value), t1 - t0);
	if (tv_ns(virt1.it_interval))
		wl_fail("ITIMER_VIRTUAL has an interval of %lld ns", tv_ns(virt1.it_interval));
	if (tv_ns(prof1.it_value) || tv_ns(prof1.it_interval))
		wl_fail("ITIMER_PROF is armed");
	check_remaining("POSIX timer", ts_ns(spec0.it_value), ts_ns(spec1.it_value), t1 - t0);
	if (ts_ns(spec1.it_interval) != 7 * NS)
		wl_fail("POSIX timer interval is %lld ns", ts_ns(spec1.it_interval));
	if (timer_getoverrun(timer) != 0)
		wl_fail("POSIX timer overrun is %d", timer_getoverrun(timer));

	n = wl_read_file("/proc/self/timers", timers_after, sizeof(timers_after));
	if (n < 0)
		wl_fail("read /proc/self/timers: %s", strerror((int)-n));
	if (strcmp(timers_before, timers_after))
		wl_fail("/proc/self/timers was \"%s\", is \"%s\"", timers_before, timers_after);

	check_clocks(t1);
	wl_note("itimers, POSIX timer %ld, vDSO clocks: intact", (long)(intptr_t)timer);
	return 0;
}
