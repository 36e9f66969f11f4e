// SPDX-License-Identifier: GPL-2.0-only
/*
 * Freezing a process: every thread seized and in a ptrace-stop.  See
 * freeze.h for the modes.
 *
 * A signal that arrives while a thread is being stopped shows up as a
 * signal-delivery-stop before the interrupt-stop.  It is passed on at once
 * (PTRACE_CONT with the signal), exactly as the kernel would have
 * delivered it without crf: a handler gets its frame and the thread then
 * stops at the handler's first instruction; a stop signal starts a
 * group-stop; a fatal one kills the process, as it would have anyway.  So
 * the freeze never holds a signal back, and nothing has to be re-injected
 * at detach.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <crf/log.h>

#include "crf-private.h"
#include "freeze-cgroup.h"
#include "guardian.h"
#include "freeze.h"
#include "procfs.h"
#include "ptrace.h"
#include "util.h"

#define STOP_TIMEOUT_MS	  10000
#define CGROUP_TIMEOUT_MS 10000
#define MAX_SCANS	  1000

enum crf_freeze_mode freeze_mode_parse(const char *s)
{
	if (!s || !strcmp(s, "auto"))
		return CRF_FREEZE_AUTO;
	if (!strcmp(s, "cgroup"))
		return CRF_FREEZE_CGROUP;
	if (!strcmp(s, "ptrace"))
		return CRF_FREEZE_PTRACE;
	return CRF_FREEZE_INVALID;
}

const char *freeze_mode_name(enum crf_freeze_mode mode)
{
	switch (mode) {
	case CRF_FREEZE_AUTO:
		return "auto";
	case CRF_FREEZE_CGROUP:
		return "cgroup";
	case CRF_FREEZE_PTRACE:
		return "ptrace";
	default:
		return "invalid";
	}
}

static bool has_tid(const struct crf_frozen *f, pid_t tid)
{
	for (size_t i = 0; i < f->n_tids; i++)
		if (f->tids[i] == tid)
			return true;
	return false;
}

/*
 * Wait for the interrupt- or group-stop of a seized and interrupted thread.
 * The kernel reports a thread of a group that is stopped, or stopping,
 * with the group stop's signal instead of SIGTRAP: that goes to *@stop_sig.
 */
static int wait_stopped(pid_t tid, int *stop_sig)
{
	struct crf_stop st;
	int r;

	for (;;) {
		r = ptrace_wait(tid, STOP_TIMEOUT_MS, &st);
		if (r == -ETIMEDOUT)
			return crf_error_errno(ETIMEDOUT, "thread %d did not stop within %d ms",
					       (int)tid, STOP_TIMEOUT_MS);
		if (r < 0)
			return r;
		switch (st.kind) {
		case CRF_STOP_EXITED:
			return -ESRCH;
		case CRF_STOP_EVENT:
			if (st.sig != SIGTRAP)
				*stop_sig = st.sig;
			return 0;
		case CRF_STOP_SIGNAL: /* deliver it now: see the top of the file */
			r = ptrace_resume(tid, false, st.sig);
			break;
		default:
			r = ptrace_resume(tid, false, 0);
			break;
		}
		if (r < 0)
			return r;
	}
}

/*
 * Only once the thread is stopped: from the seize to the stop the program
 * still runs, and its own system calls must meet its filters.  A refusal
 * is kept, not logged: it matters only for a thread under seccomp.
 */
static void suspend_seccomp(struct crf_frozen *f, pid_t tid)
{
	int r = ptrace_suspend_seccomp(tid);

	if (r < 0 && !f->seccomp_unsuspended) {
		f->seccomp_unsuspended = r;
		crf_debug("pid %d: no PTRACE_O_SUSPEND_SECCOMP: %s", (int)f->pid, strerror(-r));
	}
}

/*
 * Seize and stop every thread of /proc/PID/task not stopped yet.  Returns
 * how many were added; threads that exited meanwhile are skipped.
 */
static int stop_new_threads(struct crf_frozen *f)
{
	_cleanup_free_ pid_t *tids = NULL;
	size_t n, first = f->n_tids;
	pid_t *grown;
	int r;

	r = list_tids(f->pid, &tids, &n);
	if (r < 0)
		return r;
	grown = realloc(f->tids, (f->n_tids + n) * sizeof(*grown));
	if (!grown)
		return crf_error_errno(ENOMEM, "thread list");
	f->tids = grown;
	/* The leader first, as struct crf_frozen promises. */
	for (size_t i = 1; i < n; i++) {
		if (tids[i] == f->pid) {
			tids[i] = tids[0];
			tids[0] = f->pid;
		}
	}
	/* Seize and interrupt them all first, so that they stop together. */
	for (size_t i = 0; i < n; i++) {
		if (has_tid(f, tids[i]))
			continue;
		r = ptrace_seize(tids[i]);
		if (r == -ESRCH)
			continue;
		if (r < 0)
			return r;
		f->tids[f->n_tids++] = tids[i];
		r = ptrace_interrupt(tids[i]);
		if (r < 0 && r != -ESRCH)
			return r;
	}
	for (size_t i = first; i < f->n_tids;) {
		r = wait_stopped(f->tids[i], &f->stop_sig);
		if (r >= 0)
			suspend_seccomp(f, f->tids[i]);
		if (r == -ESRCH && f->tids[i] != f->pid) {
			/* Gone: the tracer's report was its last word; forget it. */
			memmove(&f->tids[i], &f->tids[i + 1], (--f->n_tids - i) * sizeof(pid_t));
			continue;
		}
		if (r == -ESRCH)
			return crf_error_errno(ESRCH, "pid %d exited while being frozen",
					       (int)f->pid);
		if (r < 0)
			return r;
		i++;
	}
	return (int)(f->n_tids - first);
}

/* Until a scan finds no thread that is not stopped yet. */
static int stop_all_threads(struct crf_frozen *f)
{
	for (int scan = 0; scan < MAX_SCANS; scan++) {
		int r = stop_new_threads(f);

		if (r <= 0)
			return r;
	}
	return crf_error_errno(EAGAIN, "pid %d keeps creating threads", (int)f->pid);
}

static void detach_all(struct crf_frozen *f)
{
	for (size_t i = 0; i < f->n_tids; i++)
		ptrace_detach(f->tids[i], 0);
	f->n_tids = 0;
}

static void frozen_free(struct crf_frozen *f)
{
	free(f->tids);
	free(f);
}

/* Pick the mode; fill @cg for cgroup mode. */
static int choose_mode(pid_t pid, enum crf_freeze_mode mode, char *cg, size_t len)
{
	char why[512];
	int r;

	if (mode == CRF_FREEZE_PTRACE)
		return CRF_FREEZE_PTRACE;
	r = cgroup_of_lone(pid, cg, len, why, sizeof(why));
	if (r == -EBUSY && mode == CRF_FREEZE_AUTO) {
		crf_debug("freeze: not using the cgroup freezer: %s", why);
		return CRF_FREEZE_PTRACE;
	}
	if (r == -EBUSY)
		return crf_error_errno(EBUSY, "cannot freeze pid %d with its cgroup: %s", (int)pid,
				       why);
	return r < 0 ? r : CRF_FREEZE_CGROUP;
}

static int check_target(pid_t pid)
{
	char path[64];

	if (pid <= 0)
		return crf_error_errno(EINVAL, "invalid pid %d", (int)pid);
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (access(path, F_OK) < 0)
		return crf_error_errno(errno == ENOENT ? ESRCH : errno, "pid %d", (int)pid);
	return 0;
}

static void stamp(struct crf_frozen *f, const struct timespec *t0)
{
	clock_gettime(CLOCK_MONOTONIC, &f->frozen_at);
	f->freeze_ms = (f->frozen_at.tv_sec - t0->tv_sec) * 1e3 +
		       (f->frozen_at.tv_nsec - t0->tv_nsec) / 1e6;
}

int crf_freeze(pid_t pid, enum crf_freeze_mode mode, struct crf_frozen **out)
{
	struct crf_frozen *f;
	struct timespec t0;
	char cg[4096];
	int r, m;

	*out = NULL;
	if (mode < CRF_FREEZE_AUTO || mode > CRF_FREEZE_PTRACE)
		return crf_error_errno(EINVAL, "freeze mode %d: expected auto, cgroup or ptrace",
				       (int)mode);
	r = check_target(pid);
	if (r < 0)
		return r;
	m = choose_mode(pid, mode, cg, sizeof(cg));
	if (m < 0)
		return m;
	f = calloc(1, sizeof(*f));
	if (!f)
		return crf_error_errno(ENOMEM, "freeze");
	f->pid = pid;
	f->mode = m;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (m == CRF_FREEZE_CGROUP) {
		guardian_frozen(cg);
		r = crf_cgroup_freeze(cg, CGROUP_TIMEOUT_MS);
		/* The tests' one chance to kill crf with the cgroup frozen (its guardian thaws it).
		 */
		if (r >= 0 && (r = crf__fault("cgroup frozen", false)) < 0)
			cgroup_thaw(cg);
		if (r < 0) {
			guardian_thawed();
			frozen_free(f);
			return r;
		}
	}
	r = stop_all_threads(f);
	if (r >= 0)
		stamp(f, &t0);
	/* The threads stay in their ptrace-stops; the cgroup is not needed any more. */
	if (m == CRF_FREEZE_CGROUP) {
		int c = cgroup_thaw(cg);

		if (c >= 0)
			guardian_thawed();
		if (r >= 0)
			r = c;
	}
	if (r < 0) {
		detach_all(f);
		frozen_free(f);
		return r;
	}
	crf_info("pid %d frozen with the %s freezer: %zu thread%s in %.2f ms", (int)pid,
		 freeze_mode_name(f->mode), f->n_tids, f->n_tids == 1 ? "" : "s", f->freeze_ms);
	*out = f;
	return 0;
}

double crf_frozen_ms(const struct crf_frozen *f)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - f->frozen_at.tv_sec) * 1e3 + (t.tv_nsec - f->frozen_at.tv_nsec) / 1e6;
}

int crf_unfreeze(struct crf_frozen *f)
{
	int r = 0;

	if (!f)
		return 0;
	for (size_t i = 0; i < f->n_tids; i++) {
		int c = ptrace_detach(f->tids[i], 0);

		if (c == -ESRCH)
			crf_warn("thread %d was gone at unfreeze", (int)f->tids[i]);
		else if (c < 0 && r >= 0)
			r = c;
	}
	frozen_free(f);
	return r;
}

/* The parent of @pid, from /proc/PID/status. */
static pid_t parent_of(pid_t pid)
{
	_cleanup_free_ char *text = NULL;
	char path[64];
	const char *p;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (crf_read_file(path, &text) < 0)
		return -1;
	p = strstr(text, "\nPPid:");
	return p ? (pid_t)atoi(p + 6) : -1;
}

/*
 * As tracer, crf gets each thread's exit report and must collect it: a
 * traced thread stays a zombie until then, and the leader cannot be reaped
 * by its parent before its threads are.  The leader is left to its parent
 * when that is us.
 */
int crf_frozen_kill(struct crf_frozen *f)
{
	bool ours = parent_of(f->pid) == getpid();
	struct crf_stop st;
	int r = 0;

	if (kill(f->pid, SIGKILL) < 0)
		r = crf_error_errno(errno, "killing pid %d", (int)f->pid);
	/*
	 * The other threads first (the leader comes first in tids): a dead
	 * leader is reported only once every other thread of its group has
	 * been collected, and as their tracer crf is the one to collect them.
	 */
	for (size_t k = f->n_tids; r >= 0 && k-- > 0;) {
		if (ours && f->tids[k] == f->pid)
			continue;
		do {
			if (ptrace_wait(f->tids[k], STOP_TIMEOUT_MS, &st) < 0)
				break;
		} while (st.kind != CRF_STOP_EXITED);
	}
	frozen_free(f);
	return r;
}
