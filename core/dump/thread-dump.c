// SPDX-License-Identifier: GPL-2.0-only
/*
 * Each thread's own state (ThreadCore in core-PID.img).  Most of it is
 * readable from outside for a traced thread: registers, mask and private
 * queue (ptrace), robust list (get_robust_list takes a TID), rseq,
 * scheduling (sched_* and getpriority take a TID), comm.  What only the
 * thread itself can read, its alternate signal stack, its clear_child_tid
 * address (PR_GET_TID_ADDRESS), its parent-death signal and its timer
 * slack: crf makes that very thread run the system calls
 * (parasite_thread_calls), the leader through its parasite.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "infect.h"
#include "procfs.h"
#include "pstree-dump.h"
#include "ptrace.h"
#include "task-attrs.h"
#include "task-dump.h"
#include "util.h"

#ifndef PR_GET_TID_ADDRESS
#define PR_GET_TID_ADDRESS 40
#endif
#define MAX_LEVELS 32

static int ns_tids(const char *text, const char *path, Crf__Core__ThreadCore *th)
{
	int n;

	th->ns_tid = calloc(MAX_LEVELS, sizeof(*th->ns_tid));
	if (!th->ns_tid)
		return -ENOMEM;
	n = parse_nspid(text, th->ns_tid, MAX_LEVELS);
	if (n <= 0 || th->ns_tid[0] != th->tid)
		return crf_error_errno(EINVAL, "%s: bad NSpid line", path);
	th->n_ns_tid = (size_t)n;
	return 0;
}

static bool same_creds(const struct crf_proc_status *st, const Crf__Core__Creds *c)
{
	const uint32_t u[8] = {c->uid, c->euid, c->suid, c->fsuid,
			       c->gid, c->egid, c->sgid, c->fsgid};

	return !memcmp(st->uid, u, sizeof(st->uid)) && !memcmp(st->gid, u + 4, sizeof(st->gid)) &&
	       st->cap_eff == c->cap_eff && st->cap_prm == c->cap_prm &&
	       st->cap_inh == c->cap_inh && st->cap_bnd == c->cap_bnd &&
	       st->cap_amb == c->cap_amb && st->n_groups == c->n_groups &&
	       !memcmp(st->groups, c->groups, c->n_groups * sizeof(*c->groups));
}

/*
 * The leader's TIDs are its PIDs, which the tree walk read from the same
 * NSpid line: no third read of its status file (task_collect_proc read
 * the second).
 */
static int leader_ns_tids(const struct crf_proc *pr, Crf__Core__ThreadCore *th)
{
	size_t n = crf_proc_levels(pr);

	th->ns_tid = malloc(n * sizeof(*th->ns_tid));
	if (!th->ns_tid)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		th->ns_tid[i] = pr->ns_pid[i];
	th->n_ns_tid = n;
	return 0;
}

/*
 * A thread's NSpid, and its credentials: Linux keeps them per thread.  A
 * thread with credentials of its own (raw setuid calls) keeps them in its
 * record; its securebits cannot be read from outside and are taken as the
 * process's (@c).
 */
static int thread_status(pid_t pid, pid_t tid, const Crf__Core__Creds *c, Crf__Core__ThreadCore *th)
{
	struct crf_proc_status st;
	_cleanup_free_ char *text = NULL;
	char path[80];
	int r;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	r = crf_read_file(path, &text);
	if (r >= 0)
		r = parse_status(text, &st);
	if (r < 0)
		return crf_error_errno(r, "%s", path);
	r = ns_tids(text, path, th);
	if (r >= 0)
		r = creds_in_task_userns(pid, &st);
	if (r < 0)
		return r;
	if (same_creds(&st, c))
		return 0;
	r = creds_from_status(&st, &th->creds);
	if (r < 0)
		return crf_error_errno(r, "thread %d of pid %d: credentials", (int)tid, (int)pid);
	th->creds->securebits = c->securebits;
	crf_debug("thread %d of pid %d has credentials of its own", (int)tid, (int)pid);
	return 0;
}

static int thread_comm(pid_t pid, pid_t tid, Crf__Core__ThreadCore *th)
{
	char path[80];
	int r;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	r = crf_read_file(path, &th->comm);
	if (r < 0)
		return crf_error_errno(r, "%s", path);
	th->comm[strcspn(th->comm, "\n")] = '\0';
	return 0;
}

static int robust_list(pid_t tid, Crf__Core__ThreadCore *th)
{
	void *head = NULL;
	size_t len = 0;

	if (syscall(SYS_get_robust_list, tid, &head, &len) < 0)
		return crf_error_errno(errno, "thread %d: get_robust_list", (int)tid);
	th->robust_head = (uint64_t)(uintptr_t)head;
	th->robust_len = len;
	return 0;
}

/*
 * What only the thread can read: clear_child_tid, and (not for the leader:
 * TaskCore has it) its sigaltstack, parent-death signal and timer slack.
 */
static int thread_self(struct crf_parasite *p, pid_t tid, bool leader, Crf__Core__ThreadCore *th)
{
	struct crf_thread_call c[4];
	uint64_t scratch, ctid = 0;
	stack_t ss = {0};
	int32_t pdeath = 0;
	size_t size;
	int r;

	r = parasite_scratch_area(p, &scratch, &size);
	if (r < 0)
		return r;
	c[0] = (struct crf_thread_call){SYS_prctl, {PR_GET_TID_ADDRESS, (long)scratch}};
	c[1] = (struct crf_thread_call){SYS_sigaltstack, {0, (long)scratch + 64}};
	c[2] = (struct crf_thread_call){SYS_prctl, {PR_GET_PDEATHSIG, (long)scratch + 128}};
	c[3] = (struct crf_thread_call){SYS_prctl, {PR_GET_TIMERSLACK}};
	if (leader)
		c[0].ret = parasite_syscall_raw(p, c[0].nr, c[0].args);
	else
		r = parasite_thread_calls(p, tid, c, ARRAY_SIZE(c));
	if (r < 0)
		return r;
	for (size_t i = 0; i < (leader ? 1 : ARRAY_SIZE(c)); i++)
		if (c[i].ret < 0)
			return crf_error_errno((int)-c[i].ret, "thread %d: system call %ld",
					       (int)tid, c[i].nr);
	r = crf_parasite_rw(p, scratch, &ctid, sizeof(ctid), false);
	if (r >= 0 && !leader)
		r = crf_parasite_rw(p, scratch + 64, &ss, sizeof(ss), false);
	if (r >= 0 && !leader)
		r = crf_parasite_rw(p, scratch + 128, &pdeath, sizeof(pdeath), false);
	th->clear_tid = ctid;
	th->sas_sp = (uint64_t)(uintptr_t)ss.ss_sp;
	th->sas_size = ss.ss_size;
	th->sas_flags = (uint32_t)ss.ss_flags;
	if (!leader) {
		th->has_pdeath_signal = th->has_timer_slack_ns = true;
		th->pdeath_signal = (uint32_t)pdeath;
		th->timer_slack_ns = (uint64_t)c[3].ret;
	}
	return r < 0 ? r : 0;
}

/*
 * The leader's record holds only what TaskCore lacks (TID levels, robust
 * list, clear_child_tid); every other thread's is complete.
 */
static int collect_thread(const struct crf_proc *pr, pid_t tid, struct crf_parasite *p,
			  Crf__Core__TaskCore *tc, Crf__Core__ThreadCore *th)
{
	const Crf__Core__Creds *c = tc->creds;
	pid_t pid = pr->pid;
	bool leader = tid == pid, stop = false;
	int r;

	th->tid = tid;
	r = leader ? leader_ns_tids(pr, th) : thread_status(pid, tid, c, th);
	if (r >= 0 && !leader)
		r = task_read_thread_regs(tid, th);
	if (r >= 0 && !leader)
		r = ptrace_get_sigmask(tid, &th->blocked);
	if (r >= 0 && !leader)
		r = task_pending_private(tid, task_pending_cap(tc), th, &stop);
	if (stop)
		task_note_stop(tc, SIGSTOP);
	if (r >= 0 && !leader)
		r = task_read_rseq(tid, &th->rseq_ptr, &th->rseq_len, &th->rseq_sig);
	if (r >= 0 && !leader)
		r = task_thread_sched(tid, th);
	if (r >= 0)
		r = leader ? ((th->comm = strdup("")) ? 0 : -ENOMEM) : thread_comm(pid, tid, th);
	if (r >= 0)
		r = robust_list(tid, th);
	if (r >= 0)
		r = thread_self(p, tid, leader, th);
	return r < 0 ? r : 0;
}

int task_collect_threads(const struct crf_proc *pr, struct crf_parasite *p, Crf__Core__TaskCore *tc)
{
	const pid_t *tids = pr->frozen->tids;
	size_t n = pr->frozen->n_tids;
	pid_t pid = pr->pid;
	int r = 0;

	tc->threads = calloc(n + 1, sizeof(*tc->threads));
	if (!tc->threads)
		return -ENOMEM;
	for (size_t i = 0; r >= 0 && i < n; i++) {
		Crf__Core__ThreadCore *th = calloc(1, sizeof(*th));

		if (!th)
			return -ENOMEM;
		crf__core__thread_core__init(th);
		tc->threads[tc->n_threads++] = th;
		r = collect_thread(pr, tids[i], p, tc, th);
	}
	if (r >= 0 && tc->threads[0]->tid != pid)
		r = crf_error_errno(EINVAL, "pid %d: thread list does not start with the leader",
				    (int)pid);
	return r;
}
