// SPDX-License-Identifier: GPL-2.0-only
/*
 * Task attributes at the dump (see task-attrs.h).  loginuid and
 * oom_score_adj are in /proc; the prctl() values, the membarrier
 * registrations and whether a stopped child's stop was already waited for
 * are only the task's own to read, so its parasite makes the calls.
 */
#include <asm/prctl.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "infect.h"
#include "procfs.h"
#include "pstree-dump.h"
#include "task-attrs.h"
#include "util.h"

/* Offset of child_pid in siginfo_t (after si_signo, si_errno, si_code and a hole). */
#define SI_PID_OFF 16

void task_note_stop(Crf__Core__TaskCore *tc, int sig)
{
	if (tc->stop_signal)
		return;
	tc->has_stop_signal = true;
	tc->stop_signal = (uint32_t)sig;
}

/* A system call in the task; the kernel's result or -errno. */
static long psys(struct crf_parasite *p, long nr, long a0, long a1, long a2, long a3)
{
	const long args[6] = {a0, a1, a2, a3};

	return parasite_syscall_raw(p, nr, args);
}

/* -ENOENT (not logged) when the file does not exist (loginuid: a kernel without audit). */
static int read_number(const char *path, long long *v)
{
	_cleanup_free_ char *text = NULL;
	char *end;
	int r;

	r = crf_read_file(path, &text);
	if (r == -ENOENT)
		return r;
	if (r < 0)
		return crf_error_errno(r, "%s", path);
	errno = 0;
	*v = strtoll(text, &end, 10);
	if (end == text || errno)
		return crf_error_errno(EINVAL, "%s: not a number: %.20s", path, text);
	return 0;
}

static int oom_score_adj(const struct crf_proc *pr, Crf__Core__TaskCore *tc)
{
	char path[80];
	long long v = 0;
	int r;

	snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", (int)pr->pid);
	r = read_number(path, &v);
	if (r < 0)
		return r == -ENOENT ? crf_error_errno(ENOENT, "%s", path) : r;
	tc->has_oom_score_adj = true;
	tc->oom_score_adj = (int32_t)v;
	return 0;
}

/*
 * loginuid is per thread, but the restorer creates the threads with the
 * leader's and a thread cannot set its own once the credentials are the
 * program's: one that differs is refused.
 */
static int loginuid_oom(const struct crf_proc *pr, Crf__Core__TaskCore *tc)
{
	char path[80];
	long long v = 0, t = 0;
	int r;

	snprintf(path, sizeof(path), "/proc/%d/loginuid", (int)pr->pid);
	r = read_number(path, &v);
	if (r == -ENOENT)
		return oom_score_adj(pr, tc);
	for (size_t i = 0; r >= 0 && i < pr->frozen->n_tids; i++) {
		pid_t tid = pr->frozen->tids[i];

		if (tid == pr->pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/loginuid", (int)pr->pid, (int)tid);
		r = read_number(path, &t);
		if (r >= 0 && t != v)
			r = crf_error_errno(
				ENOTSUP,
				"pid %d: thread %d has loginuid %lld, the process %lld: "
				"a thread's own loginuid cannot be restored",
				(int)pr->pid, (int)tid, t, v);
	}
	if (r < 0)
		return r;
	tc->has_loginuid = true;
	tc->loginuid = (uint32_t)v;
	return oom_score_adj(pr, tc);
}

/*
 * The registrations, from MEMBARRIER_CMD_GET_REGISTRATIONS (6.3+).  An
 * older kernel does not say; a private expedited command then fails with
 * EPERM where the process is not registered for it, but nothing shows a
 * registration for MEMBARRIER_CMD_GLOBAL_EXPEDITED (docs: Known limits).
 */
static int membarrier(struct crf_parasite *p, pid_t pid, Crf__Core__TaskCore *tc)
{
	static const uint32_t probe[][2] = {
		{CRF_MB_PRIVATE_EXPEDITED, CRF_MB_REGISTER_PRIVATE_EXPEDITED},
		{CRF_MB_PRIVATE_EXPEDITED_SYNC_CORE, CRF_MB_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE},
		{CRF_MB_PRIVATE_EXPEDITED_RSEQ, CRF_MB_REGISTER_PRIVATE_EXPEDITED_RSEQ},
	};
	long q = psys(p, SYS_membarrier, CRF_MB_QUERY, 0, 0, 0), r;

	tc->has_membarrier = true;
	if (q == -ENOSYS)
		return 0;
	if (q < 0)
		return crf_error_errno((int)-q, "pid %d: membarrier(MEMBARRIER_CMD_QUERY)",
				       (int)pid);
	if (q & CRF_MB_GET_REGISTRATIONS) {
		r = psys(p, SYS_membarrier, CRF_MB_GET_REGISTRATIONS, 0, 0, 0);
		if (r < 0)
			return crf_error_errno((int)-r, "pid %d: membarrier registrations",
					       (int)pid);
		tc->membarrier = (uint32_t)r;
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(probe); i++) {
		if (!(q & probe[i][0]))
			continue;
		r = psys(p, SYS_membarrier, probe[i][0], 0, 0, 0);
		if (r == 0)
			tc->membarrier |= probe[i][1];
		else if (r != -EPERM)
			return crf_error_errno((int)-r, "pid %d: membarrier command %#x", (int)pid,
					       probe[i][0]);
	}
	crf_debug("pid %d: this kernel does not tell a global expedited membarrier registration",
		  (int)pid);
	return 0;
}

/*
 * Modes crf does not restore, refused unless at their defaults (the
 * leader's; each is inherited by the threads it makes): rdtsc faulting
 * (PR_SET_TSC), cpuid faulting (ARCH_SET_CPUID), a machine-check kill
 * policy of its own (PR_MCE_KILL).  A kernel without one (EINVAL) has it
 * off.  (Memory-deny-write-execute, PR_SET_MDWE, is refused earlier: the
 * parasite cannot be made executable under it, infect.c.)
 */
static int refuse_modes(struct crf_parasite *p, pid_t pid, uint64_t scratch)
{
	int32_t tsc = PR_TSC_ENABLE;
	long mce = psys(p, SYS_prctl, PR_MCE_KILL_GET, 0, 0, 0);
	long cpuid = psys(p, SYS_arch_prctl, ARCH_GET_CPUID, 0, 0, 0);
	long t = psys(p, SYS_prctl, PR_GET_TSC, (long)scratch + 8, 0, 0);
	int r = t < 0 ? (int)t : crf_parasite_rw(p, scratch + 8, &tsc, sizeof(tsc), false);

	if (r < 0 && r != -EINVAL)
		return crf_error_errno(-r, "pid %d: prctl(PR_GET_TSC)", (int)pid);
	if (tsc != PR_TSC_ENABLE)
		return crf_error_errno(
			ENOTSUP,
			"pid %d: rdtsc faults (PR_SET_TSC PR_TSC_SIGSEGV), which crf "
			"does not restore",
			(int)pid);
	if (cpuid == 0)
		return crf_error_errno(
			ENOTSUP,
			"pid %d: cpuid faults (ARCH_SET_CPUID 0), which crf does not "
			"restore",
			(int)pid);
	if (mce >= 0 && mce != PR_MCE_KILL_DEFAULT)
		return crf_error_errno(
			ENOTSUP,
			"pid %d: a machine-check kill policy of its own (PR_MCE_KILL "
			"%s), which crf does not restore",
			(int)pid, mce == PR_MCE_KILL_EARLY ? "early" : "late");
	return 0;
}

/* The leader's prctl() state; two answer through memory (the scratch area). */
static int prctls(struct crf_parasite *p, pid_t pid, Crf__Core__TaskCore *tc)
{
	enum { THP, SLACK, DUMPABLE, PDEATH, SUBREAPER, N };
	static const char *const name[N] = {"PR_GET_THP_DISABLE", "PR_GET_TIMERSLACK",
					    "PR_GET_DUMPABLE", "PR_GET_PDEATHSIG",
					    "PR_GET_CHILD_SUBREAPER"};
	int32_t mem[2] = {0, 0};
	uint64_t scratch;
	long v[N];
	size_t size;
	int r;

	r = parasite_scratch_area(p, &scratch, &size);
	if (r >= 0)
		r = crf_parasite_rw(p, scratch, mem, sizeof(mem), true);
	if (r < 0)
		return r;
	v[THP] = psys(p, SYS_prctl, PR_GET_THP_DISABLE, 0, 0, 0);
	v[SLACK] = psys(p, SYS_prctl, PR_GET_TIMERSLACK, 0, 0, 0);
	v[DUMPABLE] = psys(p, SYS_prctl, PR_GET_DUMPABLE, 0, 0, 0);
	v[PDEATH] = psys(p, SYS_prctl, PR_GET_PDEATHSIG, (long)scratch, 0, 0);
	v[SUBREAPER] = psys(p, SYS_prctl, PR_GET_CHILD_SUBREAPER, (long)scratch + 4, 0, 0);
	for (int i = 0; i < N; i++)
		if (v[i] < 0)
			return crf_error_errno((int)-v[i], "pid %d: prctl(%s)", (int)pid, name[i]);
	r = crf_parasite_rw(p, scratch, mem, sizeof(mem), false);
	if (r < 0)
		return r;
	if (v[DUMPABLE] > 1)
		return crf_error_errno(
			ENOTSUP,
			"pid %d is dumpable by root only (PR_GET_DUMPABLE %ld, after "
			"a change of credentials with fs.suid_dumpable 2): prctl "
			"cannot set that value",
			(int)pid, v[DUMPABLE]);
	r = size >= 12 ? refuse_modes(p, pid, scratch) : -ENOSPC;
	if (r < 0)
		return r;
	tc->has_thp_disable = tc->has_timer_slack_ns = tc->has_dumpable = true;
	tc->has_pdeath_signal = tc->has_child_subreaper = true;
	tc->thp_disable = (uint32_t)v[THP];
	tc->timer_slack_ns = (uint64_t)v[SLACK];
	tc->dumpable = (uint32_t)v[DUMPABLE];
	tc->pdeath_signal = (uint32_t)mem[0];
	tc->child_subreaper = mem[1] != 0;
	return 0;
}

/*
 * A process in a group stop comes back in it: crf delivers the stop's
 * signal again as it lets the task go (rst-release.c).  A job-control
 * signal stops only with its default action, which it must still have.
 */
static int stop_state(const struct crf_proc *pr, Crf__Core__TaskCore *tc)
{
	if (pr->frozen->stop_sig) {
		tc->has_stop_signal = true;
		tc->stop_signal = (uint32_t)pr->frozen->stop_sig;
	}
	if (!tc->stop_signal || tc->stop_signal == SIGSTOP)
		return 0;
	for (size_t i = 0; i < tc->n_sigactions; i++)
		if (tc->sigactions[i]->sig == tc->stop_signal &&
		    tc->sigactions[i]->handler != (uint64_t)(uintptr_t)SIG_DFL)
			return crf_error_errno(ENOTSUP,
					       "pid %d is stopped by %s, which it now handles or "
					       "ignores: delivering it again would not stop it",
					       (int)pr->pid, strsignal((int)tc->stop_signal));
	return 0;
}

static int add_pid(int32_t **v, size_t *n, pid_t pid)
{
	int32_t *w = reallocarray(*v, *n + 1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	*v = w;
	w[(*n)++] = pid;
	return 0;
}

/*
 * The children of @pr in a group stop, and which of them @pr had already
 * waited for (WUNTRACED): a stop is reported to the parent once, and the
 * restored stop reports again (the restorer takes it back).  waitid with
 * WNOWAIT looks without taking it; the child's PID is @pr's name for it.
 */
static int stopped_children(const struct crf_pstree *t, const struct crf_proc *pr,
			    struct crf_parasite *p, Crf__Core__TaskCore *tc)
{
	unsigned int level = crf_proc_levels(pr) - 1;
	uint64_t scratch;
	size_t size;
	int r = parasite_scratch_area(p, &scratch, &size);

	for (size_t i = 0; r >= 0 && i < t->n; i++) {
		const struct crf_proc *c = &t->procs[i];
		uint8_t info[128] = {0};
		int32_t child_pid;
		pid_t cpid;
		long w;

		if (c->ppid != pr->pid || !c->frozen || !c->frozen->stop_sig)
			continue;
		if (crf_proc_levels(c) <= level)
			return crf_error_errno(EINVAL,
					       "pid %d: child %d is in an outer PID namespace",
					       (int)pr->pid, (int)c->pid);
		cpid = c->ns_pid[level];
		r = crf_parasite_rw(p, scratch, info, sizeof(info), true);
		w = r < 0 ? r
			  : psys(p, SYS_waitid, P_PID, cpid, (long)scratch,
				 WSTOPPED | WNOHANG | WNOWAIT | __WALL);
		if (w < 0)
			return crf_error_errno((int)-w, "pid %d: waitid for its stopped child %d",
					       (int)pr->pid, (int)c->pid);
		r = crf_parasite_rw(p, scratch, info, sizeof(info), false);
		memcpy(&child_pid, info + SI_PID_OFF, sizeof(child_pid));
		if (r >= 0)
			r = add_pid(&tc->stopped_children, &tc->n_stopped_children, cpid);
		if (r >= 0 && child_pid != cpid)
			r = add_pid(&tc->stop_waited, &tc->n_stop_waited, cpid);
	}
	return r < 0 ? r : 0;
}

static bool listed(const char *children, pid_t pid)
{
	const char *p = children;
	char *end;

	for (;;) {
		long v = strtol(p, &end, 10);

		if (end == p)
			return false;
		if (v == pid)
			return true;
		p = end;
	}
}

/*
 * A parent-death signal fires when the thread that forked the process
 * exits, and the restore forks every process from its parent's leader: a
 * process whose parent thread was another is refused when one of its
 * threads has such a signal.  The root's parent is not in the tree (the
 * restore decides about it, attrs_check_restore()).
 */
static int pdeath_parent(const struct crf_pstree *t, const struct crf_proc *pr,
			 const Crf__Core__TaskCore *tc)
{
	_cleanup_free_ char *text = NULL;
	uint32_t sig = tc->pdeath_signal;
	char path[96];
	int r;

	for (size_t i = 1; !sig && i < tc->n_threads; i++)
		sig = tc->threads[i]->pdeath_signal;
	if (!sig || pr == &t->procs[0])
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pr->ppid, (int)pr->ppid);
	r = crf_read_file(path, &text);
	if (r < 0)
		return crf_error_errno(r, "%s", path);
	if (listed(text, pr->pid))
		return 0;
	return crf_error_errno(ENOTSUP,
			       "pid %d has a parent-death signal (%s) and was forked by a thread "
			       "of pid %d other than its leader: the restore forks it from the "
			       "leader, whose exit would fire it",
			       (int)pr->pid, strsignal((int)sig), (int)pr->ppid);
}

int attrs_dump(const struct crf_pstree *t, const struct crf_proc *pr, struct crf_parasite *p,
	       Crf__Core__TaskCore *tc)
{
	int r;

	r = loginuid_oom(pr, tc);
	if (r >= 0)
		r = membarrier(p, pr->pid, tc);
	if (r >= 0)
		r = prctls(p, pr->pid, tc);
	if (r >= 0)
		r = stop_state(pr, tc);
	if (r >= 0)
		r = stopped_children(t, pr, p, tc);
	if (r >= 0)
		r = pdeath_parent(t, pr, tc);
	return r;
}
