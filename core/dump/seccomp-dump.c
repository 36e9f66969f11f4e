// SPDX-License-Identifier: GPL-2.0-only
/*
 * Dumping seccomp state (seccomp.h).  Per thread: the mode from
 * /proc/PID/task/TID/status, and in filter mode each filter of its chain
 * with PTRACE_SECCOMP_GET_FILTER and its flags with
 * PTRACE_GET_SECCOMP_METADATA; only SECCOMP_FILTER_FLAG_LOG is reported,
 * the only flag that stays with a filter and changes what it does.  Both
 * count from the oldest filter, index 0 (the kernel counts back from the
 * newest by chain length minus index: ptrace(2) says the opposite).
 *
 * Sharing.  The kernel keeps filters as a tree: a thread points at its
 * newest filter, which points at the one before.  Threads share filters
 * when one was created after the filter was installed, or when the filter
 * was installed with SECCOMP_FILTER_FLAG_TSYNC; and sharing is observable,
 * because a later TSYNC works only if every other thread's chain is the
 * caller's or an ancestor of it.  Userspace cannot tell a shared filter
 * from an identical copy (no kcmp kind, no id), so crf compares chains by
 * content from the root: what all threads of a process hold alike is taken
 * as shared, and the restorer installs it once with TSYNC so that they do
 * share it.  Past that common part each thread's filters are its own.  Two
 * threads whose own filters begin alike would be a filter shared by some
 * threads only (a thread that installed one and then created another), and
 * once the threads exist, the restorer has no way to share a filter among
 * some of them: refused.  Identical copies held by every thread come back
 * shared: then a TSYNC that would have failed works (docs, "Known limits").
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

#include "procfs.h"
#include "pstree-dump.h"
#include "seccomp.h"
#include "util.h"

static const char *mode_name(int mode)
{
	return mode == SECCOMP_MODE_STRICT ? "strict" : "filter";
}

int seccomp_parse_status(const char *text, int *mode, int *n_filters)
{
	const char *p = strstr(text, "\nSeccomp:");

	*mode = 0;
	*n_filters = 0;
	if (!p)
		return -ENOENT;
	*mode = atoi(p + strlen("\nSeccomp:"));
	p = strstr(text, "\nSeccomp_filters:");
	if (p)
		*n_filters = atoi(p + strlen("\nSeccomp_filters:"));
	return 0;
}

static bool same_filter(const struct crf_seccomp_chain *x, const struct crf_seccomp_chain *y,
			size_t i)
{
	return x->flags[i] == y->flags[i] && x->code[i].len == y->code[i].len &&
	       !memcmp(x->code[i].data, y->code[i].data, x->code[i].len);
}

size_t seccomp_common(const struct crf_seccomp_chain *c, size_t n)
{
	size_t k = 0;

	if (!n)
		return 0;
	for (;; k++) {
		for (size_t t = 0; t < n; t++)
			if (k >= c[t].n || !same_filter(&c[0], &c[t], k))
				return k;
	}
}

int seccomp_own_clash(const struct crf_seccomp_chain *c, size_t n, size_t k, size_t *a, size_t *b)
{
	for (size_t i = 0; i < n; i++) {
		if (c[i].n <= k)
			continue;
		for (size_t j = i + 1; j < n; j++) {
			if (c[j].n > k && same_filter(&c[i], &c[j], k)) {
				*a = i;
				*b = j;
				return -EBUSY;
			}
		}
	}
	return 0;
}

bool seccomp_may_notify(const void *code, size_t len)
{
	const struct sock_filter *f = code;

	for (size_t i = 0; i < len / sizeof(*f); i++) {
		if (BPF_CLASS(f[i].code) != BPF_RET)
			continue;
		if (BPF_RVAL(f[i].code) != BPF_K)
			return true;
		if ((f[i].k & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_USER_NOTIF)
			return true;
	}
	return false;
}

/* What the dump reads of one thread; the chain is the oldest filter first. */
struct thread_sc {
	struct crf_seccomp_chain c;
	ProtobufCBinaryData *code;
	uint32_t *flags;
};

static void threads_free(struct thread_sc *th, size_t n)
{
	for (size_t i = 0; th && i < n; i++) {
		for (size_t f = 0; f < th[i].c.n; f++)
			free(th[i].code[f].data);
		free(th[i].code);
		free(th[i].flags);
	}
	free(th);
}

static int read_mode(pid_t pid, struct thread_sc *th)
{
	_cleanup_free_ char *text = NULL;
	char path[80];
	int r, n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)th->c.tid);
	r = crf_read_file(path, &text);
	if (r >= 0)
		r = seccomp_parse_status(text, &th->c.mode, &n);
	if (r < 0)
		return crf_error_errno(r, "%s: no seccomp mode", path);
	if (th->c.mode < SECCOMP_MODE_DISABLED || th->c.mode > SECCOMP_MODE_FILTER || n < 0 ||
	    (th->c.mode == SECCOMP_MODE_FILTER) != (n > 0))
		return crf_error_errno(EINVAL, "%s: seccomp mode %d with %d filters", path,
				       th->c.mode, n);
	th->c.n = (size_t)n;
	return 0;
}

/* Filter @idx of @tid, counted from the oldest (0), as the kernel numbers them. */
static int read_filter(pid_t pid, pid_t tid, unsigned long idx, ProtobufCBinaryData *code,
		       uint32_t *flags)
{
	struct __ptrace_seccomp_metadata md = {.filter_off = idx};
	long n, got;

	n = ptrace(PTRACE_SECCOMP_GET_FILTER, tid, idx, NULL);
	if (n <= 0 || n > CRF_SECCOMP_MAX_INSNS)
		return crf_error_errno(n < 0 ? errno : EINVAL,
				       "pid %d: thread %d: seccomp filter %lu from the oldest "
				       "(PTRACE_SECCOMP_GET_FILTER)",
				       (int)pid, (int)tid, idx);
	code->data = calloc((size_t)n, sizeof(struct sock_filter));
	if (!code->data)
		return -ENOMEM;
	got = ptrace(PTRACE_SECCOMP_GET_FILTER, tid, idx, code->data);
	if (got != n)
		return crf_error_errno(got < 0 ? errno : EIO,
				       "pid %d: thread %d: seccomp filter %lu changed size",
				       (int)pid, (int)tid, idx);
	code->len = (size_t)n * sizeof(struct sock_filter);
	if (ptrace(PTRACE_SECCOMP_GET_METADATA, tid, sizeof(md), &md) < 0)
		return crf_error_errno(errno,
				       "pid %d: thread %d: seccomp filter %lu flags "
				       "(PTRACE_SECCOMP_GET_METADATA)",
				       (int)pid, (int)tid, idx);
	*flags = (uint32_t)md.flags;
	return 0;
}

static int read_chain(pid_t pid, struct thread_sc *th)
{
	size_t n = th->c.n;
	int r = 0;

	th->code = calloc(n + 1, sizeof(*th->code));
	th->flags = calloc(n + 1, sizeof(*th->flags));
	if (!th->code || !th->flags)
		return -ENOMEM;
	for (size_t i = 0; r >= 0 && i < n; i++)
		r = read_filter(pid, th->c.tid, i, &th->code[i], &th->flags[i]);
	for (size_t i = 0; r >= 0 && i < n; i++)
		if (seccomp_may_notify(th->code[i].data, th->code[i].len))
			r = crf_error_errno(
				EOPNOTSUPP,
				"pid %d: thread %d: seccomp filter %zu of %zu (from the "
				"oldest) may return SECCOMP_RET_USER_NOTIF: crf cannot "
				"save a listener's handling of system calls",
				(int)pid, (int)th->c.tid, i + 1, n);
	th->c.code = th->code;
	th->c.flags = th->flags;
	return r;
}

/* Every thread's mode; 1 when one has seccomp, 0 when none has. */
static int read_modes(const struct crf_proc *pr, struct thread_sc *th)
{
	bool any = false;
	int r = 0;

	for (size_t i = 0; r >= 0 && i < pr->frozen->n_tids; i++) {
		th[i].c.tid = pr->frozen->tids[i];
		r = read_mode(pr->pid, &th[i]);
		if (r >= 0 && th[i].c.mode != SECCOMP_MODE_DISABLED &&
		    pr->frozen->seccomp_unsuspended)
			return crf_error_errno(
				-pr->frozen->seccomp_unsuspended,
				"pid %d: thread %d is in seccomp %s mode, and crf cannot suspend "
				"seccomp to run its own code there (PTRACE_O_SUSPEND_SECCOMP needs "
				"CAP_SYS_ADMIN, a crf not under seccomp itself and "
				"CONFIG_CHECKPOINT_RESTORE)",
				(int)pr->pid, (int)th[i].c.tid, mode_name(th[i].c.mode));
		any = any || th[i].c.mode != SECCOMP_MODE_DISABLED;
	}
	return r < 0 ? r : any;
}

/* A thread other than @a and @b whose chain differs at @k (one must). */
static pid_t lacking(const struct thread_sc *th, size_t n, size_t k, size_t a)
{
	for (size_t i = 0; i < n; i++)
		if (th[i].c.n <= k || !same_filter(&th[a].c, &th[i].c, k))
			return th[i].c.tid;
	return 0;
}

static Crf__Core__SeccompFilter *filter_msg(const ProtobufCBinaryData *code, uint32_t flags)
{
	Crf__Core__SeccompFilter *f = malloc(sizeof(*f));

	if (!f)
		return NULL;
	crf__core__seccomp_filter__init(f);
	f->flags = flags;
	f->code.data = malloc(code->len);
	if (!f->code.data) {
		free(f);
		return NULL;
	}
	memcpy(f->code.data, code->data, code->len);
	f->code.len = code->len;
	return f;
}

/* Fill @out with @n filters of @code/@flags; -ENOMEM. */
static int filters_msg(const ProtobufCBinaryData *code, const uint32_t *flags, size_t n,
		       Crf__Core__SeccompFilter ***out, size_t *n_out)
{
	*out = calloc(n + 1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (*n_out = 0; *n_out < n; (*n_out)++) {
		(*out)[*n_out] = filter_msg(&code[*n_out], flags[*n_out]);
		if (!(*out)[*n_out])
			return -ENOMEM;
	}
	return 0;
}

static int build(const struct thread_sc *th, size_t n, size_t k, Crf__Core__Seccomp *s)
{
	int r;

	r = filters_msg(th[0].code, th[0].flags, k, &s->shared, &s->n_shared);
	s->threads = calloc(n + 1, sizeof(*s->threads));
	if (r < 0 || !s->threads)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		Crf__Core__SeccompThread *t = malloc(sizeof(*t));

		if (!t)
			return -ENOMEM;
		crf__core__seccomp_thread__init(t);
		s->threads[s->n_threads++] = t;
		t->tid = th[i].c.tid;
		t->mode = (uint32_t)th[i].c.mode;
		r = filters_msg(th[i].code + k, th[i].flags + k, th[i].c.n - k, &t->own, &t->n_own);
		if (r < 0)
			return r;
	}
	return 0;
}

static int split(pid_t pid, struct thread_sc *th, size_t n, Crf__Core__TaskCore *tc)
{
	struct crf_seccomp_chain *c = calloc(n, sizeof(*c));
	size_t k, a, b;
	int r;

	if (!c)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		c[i] = th[i].c;
	k = seccomp_common(c, n);
	r = seccomp_own_clash(c, n, k, &a, &b);
	free(c);
	if (r < 0)
		return crf_error_errno(
			EOPNOTSUPP,
			"pid %d: threads %d and %d hold the same seccomp filter (number "
			"%zu from the oldest) that thread %d lacks: crf restores "
			"filters that every thread of a process shares, or that one "
			"thread has alone",
			(int)pid, (int)th[a].c.tid, (int)th[b].c.tid, k + 1,
			(int)lacking(th, n, k, a));
	tc->seccomp = malloc(sizeof(*tc->seccomp));
	if (!tc->seccomp)
		return -ENOMEM;
	crf__core__seccomp__init(tc->seccomp);
	r = build(th, n, k, tc->seccomp);
	if (r >= 0)
		crf_debug("pid %d: seccomp: %zu filter%s shared by its %zu thread%s", (int)pid, k,
			  k == 1 ? "" : "s", n, n == 1 ? "" : "s");
	return r;
}

int seccomp_dump(const struct crf_proc *pr, Crf__Core__TaskCore *tc)
{
	size_t n = pr->frozen->n_tids;
	struct thread_sc *th = calloc(n, sizeof(*th));
	int r;

	if (!th)
		return crf_error_errno(ENOMEM, "pid %d: seccomp", (int)pr->pid);
	r = read_modes(pr, th);
	for (size_t i = 0; r > 0 && i < n; i++)
		if (th[i].c.mode == SECCOMP_MODE_FILTER)
			r = read_chain(pr->pid, &th[i]) ?: 1;
	if (r > 0)
		r = split(pr->pid, th, n, tc);
	threads_free(th, n);
	if (r == -ENOMEM)
		r = crf_error_errno(ENOMEM, "pid %d: seccomp", (int)pr->pid);
	return r < 0 ? r : 0;
}

static void filters_free(Crf__Core__SeccompFilter **f, size_t n)
{
	for (size_t i = 0; f && i < n; i++) {
		free(f[i]->code.data);
		free(f[i]);
	}
	free(f);
}

void seccomp_free(Crf__Core__TaskCore *tc)
{
	Crf__Core__Seccomp *s = tc->seccomp;

	if (!s)
		return;
	filters_free(s->shared, s->n_shared);
	for (size_t i = 0; s->threads && i < s->n_threads; i++) {
		filters_free(s->threads[i]->own, s->threads[i]->n_own);
		free(s->threads[i]);
	}
	free(s->threads);
	free(s);
	tc->seccomp = NULL;
}
