/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ptrace.h - the ptrace requests the freezer and the parasite injector use,
 * each returning 0 or a negative errno and logging its own failure (except
 * -ESRCH, which callers often expect: a thread that exited).
 */
#ifndef CRF_PTRACE_H
#define CRF_PTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

/* How a traced thread reported in. */
enum crf_stop_kind {
	CRF_STOP_EXITED,  /* it exited or was killed; @status says how */
	CRF_STOP_EVENT,	  /* PTRACE_EVENT_STOP: an interrupt or a group-stop */
	CRF_STOP_SIGNAL,  /* signal-delivery-stop for @sig */
	CRF_STOP_SYSCALL, /* syscall-enter or -exit stop (PTRACE_O_TRACESYSGOOD) */
	CRF_STOP_OTHER,	  /* another PTRACE_EVENT_* stop */
};

struct crf_stop {
	enum crf_stop_kind kind;
	int sig;    /* WSTOPSIG, or the signal that killed it */
	int status; /* as waitpid returned it */
};

/*
 * Attach to @tid with PTRACE_SEIZE (the thread keeps running) and the only
 * option that outlives nothing: PTRACE_O_TRACESYSGOOD.  -ESRCH: no such
 * thread (not logged).
 */
int ptrace_seize(pid_t tid);

/* Ask the seized @tid to stop (PTRACE_INTERRUPT); -ESRCH is not logged. */
int ptrace_interrupt(pid_t tid);

/*
 * Wait for the next report of the traced @tid.  @timeout_ms < 0 waits
 * without limit; otherwise -ETIMEDOUT (not logged) when nothing came.
 */
int ptrace_wait(pid_t tid, int timeout_ms, struct crf_stop *st);

/* PTRACE_CONT (@syscall false) or PTRACE_SYSCALL, delivering @sig (0: none). */
int ptrace_resume(pid_t tid, bool syscall, int sig);

/* PTRACE_DETACH, resuming @tid; -ESRCH when it is gone (not logged). */
int ptrace_detach(pid_t tid, int sig);

/*
 * PTRACE_O_EXITKILL on or off (PTRACE_O_TRACESYSGOOD stays on).  It is on
 * only while the parasite is in the task: see infect.c.
 */
int ptrace_set_exitkill(pid_t tid, bool on);

/*
 * Add PTRACE_O_SUSPEND_SECCOMP to the stopped, seized @tid: its seccomp
 * filters or strict mode no longer judge its system calls until crf
 * detaches (then the kernel drops every option), so crf's injected calls
 * run whatever the program's filters say.  Asked only of a stopped thread:
 * between the seize and the stop the program's own calls would escape its
 * filters.  0 or -errno, not logged: -EPERM (crf itself is under seccomp, or
 * lacks CAP_SYS_ADMIN), -EINVAL (a kernel without CONFIG_CHECKPOINT_RESTORE).
 */
int ptrace_suspend_seccomp(pid_t tid);

/* The blocked-signal mask of a stopped thread (PTRACE_GETSIGMASK/SETSIGMASK). */
int ptrace_get_sigmask(pid_t tid, uint64_t *mask);
int ptrace_set_sigmask(pid_t tid, uint64_t mask);

/* The siginfo of the current stop. */
int ptrace_get_siginfo(pid_t tid, siginfo_t *si);

/* General-purpose registers (NT_PRSTATUS; includes fs_base and gs_base). */
int ptrace_get_gp(pid_t tid, struct user_regs_struct *gp);
int ptrace_set_gp(pid_t tid, const struct user_regs_struct *gp);

/* Everything a thread's user code can see in its registers. */
struct crf_regs {
	struct user_regs_struct gp;
	void *xsave; /* the NT_X86_XSTATE area, as the kernel gives it */
	size_t xsave_len;
};

/* Read both sets; @r->xsave is allocated (free with crf_regs_free). */
int crf_regs_get(pid_t tid, struct crf_regs *r);
/* Write both back, the XSAVE area first (it does not cover the GP registers). */
int crf_regs_set(pid_t tid, const struct crf_regs *r);
void crf_regs_free(struct crf_regs *r);

#endif
