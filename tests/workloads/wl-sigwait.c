// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-sigwait: threads waiting in the calls that replace the signal mask for
 * their duration (sigsuspend, ppoll, pselect), and the leader too.
 *
 * Each waiter blocks its own set of signals, then waits with a temporary
 * mask that lets exactly one of them through.  The dump finds it inside the
 * call, where the mask the kernel shows is the temporary one; the one the
 * thread gets back when the call returns is its real mask, and that is what
 * must survive.  After the restore each waiter is sent its signal: the call
 * returns through the handler (restarted after the restore, so still
 * waiting), and the thread's mask must be its real mask again, not the
 * temporary one, with the signal it had blocked still pending untouched.
 */
#include "wl.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>

enum how { SUSPEND, PPOLL, PSELECT, N_HOW };

static const char *const how_name[N_HOW] = {"sigsuspend", "ppoll", "pselect"};

struct waiter {
	enum how how;
	int wake; /* the signal the temporary mask lets through */
	int kept; /* blocked in both masks: sent early, must stay pending */
	pthread_t thread;
	volatile int in_call; /* set just before the call */
	volatile int woke;    /* the handler's signal */
	sigset_t real, temp, after, pending;
	int err;
};

static struct waiter w[N_HOW + 1];
static __thread struct waiter *self;

static void on_signal(int sig)
{
	if (self)
		self->woke = sig;
}

static void wait_in_call(struct waiter *x)
{
	struct pollfd pfd = {.fd = -1};
	int r = -1;

	x->in_call = 1;
	switch (x->how) {
	case SUSPEND:
		r = sigsuspend(&x->temp);
		break;
	case PPOLL:
		r = ppoll(&pfd, 0, NULL, &x->temp);
		break;
	case PSELECT:
		r = pselect(0, NULL, NULL, NULL, NULL, &x->temp);
		break;
	default:
		break;
	}
	x->err = r < 0 ? errno : 0;
	pthread_sigmask(SIG_SETMASK, NULL, &x->after);
	sigpending(&x->pending);
}

static void *run(void *arg)
{
	struct waiter *x = arg;

	self = x;
	pthread_sigmask(SIG_SETMASK, &x->real, NULL);
	wait_in_call(x);
	return NULL;
}

/* Waiter @i: real mask {wake, kept, SIGHUP + i}; temporary {kept, SIGWINCH}. */
static void setup(struct waiter *x, int i, enum how how)
{
	x->how = how;
	x->wake = SIGRTMIN + 2 * i;
	x->kept = SIGRTMIN + 2 * i + 1;
	sigemptyset(&x->real);
	sigaddset(&x->real, x->wake);
	sigaddset(&x->real, x->kept);
	sigaddset(&x->real, SIGHUP + i);
	sigemptyset(&x->temp);
	sigaddset(&x->temp, x->kept);
	sigaddset(&x->temp, SIGWINCH);
}

static void check(const struct waiter *x, const char *who)
{
	if (x->woke != x->wake)
		wl_fail("%s in %s: woke by signal %d, not %d", who, how_name[x->how], x->woke,
			x->wake);
	if (x->err != EINTR)
		wl_fail("%s in %s: returned with %s, not EINTR", who, how_name[x->how],
			strerror(x->err));
	for (int sig = 1; sig < SIGRTMAX; sig++)
		if (sigismember(&x->after, sig) != sigismember(&x->real, sig))
			wl_fail("%s: after %s returned, signal %d is %s (the mask is the "
				"temporary one, not its own)",
				who, how_name[x->how], sig,
				sigismember(&x->after, sig) ? "blocked" : "not blocked");
	if (!sigismember(&x->pending, x->kept))
		wl_fail("%s: signal %d, blocked all along, is not pending any more", who, x->kept);
}

/*
 * The controller: tells the harness once everyone waits, and after the
 * restore wakes the threads one by one, then the leader.
 */
static void *control(void *arg)
{
	pthread_t leader = *(pthread_t *)arg;

	while (!w[N_HOW].in_call)
		usleep(1000);
	usleep(50000);
	wl_ready();
	wl_wait_verify();
	for (int i = 0; i < N_HOW; i++) {
		pthread_kill(w[i].thread, w[i].wake);
		pthread_join(w[i].thread, NULL);
	}
	pthread_kill(leader, w[N_HOW].wake);
	return NULL;
}

int main(void)
{
	struct sigaction sa = {.sa_handler = on_signal};
	pthread_t ctl, leader = pthread_self();
	struct waiter *me = &w[N_HOW];
	sigset_t all;

	wl_init("sigwait");
	for (int sig = SIGRTMIN; sig < SIGRTMIN + 2 * (N_HOW + 1); sig++)
		sigaction(sig, &sa, NULL);
	for (int i = 0; i <= N_HOW; i++)
		setup(&w[i], i, i < N_HOW ? (enum how)i : SUSPEND);
	/* Threads start with every signal blocked and set their own masks. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
	for (int i = 0; i < N_HOW; i++)
		if (pthread_create(&w[i].thread, NULL, run, &w[i]))
			wl_fail("pthread_create");
	if (pthread_create(&ctl, NULL, control, &leader))
		wl_fail("pthread_create");
	/* A signal each blocks in both masks: it must stay pending, untouched. */
	for (int i = 0; i < N_HOW; i++)
		pthread_kill(w[i].thread, w[i].kept);
	for (int i = 0; i < N_HOW; i++)
		while (!w[i].in_call)
			usleep(1000);
	self = me;
	pthread_sigmask(SIG_SETMASK, &me->real, NULL);
	pthread_kill(leader, me->kept);
	wait_in_call(me);
	pthread_join(ctl, NULL);
	for (int i = 0; i < N_HOW; i++)
		check(&w[i], "thread");
	check(me, "the leader");
	wl_note("%d waiters (sigsuspend, ppoll, pselect, and the leader in sigsuspend) got "
		"their own masks back, their blocked signals still pending",
		N_HOW + 1);
	return 0;
}
