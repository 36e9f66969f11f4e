// SPDX-License-Identifier: GPL-2.0-only
/*
 * Task attributes the restorer sets itself (core/dump/task-attrs-dump.c sets the
 * others in crf's code): the personality, once the mappings are built; the
 * dumpable flag and the parent-death signals, which the kernel resets on
 * every change of credentials, after them; each thread's timer slack; and
 * the stop reports of the children crf put back in their group stop.
 *
 * Same rules as restorer.c: no libc, no writable globals, no pointer tables.
 */
#include <stddef.h>
#include <stdint.h>

#include <linux/prctl.h>

#include "crf-restorer.h"
#include "crf-syscall.h"
#include "restorer-kabi.h"
#include "restorer-priv.h"

#define P_PID	 1
#define WNOHANG	 1
#define WSTOPPED 2
#define __WALL	 0x40000000
#define SIGCHLD	 17
#define EAGAIN	 11

int crf_rst_attrs_ok(const struct crf_rst_args *a)
{
	return crf_rst_array_ok(a, a->stop_waits_off, a->n_stop_waits, sizeof(int32_t)) &&
	       a->n_pending_shared <= a->n_pending && a->pdeath_signal >= 0 &&
	       a->pdeath_signal <= CRF_RST_NSIG && a->stop_signal >= 0 &&
	       a->stop_signal <= CRF_RST_NSIG;
}

/*
 * Only now: with READ_IMPLIES_EXEC the kernel adds PROT_EXEC to every
 * readable mapping made or changed after it is set, and the saved ones
 * are made just before.
 */
void crf_rst_set_personality(struct crf_rst_args *a)
{
	long r;

	if (!a->set_personality)
		return;
	r = sys1(__NR_personality, a->personality);
	if (r < 0)
		FAIL_AT(a, r, "personality", a->personality);
	if ((uint64_t)sys1(__NR_personality, 0xffffffffu) != a->personality)
		FAIL_AT(a, -EINVAL, "personality not taken:", a->personality);
}

static void set_pdeath(struct crf_rst_args *a, int32_t sig)
{
	long r;

	if (!sig)
		return;
	r = sys2(__NR_prctl, PR_SET_PDEATHSIG, sig);
	if (r < 0)
		FAIL_AT(a, r, "prctl(PR_SET_PDEATHSIG)", (uint64_t)sig);
}

/*
 * A change of the effective or fs IDs, or a smaller capability set, sets
 * the mm's dumpable flag to fs.suid_dumpable and clears the parent-death
 * signal of the thread that changes them: both are set after the
 * credentials (every thread's are set when the leader's are).
 */
void crf_rst_after_creds(struct crf_rst_args *a)
{
	long r;

	if (a->dumpable >= 0) {
		r = sys2(__NR_prctl, PR_SET_DUMPABLE, a->dumpable);
		if (r < 0)
			FAIL_AT(a, r, "prctl(PR_SET_DUMPABLE)", (uint64_t)a->dumpable);
	}
	set_pdeath(a, a->pdeath_signal);
}

void crf_rst_thread_after_creds(struct crf_rst_args *a, const struct crf_rst_thread_arg *t)
{
	set_pdeath(a, t->pdeath_signal);
}

/* After its scheduling policy: a real-time policy sets the slack to 0. */
void crf_rst_thread_slack(struct crf_rst_args *a, const struct crf_rst_thread_arg *t)
{
	long r;

	if (!t->timer_slack_ns)
		return;
	r = sys2(__NR_prctl, PR_SET_TIMERSLACK, t->timer_slack_ns);
	if (r < 0)
		FAIL_AT(a, r, "thread prctl(PR_SET_TIMERSLACK)", t->timer_slack_ns);
}

/*
 * crf released the children before this task and put the stopped ones
 * back in their group stop, which reported them to this task as at the
 * dump.  The program had taken the report of some (waitpid with
 * WUNTRACED): take them again.  Their stops also sent a SIGCHLD, queued
 * while every signal is blocked here: when the program had none pending,
 * it goes too.  The saved pending signals were queued before, so a SIGCHLD
 * the program had pending is the one that stays (a second is not queued).
 */
void crf_rst_take_stop_reports(struct crf_rst_args *a)
{
	const int32_t *pid = at(a, a->stop_waits_off);
	uint64_t chld = 1ull << (SIGCHLD - 1);
	int64_t zero[2] = {0, 0};
	char info[128];

	for (uint32_t i = 0; i < a->n_stop_waits; i++) {
		long r;

		memset(info, 0, sizeof(info));
		r = sys5(__NR_waitid, P_PID, pid[i], info, WSTOPPED | WNOHANG | __WALL, 0);
		/* si_pid, after si_signo, si_errno, si_code and a hole */
		if (r < 0 || *(int32_t *)(info + 16) != pid[i])
			FAIL_AT(a, r < 0 ? r : -EIO, "no stop report of child", (uint64_t)pid[i]);
	}
	if (a->drop_sigchld) {
		long r = sys4(__NR_rt_sigtimedwait, &chld, info, zero, sizeof(chld));

		if (r < 0 && r != -EAGAIN)
			FAIL(a, r, "rt_sigtimedwait for SIGCHLD");
	}
}
