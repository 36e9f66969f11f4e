// SPDX-License-Identifier: GPL-2.0-only
/*
 * Thin wrappers over ptrace(2) for the freezer and the injector: one place
 * that knows how stops are reported and how register sets are moved.
 */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>

#include <crf/log.h>

#include "ptrace.h"

/* Larger than any XSAVE layout the kernel exposes (AMX included is ~11 KiB). */
#define XSAVE_ASK (64u << 10)

int ptrace_seize(pid_t tid)
{
	if (ptrace(PTRACE_SEIZE, tid, 0, PTRACE_O_TRACESYSGOOD) < 0) {
		if (errno == ESRCH)
			return -ESRCH;
		return crf_error_errno(errno, "pid %d: cannot trace it (PTRACE_SEIZE)", (int)tid);
	}
	return 0;
}

int ptrace_interrupt(pid_t tid)
{
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0) {
		if (errno == ESRCH)
			return -ESRCH;
		return crf_error_errno(errno, "thread %d: PTRACE_INTERRUPT", (int)tid);
	}
	return 0;
}

static void classify(int status, struct crf_stop *st)
{
	st->status = status;
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		st->kind = CRF_STOP_EXITED;
		st->sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
		return;
	}
	st->sig = WSTOPSIG(status);
	if (status >> 16 == PTRACE_EVENT_STOP)
		st->kind = CRF_STOP_EVENT;
	else if (status >> 16)
		st->kind = CRF_STOP_OTHER;
	else if (st->sig == (SIGTRAP | 0x80))
		st->kind = CRF_STOP_SYSCALL;
	else
		st->kind = CRF_STOP_SIGNAL;
}

static long elapsed_us(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000000L + (t.tv_nsec - t0->tv_nsec) / 1000;
}

/*
 * With a timeout there is no way to block in waitpid, so poll it with a
 * growing sleep: a stop normally arrives within microseconds, and only a
 * thread stuck in an uninterruptible sleep needs the long end.
 */
int ptrace_wait(pid_t tid, int timeout_ms, struct crf_stop *st)
{
	struct timespec t0, nap = {0, 20000};
	int status;
	pid_t r;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		r = waitpid(tid, &status, __WALL | (timeout_ms < 0 ? 0 : WNOHANG));
		if (r == tid)
			break;
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return crf_error_errno(errno, "thread %d: waitpid", (int)tid);
		if (elapsed_us(&t0) >= timeout_ms * 1000L)
			return -ETIMEDOUT;
		nanosleep(&nap, NULL);
		if (nap.tv_nsec < 2000000)
			nap.tv_nsec *= 2;
	}
	classify(status, st);
	return 0;
}

int ptrace_resume(pid_t tid, bool syscall, int sig)
{
	if (ptrace(syscall ? PTRACE_SYSCALL : PTRACE_CONT, tid, 0, sig) < 0)
		return crf_error_errno(errno, "thread %d: %s", (int)tid,
				       syscall ? "PTRACE_SYSCALL" : "PTRACE_CONT");
	return 0;
}

int ptrace_detach(pid_t tid, int sig)
{
	if (ptrace(PTRACE_DETACH, tid, 0, sig) < 0) {
		if (errno == ESRCH)
			return -ESRCH;
		return crf_error_errno(errno, "thread %d: PTRACE_DETACH", (int)tid);
	}
	return 0;
}

/*
 * PTRACE_SETOPTIONS replaces every option at once, so each call asks for
 * PTRACE_O_SUSPEND_SECCOMP again: once a thread has it (ptrace_suspend_seccomp),
 * dropping it here would let its filters judge crf's injected system calls.
 * Where the kernel refuses it (crf under seccomp itself, no CAP_SYS_ADMIN,
 * no CONFIG_CHECKPOINT_RESTORE) the thread never had it: ask without.
 */
int ptrace_set_exitkill(pid_t tid, bool on)
{
	long opts = PTRACE_O_TRACESYSGOOD | (on ? PTRACE_O_EXITKILL : 0);

	if (ptrace(PTRACE_SETOPTIONS, tid, 0, opts | PTRACE_O_SUSPEND_SECCOMP) == 0)
		return 0;
	if ((errno == EPERM || errno == EINVAL) && ptrace(PTRACE_SETOPTIONS, tid, 0, opts) == 0)
		return 0;
	return crf_error_errno(errno, "thread %d: PTRACE_SETOPTIONS", (int)tid);
}

int ptrace_suspend_seccomp(pid_t tid)
{
	if (ptrace(PTRACE_SETOPTIONS, tid, 0, PTRACE_O_TRACESYSGOOD | PTRACE_O_SUSPEND_SECCOMP) < 0)
		return -errno;
	return 0;
}

int ptrace_get_sigmask(pid_t tid, uint64_t *mask)
{
	if (ptrace(PTRACE_GETSIGMASK, tid, sizeof(*mask), mask) < 0)
		return crf_error_errno(errno, "thread %d: PTRACE_GETSIGMASK", (int)tid);
	return 0;
}

int ptrace_set_sigmask(pid_t tid, uint64_t mask)
{
	if (ptrace(PTRACE_SETSIGMASK, tid, sizeof(mask), &mask) < 0)
		return crf_error_errno(errno, "thread %d: PTRACE_SETSIGMASK", (int)tid);
	return 0;
}

int ptrace_get_siginfo(pid_t tid, siginfo_t *si)
{
	if (ptrace(PTRACE_GETSIGINFO, tid, 0, si) < 0)
		return crf_error_errno(errno, "thread %d: PTRACE_GETSIGINFO", (int)tid);
	return 0;
}

int ptrace_get_gp(pid_t tid, struct user_regs_struct *gp)
{
	struct iovec iov = {gp, sizeof(*gp)};

	if (ptrace(PTRACE_GETREGSET, tid, NT_PRSTATUS, &iov) < 0)
		return crf_error_errno(errno, "thread %d: reading registers", (int)tid);
	return 0;
}

int ptrace_set_gp(pid_t tid, const struct user_regs_struct *gp)
{
	struct iovec iov = {(void *)gp, sizeof(*gp)};

	if (ptrace(PTRACE_SETREGSET, tid, NT_PRSTATUS, &iov) < 0)
		return crf_error_errno(errno, "thread %d: writing registers", (int)tid);
	return 0;
}

/*
 * The XSAVE layout's size depends on the CPU and on what the process was
 * permitted (AMX): ask with a buffer larger than any, and the kernel says in
 * iov_len how much it wrote.
 */
int crf_regs_get(pid_t tid, struct crf_regs *r)
{
	struct iovec iov;
	void *xs;
	int ret;

	memset(r, 0, sizeof(*r));
	ret = ptrace_get_gp(tid, &r->gp);
	if (ret < 0)
		return ret;
	xs = malloc(XSAVE_ASK);
	if (!xs)
		return crf_error_errno(ENOMEM, "thread %d: XSAVE buffer", (int)tid);
	iov = (struct iovec){xs, XSAVE_ASK};
	if (ptrace(PTRACE_GETREGSET, tid, NT_X86_XSTATE, &iov) < 0) {
		free(xs);
		return crf_error_errno(errno, "thread %d: reading the XSAVE area", (int)tid);
	}
	r->xsave = realloc(xs, iov.iov_len) ?: xs;
	r->xsave_len = iov.iov_len;
	return 0;
}

int crf_regs_set(pid_t tid, const struct crf_regs *r)
{
	struct iovec iov = {r->xsave, r->xsave_len};

	if (r->xsave && ptrace(PTRACE_SETREGSET, tid, NT_X86_XSTATE, &iov) < 0)
		return crf_error_errno(errno, "thread %d: writing the XSAVE area", (int)tid);
	return ptrace_set_gp(tid, &r->gp);
}

void crf_regs_free(struct crf_regs *r)
{
	free(r->xsave);
	r->xsave = NULL;
	r->xsave_len = 0;
}
