// SPDX-License-Identifier: GPL-2.0-only
/*
 * Collecting a task's own state.  Most of it is readable from outside
 * (/proc, ptrace, sched_*); signal actions, the alternate signal stack,
 * itimers, POSIX timer values and securebits are readable only by the task
 * itself, so they are read through the parasite with plain system calls.
 */
#include <asm/prctl.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <unistd.h>

#include <linux/ioprio.h>

#include "cpu.h"
#include "crf-parasite-abi.h"
#include "infect.h"
#include "procfs.h"
#include "ptrace.h"
#include "task-attrs.h"
#include "task-dump.h"
#include "util.h"
#include "xsave.h"

/* PTRACE_GET_RSEQ_CONFIGURATION (uapi 5.13) fills this. */
#define CRF_PTRACE_GET_RSEQ_CONFIGURATION 0x420f
struct crf_rseq_conf {
	uint64_t rseq_abi_pointer;
	uint32_t rseq_abi_size;
	uint32_t signature;
	uint32_t flags;
	uint32_t pad;
};

/* Both register sets as crf_regs_get() reads them, copied into the record's bytes. */
static int regs_to_record(const struct crf_regs *regs, ProtobufCBinaryData *gp,
			  ProtobufCBinaryData *xsave)
{
	gp->data = malloc(sizeof(regs->gp));
	xsave->data = malloc(regs->xsave_len ?: 1);
	if (!gp->data || !xsave->data)
		return -ENOMEM;
	memcpy(gp->data, &regs->gp, sizeof(regs->gp));
	gp->len = sizeof(regs->gp);
	memcpy(xsave->data, regs->xsave, regs->xsave_len);
	xsave->len = regs->xsave_len;
	return 0;
}

int task_regs(const struct crf_parasite *p, Crf__Core__TaskCore *tc)
{
	return regs_to_record(parasite_saved_regs(p), &tc->regs, &tc->xsave);
}

static int sigactions(struct crf_parasite *p, Crf__Core__TaskCore *tc)
{
	struct crf_sigaction_info ka[CRF_PSITE_NSIG];
	int r;

	r = parasite_get_sigactions(p, ka);
	if (r < 0)
		return r;
	tc->sigactions = calloc(CRF_PSITE_NSIG, sizeof(*tc->sigactions));
	if (!tc->sigactions)
		return -ENOMEM;
	for (int sig = 1; sig <= CRF_PSITE_NSIG; sig++) {
		Crf__Core__SigAction *sa;

		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		sa = malloc(sizeof(*sa));
		if (!sa)
			return -ENOMEM;
		crf__core__sig_action__init(sa);
		sa->sig = (uint32_t)sig;
		sa->handler = ka[sig - 1].handler;
		sa->flags = ka[sig - 1].flags;
		sa->restorer = ka[sig - 1].restorer;
		sa->mask = ka[sig - 1].mask;
		tc->sigactions[tc->n_sigactions++] = sa;
	}
	return 0;
}

static int altstack_itimers(struct crf_parasite *p, Crf__Core__TaskCore *tc)
{
	struct crf_sigaltstack_info ss;
	struct crf_itimer_info it[CRF_ITIMERS];
	long ret;

	ret = parasite_get_sigaltstack(p, &ss);
	if (ret >= 0)
		ret = parasite_get_itimers(p, it);
	if (ret < 0)
		return (int)ret;
	tc->sas_sp = ss.sp;
	tc->sas_size = ss.size;
	tc->sas_flags = (uint32_t)ss.flags;
	tc->itimers = calloc(CRF_ITIMER_VALUES, sizeof(*tc->itimers));
	if (!tc->itimers)
		return -ENOMEM;
	tc->n_itimers = CRF_ITIMER_VALUES;
	for (int which = 0; which < CRF_ITIMERS; which++) {
		int64_t *v = &tc->itimers[which * CRF_ITIMER_WORDS];

		v[0] = it[which].interval_sec;
		v[1] = it[which].interval_usec;
		v[2] = it[which].value_sec;
		v[3] = it[which].value_usec;
	}
	ret = parasite_get_securebits(p);
	if (ret < 0)
		return (int)ret;
	tc->creds->securebits = (uint32_t)ret;
	return 0;
}

/* The timers /proc/PID/timers lists, their values and overruns read by the parasite in one call. */
static int posix_timers(struct crf_parasite *p, pid_t pid, Crf__Core__TaskCore *tc)
{
	struct crf_proc_timer *pt = calloc(CRF_PSITE_MAX_TIMERS, sizeof(*pt));
	struct crf_posix_timer_info *ti = calloc(CRF_PSITE_MAX_TIMERS, sizeof(*ti));
	_cleanup_free_ char *text = NULL;
	char path[64];
	int n, ret;

	if (!pt || !ti) {
		ret = -ENOMEM;
		goto out;
	}
	snprintf(path, sizeof(path), "/proc/%d/timers", (int)pid);
	ret = crf_read_file(path, &text);
	n = ret < 0 ? ret : parse_timers(text, pt, CRF_PSITE_MAX_TIMERS);
	if (n < 0) {
		ret = crf_error_errno(n, "%s", path);
		goto out;
	}
	for (int i = 0; i < n; i++)
		ti[i].id = pt[i].id;
	ret = n ? parasite_get_posix_timers(p, ti, (size_t)n) : 0;
	if (ret < 0)
		goto out;
	tc->timers = calloc((size_t)n + 1, sizeof(*tc->timers));
	if (!tc->timers) {
		ret = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < n; i++) {
		Crf__Core__PosixTimer *t;

		if (ti[i].err < 0 || ti[i].overrun < 0) {
			ret = crf_error_errno(ti[i].err < 0 ? ti[i].err : ti[i].overrun,
					      "pid %d: POSIX timer %d", (int)pid, pt[i].id);
			goto out;
		}
		/* The kernel has no call that sets it: a restored timer would say 0. */
		if (ti[i].overrun > 0) {
			ret = crf_error_errno(ENOTSUP,
					      "pid %d: POSIX timer %d has an overrun count of %d "
					      "(timer_getoverrun), which crf cannot set again",
					      (int)pid, pt[i].id, ti[i].overrun);
			goto out;
		}
		t = malloc(sizeof(*t));
		if (!t) {
			ret = -ENOMEM;
			goto out;
		}
		crf__core__posix_timer__init(t);
		tc->timers[tc->n_timers++] = t;
		t->id = pt[i].id;
		t->clock = pt[i].clock;
		t->signo = pt[i].signo;
		t->notify = pt[i].notify;
		t->notify_tid = pt[i].notify_tid;
		t->value = pt[i].value;
		t->interval_ns = ti[i].interval_sec * 1000000000 + ti[i].interval_nsec;
		t->value_ns = ti[i].value_sec * 1000000000 + ti[i].value_nsec;
		t->overrun = ti[i].overrun;
	}
out:
	free(pt);
	free(ti);
	return ret;
}

int creds_from_status(const struct crf_proc_status *st, Crf__Core__Creds **out)
{
	Crf__Core__Creds *c = malloc(sizeof(*c));

	if (!c)
		return -ENOMEM;
	crf__core__creds__init(c);
	*out = c;
	c->uid = st->uid[0];
	c->euid = st->uid[1];
	c->suid = st->uid[2];
	c->fsuid = st->uid[3];
	c->gid = st->gid[0];
	c->egid = st->gid[1];
	c->sgid = st->gid[2];
	c->fsgid = st->gid[3];
	c->groups = calloc(st->n_groups + 1, sizeof(*c->groups));
	if (!c->groups)
		return -ENOMEM;
	memcpy(c->groups, st->groups, st->n_groups * sizeof(*c->groups));
	c->n_groups = st->n_groups;
	c->cap_inh = st->cap_inh;
	c->cap_prm = st->cap_prm;
	c->cap_eff = st->cap_eff;
	c->cap_bnd = st->cap_bnd;
	c->cap_amb = st->cap_amb;
	c->no_new_privs = st->no_new_privs;
	return 0;
}

static int limits(pid_t pid, Crf__Core__TaskCore *tc)
{
	struct crf_proc_limit lim[CRF_NLIMITS];
	_cleanup_free_ char *text = NULL;
	char path[64];
	int r;

	snprintf(path, sizeof(path), "/proc/%d/limits", (int)pid);
	r = crf_read_file(path, &text);
	if (r >= 0)
		r = parse_limits(text, lim);
	if (r < 0)
		return crf_error_errno(r, "%s", path);
	tc->rlimits = calloc(CRF_NLIMITS, sizeof(*tc->rlimits));
	if (!tc->rlimits)
		return -ENOMEM;
	for (int i = 0; i < CRF_NLIMITS; i++) {
		Crf__Core__Rlimit *l = malloc(sizeof(*l));

		if (!l)
			return -ENOMEM;
		crf__core__rlimit__init(l);
		l->resource = (uint32_t)i;
		l->cur = lim[i].cur;
		l->max = lim[i].max;
		tc->rlimits[tc->n_rlimits++] = l;
	}
	return 0;
}

struct sched_out {
	int32_t *policy, *priority, *nice;
	ProtobufCBinaryData *affinity;
	protobuf_c_boolean *has_ioprio;
	uint32_t *ioprio;
};

/* For a thread too: these calls take a TID and answer for that thread. */
static int sched_read(pid_t pid, const struct sched_out *o)
{
	struct sched_param sp;
	cpu_set_t set;
	long prio;

	errno = 0;
	*o->policy = sched_getscheduler(pid);
	if (*o->policy < 0 || sched_getparam(pid, &sp) < 0)
		return crf_error_errno(errno, "pid %d: scheduling policy", (int)pid);
	*o->priority = sp.sched_priority;
	*o->nice = getpriority(PRIO_PROCESS, (id_t)pid);
	if (*o->nice == -1 && errno)
		return crf_error_errno(errno, "pid %d: nice", (int)pid);
	if (sched_getaffinity(pid, sizeof(set), &set) < 0)
		return crf_error_errno(errno, "pid %d: CPU affinity", (int)pid);
	/* The I/O priority: 0 when none was set (it follows the nice value). */
	prio = syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, (int)pid);
	if (prio < 0)
		return crf_error_errno(errno, "pid %d: ioprio_get", (int)pid);
	*o->has_ioprio = true;
	*o->ioprio = (uint32_t)prio;
	o->affinity->data = malloc(sizeof(set));
	if (!o->affinity->data)
		return -ENOMEM;
	memcpy(o->affinity->data, &set, sizeof(set));
	o->affinity->len = sizeof(set);
	return 0;
}

static int sched_state(pid_t pid, Crf__Core__TaskCore *tc)
{
	struct sched_out o = {&tc->sched_policy, &tc->sched_priority, &tc->nice,
			      &tc->affinity,	 &tc->has_ioprio,     &tc->ioprio};

	return sched_read(pid, &o);
}

static int proc_link(pid_t pid, const char *what, char **out)
{
	char path[64], buf[4096];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
	n = readlink(path, buf, sizeof(buf) - 1);
	if (n < 0)
		return crf_error_errno(errno, "readlink %s", path);
	buf[n] = '\0';
	*out = strdup(buf);
	return *out ? 0 : -ENOMEM;
}

static int proc_small(pid_t pid, Crf__Core__TaskCore *tc)
{
	_cleanup_free_ char *comm = NULL, *pers = NULL;
	char path[64];
	int r;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	r = crf_read_file(path, &comm);
	if (r < 0)
		return crf_error_errno(r, "%s", path);
	comm[strcspn(comm, "\n")] = '\0';
	tc->comm = TAKE_PTR(comm);
	snprintf(path, sizeof(path), "/proc/%d/personality", (int)pid);
	r = crf_read_file(path, &pers);
	if (r < 0)
		return crf_error_errno(r, "%s", path);
	tc->personality = (uint32_t)strtoul(pers, NULL, 16);
	free(pers);
	pers = NULL;
	snprintf(path, sizeof(path), "/proc/%d/coredump_filter", (int)pid);
	r = crf_read_file(path, &pers);
	if (r < 0)
		return crf_error_errno(r, "%s", path);
	tc->has_coredump_filter = true;
	tc->coredump_filter = (uint32_t)strtoul(pers, NULL, 16);
	r = proc_link(pid, "cwd", &tc->cwd);
	if (r >= 0)
		r = proc_link(pid, "root", &tc->root);
	if (r < 0)
		return r;
	return task_read_rseq(pid, &tc->rseq_ptr, &tc->rseq_len, &tc->rseq_sig);
}

int task_read_rseq(pid_t tid, uint64_t *ptr, uint32_t *len, uint32_t *sig)
{
	struct crf_rseq_conf rs = {0};

	if (ptrace(CRF_PTRACE_GET_RSEQ_CONFIGURATION, tid, sizeof(rs), &rs) < 0)
		return crf_error_errno(errno, "thread %d: rseq configuration", (int)tid);
	*ptr = rs.rseq_abi_pointer;
	*len = rs.rseq_abi_size;
	*sig = rs.signature;
	return 0;
}

int task_read_thread_regs(pid_t tid, Crf__Core__ThreadCore *th)
{
	struct crf_regs regs;
	int r;

	r = crf_regs_get(tid, &regs);
	if (r >= 0)
		r = regs_to_record(&regs, &th->regs, &th->xsave);
	crf_regs_free(&regs);
	return r;
}

int task_thread_sched(pid_t tid, Crf__Core__ThreadCore *th)
{
	struct sched_out o = {&th->sched_policy, &th->sched_priority, &th->nice,
			      &th->affinity,	 &th->has_ioprio,     &th->ioprio};

	return sched_read(tid, &o);
}

int task_pending_private(pid_t tid, uint64_t cap, Crf__Core__ThreadCore *th, bool *stop)
{
	return task_read_pending(tid, false, cap, &th->pending_private, &th->n_pending_private,
				 stop);
}

int task_collect_proc(pid_t pid, Crf__Core__TaskCore *tc)
{
	struct crf_proc_status st;
	bool stop = false;
	_cleanup_free_ char *text = NULL;
	char path[64];
	int r;

	tc->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	r = crf_read_file(path, &text);
	if (r >= 0)
		r = parse_status(text, &st);
	if (r < 0)
		return crf_error_errno(r, "%s", path);
	tc->blocked = st.sig_blk;
	tc->umask = st.umask;
	r = creds_in_task_userns(pid, &st);
	if (r >= 0)
		r = creds_from_status(&st, &tc->creds);
	if (r >= 0)
		r = limits(pid, tc);
	if (r >= 0)
		r = sched_state(pid, tc);
	if (r >= 0)
		r = proc_small(pid, tc);
	if (r >= 0)
		r = task_read_pending(pid, false, task_pending_cap(tc), &tc->pending_private,
				      &tc->n_pending_private, &stop);
	if (r >= 0)
		r = task_read_pending(pid, true, task_pending_cap(tc), &tc->pending_shared,
				      &tc->n_pending_shared, &stop);
	if (stop)
		task_note_stop(tc, SIGSTOP);
	return r < 0 ? r : 0;
}

int task_collect_parasite(pid_t pid, struct crf_parasite *p, Crf__Core__TaskCore *tc)
{
	int r;

	r = sigactions(p, tc);
	if (r >= 0)
		r = altstack_itimers(p, tc);
	if (r >= 0)
		r = posix_timers(p, pid, tc);
	return r < 0 ? r : 0;
}

/* The CPU (task/cpu.h): AMX and the XSAVE permissions. */

static int check_live(pid_t pid, pid_t tid, const ProtobufCBinaryData *xsave)
{
	char name[64];

	if (!(xsave_used(xsave->data, xsave->len) & CRF_XFEATURES_DYNAMIC))
		return 0;
	xfeature_name(CRF_XFEATURE_XTILEDATA, name, sizeof(name));
	crf_error("pid %d: thread %d holds live %s (its tile registers are in use): crf cannot "
		  "restore them yet",
		  (int)pid, (int)tid, name);
	return -ENOTSUP;
}

/* ARCH_GET_XCOMP_PERM writes the permitted features to memory: the scratch area. */
static int read_perm(struct crf_parasite *p, pid_t pid, uint64_t *perm)
{
	uint64_t scratch;
	size_t size;
	long ret;
	int r;

	r = parasite_scratch_area(p, &scratch, &size);
	if (r < 0)
		return r;
	ret = parasite_syscall_raw(p, SYS_arch_prctl,
				   (const long[6]){ARCH_GET_XCOMP_PERM, (long)scratch});
	if (ret == -EINVAL || ret == -ENOSYS) {
		*perm = 0; /* a kernel or CPU without dynamic features */
		return 0;
	}
	if (ret < 0)
		return crf_error_errno((int)-ret, "pid %d: arch_prctl(ARCH_GET_XCOMP_PERM)",
				       (int)pid);
	return crf_parasite_rw(p, scratch, perm, sizeof(*perm), false);
}

int cpu_dump_task(struct crf_parasite *p, Crf__Core__TaskCore *tc)
{
	uint64_t perm;
	int r;

	r = check_live(tc->pid, tc->pid, &tc->xsave);
	for (size_t i = 0; r >= 0 && i < tc->n_threads; i++)
		r = check_live(tc->pid, tc->threads[i]->tid, &tc->threads[i]->xsave);
	if (r >= 0)
		r = read_perm(p, tc->pid, &perm);
	if (r < 0)
		return r;
	tc->has_xcomp_perm = true;
	tc->xcomp_perm = perm;
	return 0;
}
