// SPDX-License-Identifier: GPL-2.0-only
/*
 * Restoring seccomp state (seccomp.h): checked before the tree is forked,
 * then laid out for the restorer (parasite/restorer-seccomp.c), which
 * installs it after crf's "go".  Installing it any earlier would put the
 * restorer's own remaining system calls (credentials, the handshake, the
 * futex waits of the threads) under the program's filters; after "go",
 * crf traces every thread with PTRACE_O_SUSPEND_SECCOMP until it is back in
 * the program and the restorer is unmapped (core/restore/rst-release.c), so the
 * filters judge nothing of crf's.  The check makes sure this crf can do
 * that before a single task exists.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptrace.h"
#include "rst-task.h"
#include "seccomp.h"
#include "util.h"

#define STOP_TIMEOUT_MS 5000

static bool filter_ok(const Crf__Core__SeccompFilter *f, size_t *path)
{
	size_t insns = f->code.len / sizeof(struct sock_filter);

	*path += insns + 4;
	return f->code.len % sizeof(struct sock_filter) == 0 && insns >= 1 &&
	       insns <= CRF_SECCOMP_MAX_INSNS && !(f->flags & ~SECCOMP_FILTER_FLAG_LOG);
}

static bool has_thread(const Crf__Core__TaskCore *tc, pid_t tid)
{
	if (!tc->n_threads)
		return tid == tc->pid;
	for (size_t i = 0; i < tc->n_threads; i++)
		if (tc->threads[i]->tid == tid)
			return true;
	return false;
}

static bool thread_ok(const Crf__Core__Seccomp *s, const Crf__Core__SeccompThread *t)
{
	size_t path = 0;
	bool ok = true;

	if (t->mode > SECCOMP_MODE_FILTER)
		return false;
	if ((t->mode == SECCOMP_MODE_FILTER) != (s->n_shared + t->n_own > 0))
		return false;
	for (size_t i = 0; i < s->n_shared; i++)
		ok = ok && filter_ok(s->shared[i], &path);
	for (size_t i = 0; i < t->n_own; i++)
		ok = ok && filter_ok(t->own[i], &path);
	return ok && path <= CRF_SECCOMP_MAX_PATH_INSNS;
}

/* One record per thread of the process, the leader first, each well-formed. */
static int check_task(const Crf__Core__TaskCore *tc)
{
	const Crf__Core__Seccomp *s = tc->seccomp;
	size_t want = tc->n_threads ? tc->n_threads : 1;

	if (s->n_threads != want || s->threads[0]->tid != tc->pid)
		return crf_error_errno(EBADMSG, "core-%d.img: seccomp of %zu threads, not %zu",
				       (int)tc->pid, s->n_threads, want);
	for (size_t i = 0; i < s->n_threads; i++) {
		const Crf__Core__SeccompThread *t = s->threads[i];

		if (!has_thread(tc, t->tid) || !thread_ok(s, t))
			return crf_error_errno(EBADMSG, "core-%d.img: bad seccomp of thread %d",
					       (int)tc->pid, (int)t->tid);
	}
	return 0;
}

/*
 * Can crf suspend seccomp in a task it traces?  Asked of a child of its
 * own, stopped, the way rst_release() will ask the restored threads.
 */
static int probe_suspend(void)
{
	struct crf_stop st;
	pid_t pid;
	int r;

	pid = fork();
	if (pid < 0)
		return crf_error_errno(errno, "fork");
	if (pid == 0)
		for (;;)
			pause();
	r = ptrace_seize(pid);
	if (r >= 0)
		r = ptrace_interrupt(pid);
	if (r >= 0)
		r = ptrace_wait(pid, STOP_TIMEOUT_MS, &st);
	if (r >= 0)
		r = ptrace_suspend_seccomp(pid);
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
		;
	return r;
}

int seccomp_restore_check(Crf__Core__TaskCore *const *tcs, size_t n)
{
	pid_t first = 0;
	int r = 0;

	for (size_t i = 0; r >= 0 && i < n; i++) {
		if (!tcs[i] || !tcs[i]->seccomp)
			continue;
		r = check_task(tcs[i]);
		if (!first)
			first = tcs[i]->pid;
	}
	if (r < 0 || !first)
		return r;
	r = probe_suspend();
	if (r < 0)
		return crf_error_errno(r,
				       "pid %d has seccomp state, and this crf cannot suspend "
				       "seccomp in the tasks it restores (PTRACE_O_SUSPEND_SECCOMP "
				       "needs CAP_SYS_ADMIN, a crf not under seccomp itself and "
				       "CONFIG_CHECKPOINT_RESTORE)",
				       (int)first);
	return 0;
}

/* The table and the code, built in one buffer (rst-task.h). */
struct table {
	struct crf_rst_seccomp_filter *f;
	uint8_t *code;
	size_t n, code_at;
};

static void add(struct table *tb, const Crf__Core__SeccompFilter *f)
{
	tb->f[tb->n] = (struct crf_rst_seccomp_filter){
		.code_off = tb->code_at,
		.n_insns = (uint32_t)(f->code.len / sizeof(struct sock_filter)),
		.flags = f->flags,
	};
	memcpy(tb->code + tb->code_at, f->code.data, f->code.len);
	tb->code_at += f->code.len;
	tb->n++;
}

static struct crf_rst_seccomp_arg own_step(struct table *tb, const Crf__Core__SeccompThread *t)
{
	struct crf_rst_seccomp_arg a = {
		.mode = t->mode, .first = (uint32_t)tb->n, .n = (uint32_t)t->n_own};

	for (size_t i = 0; i < t->n_own; i++)
		add(tb, t->own[i]);
	return a;
}

/* The restorer's thread of @tid: its TID in crf's level is set_tid's last. */
static struct crf_rst_thread_arg *thread_arg(struct crf_rst_task *t, pid_t tid)
{
	for (size_t i = 0; i < t->n_threads; i++) {
		struct crf_rst_thread_arg *a = &t->threads[i].a;

		if (a->n_set_tid && a->set_tid[a->n_set_tid - 1] == tid)
			return a;
	}
	return NULL;
}

static int alloc_table(const Crf__Core__TaskCore *tc, struct crf_rst_task *t, struct table *tb)
{
	const Crf__Core__Seccomp *s = tc->seccomp;
	size_t n = s->n_shared, code = 0;

	for (size_t i = 0; i < s->n_shared; i++)
		code += s->shared[i]->code.len;
	for (size_t i = 0; i < s->n_threads; i++) {
		n += s->threads[i]->n_own;
		for (size_t f = 0; f < s->threads[i]->n_own; f++)
			code += s->threads[i]->own[f]->code.len;
	}
	t->seccomp_len = n * sizeof(*tb->f) + code;
	t->seccomp_buf = calloc(1, t->seccomp_len);
	if (!t->seccomp_buf)
		return crf_error_errno(ENOMEM, "pid %d: seccomp filters", (int)tc->pid);
	tb->f = (struct crf_rst_seccomp_filter *)t->seccomp_buf;
	tb->code = t->seccomp_buf;
	tb->code_at = n * sizeof(*tb->f);
	t->a.n_seccomp_filters = (uint32_t)n;
	return 0;
}

int seccomp_fill(struct crf_rst_task *t, const Crf__Core__TaskCore *tc)
{
	const Crf__Core__Seccomp *s = tc->seccomp;
	struct table tb = {0};
	int r;

	if (!s)
		return 0;
	r = alloc_table(tc, t, &tb);
	if (r < 0)
		return r;
	for (size_t i = 0; i < s->n_shared; i++)
		add(&tb, s->shared[i]);
	t->a.n_seccomp_shared = (uint32_t)s->n_shared;
	t->a.seccomp = own_step(&tb, s->threads[0]);
	for (size_t i = 1; i < s->n_threads; i++) {
		struct crf_rst_thread_arg *a = thread_arg(t, s->threads[i]->tid);

		if (!a)
			return crf_error_errno(EBADMSG,
					       "pid %d: seccomp of a thread %d not restored",
					       (int)tc->pid, (int)s->threads[i]->tid);
		a->seccomp = own_step(&tb, s->threads[i]);
	}
	return 0;
}
