/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * freeze.h - stopping every thread of a process so that it can be read.
 *
 * Whatever the mode, the result is the same: every thread of the process
 * is seized with ptrace and sits in a ptrace-stop (an interrupt- or
 * group-stop), so its registers can be read and the parasite injected.
 * The modes differ in how the threads are kept from running meanwhile:
 *
 *   cgroup  the cgroup v2 freezer stops the whole cgroup at once (no thread
 *           can run or clone while the threads are seized), then the cgroup
 *           is thawed again: the threads stay in their ptrace-stops;
 *   ptrace  every thread is seized and interrupted, and /proc/PID/task is
 *           scanned again until no new thread shows up;
 *   auto    cgroup when the process is alone in a non-root cgroup that is
 *           not already frozen, else ptrace.
 */
#ifndef CRF_FREEZE_H
#define CRF_FREEZE_H

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

enum crf_freeze_mode {
	CRF_FREEZE_INVALID = -1,
	CRF_FREEZE_AUTO = 0,
	CRF_FREEZE_CGROUP,
	CRF_FREEZE_PTRACE,
};

struct crf_frozen {
	pid_t pid;
	pid_t *tids; /* every thread, the leader first */
	size_t n_tids;
	enum crf_freeze_mode mode; /* the one used: CGROUP or PTRACE */
	/* CLOCK_MONOTONIC when the last thread stopped (see crf_frozen_ms). */
	struct timespec frozen_at;
	/* How long freezing took, from the first request to the last stop. */
	double freeze_ms;
	/*
	 * The signal of the group stop the process is in (SIGSTOP, SIGTSTP,
	 * SIGTTIN, SIGTTOU), as its threads reported their freeze stop; 0
	 * when it was running.  The group stays stopped when crf detaches.
	 */
	int stop_sig;
	/*
	 * 0: every thread has PTRACE_O_SUSPEND_SECCOMP (crf's calls in the task
	 * pass its seccomp filters); else the -errno the kernel refused it
	 * with, and a thread under seccomp cannot be dumped (core/dump/seccomp-dump.c).
	 */
	int seccomp_unsuspended;
};

/* "auto", "cgroup", "ptrace" (NULL: auto); CRF_FREEZE_INVALID otherwise. */
enum crf_freeze_mode freeze_mode_parse(const char *s);
const char *freeze_mode_name(enum crf_freeze_mode mode);

/*
 * Freeze process @pid as @mode says, logging (info) the mode used.  On
 * success *@out holds the stopped threads; on failure nothing of @pid stays
 * stopped or seized and the error is logged: -ESRCH (no such process),
 * -EPERM, -ETIMEDOUT (a thread or the cgroup did not stop in time),
 * -EBUSY (cgroup mode: the cgroup holds other processes, or is the root).
 */
int crf_freeze(pid_t pid, enum crf_freeze_mode mode, struct crf_frozen **out);

/* Milliseconds since @f was frozen. */
double crf_frozen_ms(const struct crf_frozen *f);

/*
 * Detach from every thread, which resumes it (a thread that was in a
 * group-stop stays stopped, as the kernel puts it back).  Frees @f; returns
 * the first error, after trying every thread.
 */
int crf_unfreeze(struct crf_frozen *f);

/*
 * SIGKILL the process while it is still stopped, so it never runs again,
 * and collect the exit reports crf gets as tracer.  The process itself is
 * left for its parent to reap (when that is the caller, it must wait for
 * it).  Frees @f.
 */
int crf_frozen_kill(struct crf_frozen *f);

#endif
