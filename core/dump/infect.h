/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * infect.h - putting the parasite into a frozen task, calling it, and
 * taking it out again (docs/parasite.md).
 *
 * The task must be ptrace-stopped by crf (crf_freeze).  While infected it
 * stays stopped between calls; each call runs the parasite in the task
 * until it traps back.  crf_cure() leaves the task exactly as it was: same
 * registers (general and XSAVE), same signal mask, same mappings, the code
 * bytes crf borrowed put back, and the thread again in a ptrace
 * interrupt-stop.
 *
 * Every function returns 0 (or the value named) or a negative errno, and
 * logs its failures.
 */
#ifndef CRF_INFECT_H
#define CRF_INFECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <crf/layout.h>
#include "crf-private.h"

struct crf_parasite;

/*
 * Infect the thread @pid (the leader of a frozen process; only
 * single-threaded processes for now).  On failure the task is left as it
 * was, still stopped.
 */
int crf_infect(pid_t pid, struct crf_parasite **out);

/*
 * Remove the parasite: unmap it, restore the signal mask, the registers and
 * the SIGTRAP disposition, requeue signals that arrived meanwhile, stop the
 * thread in an interrupt-stop again.  Tries every step even after a failure;
 * returns the first error.  Always frees @p (NULL is fine).
 */
int crf_cure(struct crf_parasite *p);

/*
 * Run system call @nr with @args in the task.  Returns the kernel's result
 * (a negative errno when the call failed), or a negative errno when the
 * parasite could not run it (logged; the task died, say).
 */
long parasite_syscall_raw(struct crf_parasite *p, long nr, const long args[6]);

/* A disposition as the kernel stores it (struct sigaction of the syscall ABI). */
struct crf_sigaction_info {
	uint64_t handler; /* SIG_DFL (0), SIG_IGN (1) or an address */
	uint64_t flags;	  /* SA_* */
	uint64_t restorer;
	uint64_t mask; /* signal n is bit n - 1 */
};

/* All 64 dispositions, out[sig - 1]; SIGKILL and SIGSTOP read as SIG_DFL. */
int parasite_get_sigactions(struct crf_parasite *p, struct crf_sigaction_info out[64]);

struct crf_sigaltstack_info {
	uint64_t sp, size;
	int flags; /* SS_DISABLE, SS_AUTODISARM; SS_ONSTACK as of the freeze */
};

int parasite_get_sigaltstack(struct crf_parasite *p, struct crf_sigaltstack_info *out);

struct crf_itimer_info {
	int64_t interval_sec, interval_usec;
	int64_t value_sec, value_usec;
};

/* ITIMER_REAL, ITIMER_VIRTUAL, ITIMER_PROF, in that order. */
int parasite_get_itimers(struct crf_parasite *p, struct crf_itimer_info out[CRF_ITIMERS]);

struct crf_posix_timer_info {
	int id;	     /* in: the kernel's timer id (/proc/PID/timers) */
	int err;     /* out: 0, or timer_gettime's -errno for this id */
	int overrun; /* out: timer_getoverrun */
	int64_t interval_sec, interval_nsec;
	int64_t value_sec, value_nsec; /* time left; 0 when disarmed */
};

/* @t[i].id given, the rest filled in; at most CRF_PSITE_MAX_TIMERS (256) at once. */
int parasite_get_posix_timers(struct crf_parasite *p, struct crf_posix_timer_info *t, size_t n);

/* prctl(PR_GET_SECUREBITS): the value, or -errno. */
long parasite_get_securebits(struct crf_parasite *p);

/*
 * The scratch buffer in the task, for system call arguments: its address
 * there and its size.
 */
int parasite_scratch_area(struct crf_parasite *p, uint64_t *addr, size_t *size);

/* Move @len bytes between crf and any address of the task (/proc/PID/mem). */
int crf_parasite_rw(struct crf_parasite *p, uint64_t addr, void *buf, size_t len, bool write);

/*
 * The parasite's own mapping in the task (blob, stack, arguments and
 * scratch), which a memory dump must leave out.
 */
void parasite_area(const struct crf_parasite *p, uint64_t *start, size_t *len);

/* The registers as crf_infect() found them: what crf_cure() puts back. */
struct crf_regs;
const struct crf_regs *parasite_saved_regs(const struct crf_parasite *p);

/*
 * The task's blocked signals, read after its first resume: the mask it
 * has of its own, where /proc/PID/status still shows the one a sigsuspend,
 * ppoll or pselect it was stopped in had put in its place.
 */
uint64_t parasite_blocked(const struct crf_parasite *p);

/* One system call for parasite_thread_calls(); @ret is its %rax. */
struct crf_thread_call {
	long nr;
	long args[6];
	long ret;
};

/*
 * Run @n system calls, in order, in thread @tid of the infected process
 * (another thread than the infected one, frozen like it): what only that
 * thread can read (its sigaltstack, its clear_child_tid address).  They run
 * from the bootstrap's borrowed `syscall` with every signal blocked; memory
 * arguments may point into the scratch area (the threads share it).  The
 * thread gets its registers and mask back and is parked in an
 * interrupt-stop again, as the freeze left it.  0 or -errno (logged) when
 * the thread could not run them; each call's own result is in @ret.
 */
int parasite_thread_calls(struct crf_parasite *p, pid_t tid, struct crf_thread_call *c, size_t n);

/*
 * The host table of the dump-task stage: parasite_syscall, parasite_scratch,
 * parasite_rw and parasite_mapping, with @task being the struct
 * crf_parasite *.
 */
extern const struct crf_host_ops crf_dump_host_ops;

#endif
