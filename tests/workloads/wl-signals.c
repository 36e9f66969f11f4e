// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-signals: signal state survives checkpoint and restore.
 *
 * State: SIGUSR2 handled with SA_SIGINFO|SA_RESTART|SA_ONSTACK on an
 * alternate signal stack, SIGHUP with SA_NODEFER, SIGWINCH with
 * SA_RESETHAND (not yet delivered), SIGPIPE ignored; SIGUSR1 and SIGRTMIN+2
 * blocked, with SIGUSR1 pending for the thread (raise) and two SIGRTMIN+2
 * queued for the process with values 1111 and 2222 (sigqueue).
 *
 * After restore: every disposition (handler, flags, mask, restorer, read
 * with the raw rt_sigaction) and the blocked mask are as before; the pending
 * set holds SIGUSR1 and SIGRTMIN+2; sigaltstack() returns the same stack;
 * unblocking delivers SIGUSR1 once and both SIGRTMIN+2 with their values
 * in order; SIGUSR2 runs on the alternate stack; SIGHUP nests (SA_NODEFER);
 * SIGWINCH's handler runs once and is then reset to SIG_DFL.
 */
#include "wl.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ALTSTACK_BYTES (64 * 1024)

/* The kernel's struct sigaction on x86-64, as rt_sigaction takes it. */
struct ksigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};

static unsigned char altstack[ALTSTACK_BYTES] __attribute__((aligned(16)));
static struct ksigaction saved_act[65];

static volatile sig_atomic_t usr1_count, usr2_count, hup_depth, hup_max_depth, hup_count;
static volatile sig_atomic_t winch_count, rt_count, usr2_on_altstack, stray;
static volatile int rt_values[8];
static volatile int usr2_code;

static void on_usr1(int sig)
{
	usr1_count++;
}

static void on_usr2(int sig, siginfo_t *si, void *uc)
{
	unsigned char here;

	usr2_count++;
	usr2_code = si->si_code;
	usr2_on_altstack = &here >= altstack && &here < altstack + sizeof(altstack);
}

static void on_hup(int sig)
{
	hup_count++;
	hup_depth++;
	if (hup_depth > hup_max_depth)
		hup_max_depth = hup_depth;
	if (hup_depth == 1)
		raise(SIGHUP); /* SA_NODEFER: delivered right here, nested */
	hup_depth--;
}

static void on_winch(int sig)
{
	winch_count++;
}

static void on_rt(int sig, siginfo_t *si, void *uc)
{
	if (rt_count < 8)
		rt_values[rt_count] = si->si_value.sival_int;
	rt_count++;
}

static void on_stray(int sig)
{
	stray = sig;
}

static void set_action(int sig, void *handler, int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	if (flags & SA_SIGINFO)
		sa.sa_sigaction = handler;
	else
		sa.sa_handler = handler;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGTERM); /* a handler mask to restore too */
	if (sigaction(sig, &sa, NULL) < 0)
		wl_fail("sigaction %d: %s", sig, strerror(errno));
}

static void read_action(int sig, struct ksigaction *ka)
{
	if (syscall(SYS_rt_sigaction, sig, NULL, ka, 8) < 0)
		wl_fail("rt_sigaction %d: %s", sig, strerror(errno));
}

static void check_actions(void)
{
	struct ksigaction ka;

	for (int sig = 1; sig <= 64; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		read_action(sig, &ka);
		if (memcmp(&ka, &saved_act[sig], sizeof(ka)))
			wl_fail("signal %d (%s): action is handler %p flags %#lx restorer %p mask "
				"%#llx; was %p %#lx %p %#llx",
				sig, strsignal(sig), ka.handler, ka.flags, ka.restorer,
				(unsigned long long)ka.mask, saved_act[sig].handler,
				saved_act[sig].flags, saved_act[sig].restorer,
				(unsigned long long)saved_act[sig].mask);
	}
}

static void check_sigset(const char *what, const sigset_t *got, const sigset_t *want)
{
	for (int sig = 1; sig <= 64; sig++)
		if (sigismember(got, sig) != sigismember(want, sig))
			wl_fail("%s: signal %d (%s) is %s, was %s", what, sig, strsignal(sig),
				sigismember(got, sig) ? "in" : "out",
				sigismember(want, sig) ? "in" : "out");
}

/* Use the state: the handlers must behave as their flags say. */
static void exercise(void)
{
	struct sigaction sa;
	sigset_t unblock;

	sigemptyset(&unblock);
	sigaddset(&unblock, SIGUSR1);
	sigaddset(&unblock, SIGRTMIN + 2);
	if (sigprocmask(SIG_UNBLOCK, &unblock, NULL) < 0)
		wl_fail("sigprocmask: %s", strerror(errno));
	if (usr1_count != 1)
		wl_fail("pending SIGUSR1 delivered %d times after unblocking, wanted once",
			(int)usr1_count);
	if (rt_count != 2 || rt_values[0] != 1111 || rt_values[1] != 2222)
		wl_fail("queued SIGRTMIN+2: %d delivered, values %d %d; wanted 2: 1111 2222",
			(int)rt_count, rt_values[0], rt_values[1]);

	raise(SIGUSR2);
	if (usr2_count != 1 || usr2_code != SI_TKILL)
		wl_fail("SIGUSR2: %d deliveries, si_code %d", (int)usr2_count, usr2_code);
	if (!usr2_on_altstack)
		wl_fail("the SA_ONSTACK handler did not run on the alternate stack");

	raise(SIGHUP);
	if (hup_count != 2 || hup_max_depth != 2)
		wl_fail("SIGHUP (SA_NODEFER): %d deliveries, nesting %d; wanted 2 and 2",
			(int)hup_count, (int)hup_max_depth);

	raise(SIGWINCH);
	if (winch_count != 1)
		wl_fail("SIGWINCH: %d deliveries, wanted 1", (int)winch_count);
	sigaction(SIGWINCH, NULL, &sa);
	if (sa.sa_handler != SIG_DFL)
		wl_fail("SA_RESETHAND: the SIGWINCH handler was not reset after delivery");
	raise(SIGWINCH); /* default: ignored */
	raise(SIGPIPE);	 /* ignored */
	if (stray)
		wl_fail("unexpected signal %d (%s)", (int)stray, strsignal((int)stray));
}

int main(void)
{
	static const int not_stray[] = {SIGKILL, SIGSTOP, SIGCHLD, SIGCONT, SIGURG, SIGSEGV,
					SIGBUS,	 SIGILL,  SIGFPE,  SIGTRAP, SIGABRT};
	sigset_t no_stray, block, mask0, mask1, pend0, pend1;
	stack_t ss0, ss1;
	union sigval v;

	wl_init("signals");
	/* Any other standard signal is a stray one, except those that cannot
	 * be caught, are ignored by default, or report a fault. */
	sigemptyset(&no_stray);
	for (size_t i = 0; i < sizeof(not_stray) / sizeof(not_stray[0]); i++)
		sigaddset(&no_stray, not_stray[i]);
	for (int sig = 1; sig < 32; sig++)
		if (!sigismember(&no_stray, sig))
			signal(sig, on_stray);

	ss0 = (stack_t){.ss_sp = altstack, .ss_size = sizeof(altstack), .ss_flags = 0};
	if (sigaltstack(&ss0, NULL) < 0)
		wl_fail("sigaltstack: %s", strerror(errno));
	set_action(SIGUSR1, on_usr1, SA_RESTART);
	set_action(SIGUSR2, on_usr2, SA_SIGINFO | SA_RESTART | SA_ONSTACK);
	set_action(SIGHUP, on_hup, SA_NODEFER);
	set_action(SIGWINCH, on_winch, SA_RESETHAND);
	set_action(SIGRTMIN + 2, on_rt, SA_SIGINFO);
	signal(SIGPIPE, SIG_IGN);

	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGRTMIN + 2);
	if (sigprocmask(SIG_BLOCK, &block, NULL) < 0)
		wl_fail("sigprocmask: %s", strerror(errno));
	raise(SIGUSR1);
	v.sival_int = 1111;
	sigqueue(getpid(), SIGRTMIN + 2, v);
	v.sival_int = 2222;
	sigqueue(getpid(), SIGRTMIN + 2, v);

	for (int sig = 1; sig <= 64; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			read_action(sig, &saved_act[sig]);
	sigprocmask(SIG_BLOCK, NULL, &mask0);
	sigpending(&pend0);
	if (!sigismember(&pend0, SIGUSR1) || !sigismember(&pend0, SIGRTMIN + 2))
		wl_fail("the signals raised while blocked are not pending");
	sigaltstack(NULL, &ss0);

	wl_ready();
	wl_wait_verify();

	check_actions();
	sigprocmask(SIG_BLOCK, NULL, &mask1);
	check_sigset("blocked mask", &mask1, &mask0);
	sigpending(&pend1);
	check_sigset("pending set", &pend1, &pend0);
	sigaltstack(NULL, &ss1);
	if (ss1.ss_sp != ss0.ss_sp || ss1.ss_size != ss0.ss_size || ss1.ss_flags != ss0.ss_flags)
		wl_fail("sigaltstack is %p+%zu flags %d, was %p+%zu flags %d", ss1.ss_sp,
			ss1.ss_size, ss1.ss_flags, ss0.ss_sp, ss0.ss_size, ss0.ss_flags);
	if (usr1_count || rt_count || usr2_count || hup_count || winch_count)
		wl_fail("a handler ran while its signal should have been blocked or unsent");
	exercise();
	wl_note("dispositions, mask, pending and queued signals, alternate stack: intact");
	return 0;
}
