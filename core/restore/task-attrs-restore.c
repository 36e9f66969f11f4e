// SPDX-License-Identifier: GPL-2.0-only
/*
 * Task attributes at the restore (see task-attrs.h): checked in the image,
 * checked up front against what this crf restore may do, set in the
 * forked task, and handed to the restorer for what must come later.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "procfs.h"
#include "pstree.h"
#include "rst-task.h"
#include "task-attrs.h"
#include "util.h"

#define NSIG_KERNEL	64
#define AUDIT_UID_UNSET 4294967295u

static bool stop_sig_ok(uint32_t sig)
{
	return !sig || sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

int attrs_check_image(const char *img, const Crf__Core__TaskCore *tc)
{
	const char *bad = NULL;

	if (tc->has_thp_disable && tc->thp_disable != 0 && tc->thp_disable != 1 &&
	    tc->thp_disable != (1 | CRF_THP_DISABLE_EXCEPT_ADVISED))
		bad = "thp_disable";
	else if (tc->has_membarrier && (tc->membarrier & ~(uint32_t)CRF_MB_REGISTRATIONS))
		bad = "membarrier";
	else if (tc->pdeath_signal > NSIG_KERNEL)
		bad = "pdeath_signal";
	else if (tc->has_dumpable && tc->dumpable > 1)
		bad = "dumpable";
	else if (!stop_sig_ok(tc->stop_signal))
		bad = "stop_signal";
	else if (tc->has_oom_score_adj && (tc->oom_score_adj < -1000 || tc->oom_score_adj > 1000))
		bad = "oom_score_adj";
	else if (tc->n_stop_waited > tc->n_stopped_children)
		bad = "stop_waited";
	for (size_t i = 0; !bad && i < tc->n_stop_waited; i++)
		if (tc->stop_waited[i] <= 0)
			bad = "stop_waited";
	for (size_t i = 0; !bad && i < tc->n_threads; i++)
		if (tc->threads[i]->pdeath_signal > NSIG_KERNEL)
			bad = "threads[].pdeath_signal";
	if (bad)
		return crf_error_errno(EBADMSG, "%s: TaskCore.%s: out of range", img, bad);
	return 0;
}

/* Any thread of @tc has a parent-death signal. */
static bool has_pdeath(const Crf__Core__TaskCore *tc)
{
	if (tc->pdeath_signal)
		return true;
	for (size_t i = 0; i < tc->n_threads; i++)
		if (tc->threads[i]->pdeath_signal)
			return true;
	return false;
}

static int write_self(const char *what, long long v)
{
	char path[64], buf[32];
	int fd, n, r = 0;

	snprintf(path, sizeof(path), "/proc/self/%s", what);
	n = snprintf(buf, sizeof(buf), "%lld", v);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, buf, (size_t)n) != n)
		r = -errno;
	if (fd >= 0)
		close(fd);
	return r;
}

static int read_self(const char *what, long long *v)
{
	_cleanup_free_ char *text = NULL;
	char path[64];
	int r;

	snprintf(path, sizeof(path), "/proc/self/%s", what);
	r = crf_read_file(path, &text);
	if (r < 0)
		return crf_error_errno(r, "%s", path);
	*v = strtoll(text, NULL, 10);
	return 0;
}

/* What a probe child tries: the value @tc asks for of one attribute. */
enum probe_kind { PROBE_LOGINUID, PROBE_OOM, PROBE_THP };

static int try_attr(enum probe_kind k, const Crf__Core__TaskCore *tc)
{
	switch (k) {
	case PROBE_LOGINUID:
		return write_self("loginuid", tc->loginuid);
	case PROBE_OOM:
		return write_self("oom_score_adj", tc->oom_score_adj);
	default:
		return prctl(PR_SET_THP_DISABLE, 1, CRF_THP_DISABLE_EXCEPT_ADVISED, 0, 0) < 0
			       ? -errno
			       : 0;
	}
}

/*
 * Whether a task forked by crf restore may set it: tried in a child that
 * exits at once, which is what the forked task will do (same credentials,
 * same loginuid and oom_score_adj floor inherited).  -errno of the try.
 */
static int probe(enum probe_kind k, const Crf__Core__TaskCore *tc)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return crf_error_errno(errno, "fork");
	if (pid == 0)
		_exit(-try_attr(k, tc) & 0xff);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return crf_error_errno(errno, "waitpid");
	return WIFEXITED(status) ? -WEXITSTATUS(status) : -EIO;
}

/* One refusal message per attribute kind. */
static int refuse_probe(enum probe_kind k, const Crf__Core__TaskCore *tc, long long own, int err)
{
	switch (k) {
	case PROBE_LOGINUID:
		return crf_error_errno(-err,
				       "pid %d: cannot restore its loginuid %u: crf restore's is "
				       "%lld, and changing a set loginuid takes CAP_AUDIT_CONTROL "
				       "and an audit configuration that does not make it immutable",
				       (int)tc->pid, tc->loginuid, own);
	case PROBE_OOM:
		return crf_error_errno(-err,
				       "pid %d: cannot restore its oom_score_adj %d: crf restore "
				       "may not go below its own floor (it is at %lld) without "
				       "CAP_SYS_RESOURCE",
				       (int)tc->pid, tc->oom_score_adj, own);
	default:
		return crf_error_errno(-err,
				       "pid %d: cannot restore PR_SET_THP_DISABLE with "
				       "PR_THP_DISABLE_EXCEPT_ADVISED: this kernel lacks it",
				       (int)tc->pid);
	}
}

/* Did an earlier task of @tcs (before @i) need the same try of @k? */
static bool probed(Crf__Core__TaskCore *const *tcs, size_t i, enum probe_kind k)
{
	for (size_t j = 0; j < i; j++) {
		const Crf__Core__TaskCore *a = tcs[j], *b = tcs[i];

		if (!a)
			continue;
		if (k == PROBE_LOGINUID && a->has_loginuid && a->loginuid == b->loginuid)
			return true;
		if (k == PROBE_OOM && a->has_oom_score_adj && a->oom_score_adj == b->oom_score_adj)
			return true;
		if (k == PROBE_THP && (a->thp_disable & CRF_THP_DISABLE_EXCEPT_ADVISED))
			return true;
	}
	return false;
}

/* The attributes crf's own process may not be able to give the task. */
static int check_probes(Crf__Core__TaskCore *const *tcs, size_t i, long long own_uid,
			long long own_oom)
{
	const Crf__Core__TaskCore *tc = tcs[i];
	bool need[3] = {
		tc->has_loginuid && tc->loginuid != own_uid,
		tc->has_oom_score_adj && tc->oom_score_adj != own_oom,
		(tc->thp_disable & CRF_THP_DISABLE_EXCEPT_ADVISED) != 0,
	};
	const long long own[3] = {own_uid, own_oom, 0};

	for (int k = 0; k < 3; k++) {
		int r;

		if (!need[k] || probed(tcs, i, (enum probe_kind)k))
			continue;
		r = probe((enum probe_kind)k, tc);
		if (r < 0)
			return refuse_probe((enum probe_kind)k, tc, own[k], r);
	}
	return 0;
}

/* crf restore is a shell's job: in a group of its own, below a parent of its session. */
static bool crf_is_job(void)
{
	struct crf_proc self, parent;

	if (crf_proc_read_stat(getpid(), &self) < 0 || crf_proc_read_stat(getppid(), &parent) < 0)
		return true;
	return self.pgid != parent.pgid && self.sid == parent.sid;
}

/*
 * With -d, crf restore exits once the tree runs, and its exit is the
 * program's parent's: a parent-death signal of the root would fire, and a
 * stopped process of the group the root shares with crf restore would be
 * in a group left orphaned, to which the kernel sends SIGHUP and SIGCONT
 * (when crf restore is a job of its own; as a plain command of a script
 * or of another program the group keeps its parent).
 */
static int check_detach(const struct crf_pstree *t, Crf__Core__TaskCore *const *tcs)
{
	const struct crf_proc *root = &t->procs[0];
	bool job = crf_is_job();

	if (tcs[0] && has_pdeath(tcs[0]))
		return crf_error_errno(
			ENOTSUP,
			"pid %d has a parent-death signal: with -d, crf restore, its "
			"parent, exits at once, which would fire it; restore without -d",
			(int)root->pid);
	for (size_t i = 0; job && root->pgid != root->pid && i < t->n; i++)
		if (tcs[i] && tcs[i]->stop_signal && t->procs[i].pgid == root->pgid)
			return crf_error_errno(
				ENOTSUP,
				"pid %d is stopped and joins crf restore's process "
				"group, which is left orphaned when crf restore -d exits "
				"(the kernel then sends it SIGHUP and SIGCONT): restore "
				"without -d, or not as a job of a shell",
				(int)t->procs[i].pid);
	return 0;
}

/* A SIGCHLD of the program's pending for the process, or for the leader alone. */
static bool sigchld_pending(const ProtobufCBinaryData *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int32_t sig;

		memcpy(&sig, v[i].data, sizeof(sig));
		if (sig == SIGCHLD)
			return true;
	}
	return false;
}

/*
 * The restorer takes away the SIGCHLD the stopped children's restored stops
 * send (attrs_fill); it would take a SIGCHLD pending for the leader
 * alone first (the kernel dequeues a thread's own signals before the
 * process's).
 */
static int check_sigchld(const Crf__Core__TaskCore *tc)
{
	if (tc->n_stopped_children && !sigchld_pending(tc->pending_shared, tc->n_pending_shared) &&
	    sigchld_pending(tc->pending_private, tc->n_pending_private))
		return crf_error_errno(ENOTSUP,
				       "pid %d: a SIGCHLD is pending for its leader thread alone, "
				       "and its stopped children's stops send one to the process: "
				       "cannot tell them apart",
				       (int)tc->pid);
	return 0;
}

int attrs_check_restore(const struct crf_pstree *t, Crf__Core__TaskCore *const *tcs, bool detach)
{
	long long own_uid = AUDIT_UID_UNSET, own_oom = 0;
	long mb = syscall(SYS_membarrier, CRF_MB_QUERY, 0, 0);
	int r;

	if (mb < 0)
		mb = 0;
	/* A kernel without audit has no loginuid: an image with one cannot come back. */
	r = access("/proc/self/loginuid", F_OK) ? 0 : read_self("loginuid", &own_uid);
	if (r >= 0)
		r = read_self("oom_score_adj", &own_oom);
	if (r >= 0 && detach)
		r = check_detach(t, tcs);
	for (size_t i = 0; r >= 0 && i < t->n; i++) {
		const Crf__Core__TaskCore *tc = tcs[i];

		if (!tc)
			continue;
		if (tc->membarrier & ~(uint32_t)mb)
			return crf_error_errno(ENOTSUP,
					       "pid %d: membarrier registrations %#x: this kernel "
					       "offers only %#lx",
					       (int)tc->pid, tc->membarrier, mb);
		r = check_sigchld(tc);
		if (r >= 0)
			r = check_probes(tcs, i, own_uid, own_oom);
	}
	return r;
}

static int set_proc(const char *what, long long v)
{
	long long now = 0;
	int r = read_self(what, &now);

	if (r < 0 || now == v)
		return r;
	r = write_self(what, v);
	return r < 0 ? crf_error_errno(-r, "/proc/self/%s: writing %lld", what, v) : 0;
}

static int set_membarrier(uint32_t regs)
{
	for (int bit = 0; bit < 32; bit++) {
		if (!(regs & (1u << bit)))
			continue;
		if (syscall(SYS_membarrier, 1u << bit, 0, 0) < 0)
			return crf_error_errno(errno, "membarrier registration %#x", 1u << bit);
	}
	return 0;
}

/* A real-time policy pins the slack to 0 and ignores the call: checked after. */
static int set_slack(uint64_t ns)
{
	if ((uint64_t)prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0) == ns)
		return 0;
	if (prctl(PR_SET_TIMERSLACK, ns, 0, 0, 0) < 0)
		return crf_error_errno(errno, "PR_SET_TIMERSLACK %llu", (unsigned long long)ns);
	if ((uint64_t)prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0) != ns)
		return crf_error_errno(EINVAL, "timer slack %llu not taken (a real-time policy?)",
				       (unsigned long long)ns);
	return 0;
}

int attrs_apply(const Crf__Core__TaskCore *tc)
{
	unsigned long thp_flags = tc->thp_disable & CRF_THP_DISABLE_EXCEPT_ADVISED;
	int r = 0;

	/*
	 * Setting a loginuid also gives the task a new audit session id.  An
	 * unset one is what a kernel without audit has, without the file.
	 */
	if (tc->has_loginuid &&
	    (tc->loginuid != AUDIT_UID_UNSET || !access("/proc/self/loginuid", F_OK)))
		r = set_proc("loginuid", tc->loginuid);
	if (r >= 0 && tc->has_oom_score_adj)
		r = set_proc("oom_score_adj", tc->oom_score_adj);
	if (r >= 0 && tc->has_thp_disable &&
	    prctl(PR_SET_THP_DISABLE, tc->thp_disable & 1, thp_flags, 0, 0) < 0)
		r = crf_error_errno(errno, "PR_SET_THP_DISABLE %u", tc->thp_disable);
	if (r >= 0 && tc->membarrier)
		r = set_membarrier(tc->membarrier);
	if (r >= 0 && tc->has_child_subreaper &&
	    prctl(PR_SET_CHILD_SUBREAPER, tc->child_subreaper ? 1 : 0, 0, 0, 0) < 0)
		r = crf_error_errno(errno, "PR_SET_CHILD_SUBREAPER");
	if (r >= 0 && tc->has_timer_slack_ns)
		r = set_slack(tc->timer_slack_ns);
	return r;
}

int attrs_fill(struct crf_rst_task *t, const Crf__Core__TaskCore *tc)
{
	t->a.set_personality = 1;
	t->a.personality = tc->personality;
	t->a.dumpable = tc->has_dumpable ? (int32_t)tc->dumpable : -1;
	t->a.pdeath_signal = (int32_t)tc->pdeath_signal;
	t->a.stop_signal = (int32_t)tc->stop_signal;
	t->a.drop_sigchld = tc->n_stopped_children &&
			    !sigchld_pending(tc->pending_shared, tc->n_pending_shared) &&
			    !sigchld_pending(tc->pending_private, tc->n_pending_private);
	if (!tc->n_stop_waited)
		return 0;
	t->stop_waits = calloc(tc->n_stop_waited, sizeof(*t->stop_waits));
	if (!t->stop_waits)
		return crf_error_errno(ENOMEM, "pid %d", (int)tc->pid);
	memcpy(t->stop_waits, tc->stop_waited, tc->n_stop_waited * sizeof(*t->stop_waits));
	t->n_stop_waits = tc->n_stop_waited;
	return 0;
}

void attrs_fill_thread(struct crf_rst_thread_arg *a, const Crf__Core__ThreadCore *th)
{
	a->timer_slack_ns = th->has_timer_slack_ns ? th->timer_slack_ns : 0;
	a->pdeath_signal = (int32_t)th->pdeath_signal;
}
