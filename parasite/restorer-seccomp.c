// SPDX-License-Identifier: GPL-2.0-only
/*
 * The restorer's seccomp steps (core/restore/seccomp-restore.c builds their
 * arguments).  They run after crf's "go", as the last thing before each
 * thread returns into the program: from then on the program's filters or
 * strict mode would judge every system call the restorer still makes,
 * were crf not tracing every thread with PTRACE_O_SUSPEND_SECCOMP until it
 * is back in the program (core/restore/rst-release.c).
 *
 * Sharing: the filters every thread holds are installed once, by the
 * leader, with SECCOMP_FILTER_FLAG_TSYNC, before any other thread goes on,
 * so that they are the same filters in every thread (a later TSYNC of the
 * program checks exactly that); then each thread stacks its own.
 *
 * Privilege: a filter needs no_new_privs or CAP_SYS_ADMIN to be installed,
 * and a task may hold filters with neither (installed while it was
 * privileged).  So a thread that installs filters keeps CAP_SYS_ADMIN and
 * leaves no_new_privs off when it sets its credentials before "go" (a TSYNC
 * caller with no_new_privs would also force it on every other thread),
 * and sets both as saved once its filters are in.
 *
 * Same rules as restorer.c: no libc, no writable globals, no pointer tables.
 */
#include <stddef.h>
#include <stdint.h>

#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "crf-restorer.h"
#include "crf-syscall.h"
#include "restorer-kabi.h"
#include "restorer-priv.h"

static int step_ok(const struct crf_rst_args *a, const struct crf_rst_seccomp_arg *s)
{
	return s->mode <= SECCOMP_MODE_FILTER && s->first <= a->n_seccomp_filters &&
	       s->n <= a->n_seccomp_filters - s->first;
}

void crf_rst_check_seccomp(struct crf_rst_args *a)
{
	const struct crf_rst_seccomp_filter *f = at(a, a->seccomp_filters_off);
	const struct crf_rst_thread_arg *t = at(a, a->threads_off);

	if (!crf_rst_array_ok(a, a->seccomp_filters_off, a->n_seccomp_filters, sizeof(*f)) ||
	    a->n_seccomp_shared > a->n_seccomp_filters || !step_ok(a, &a->seccomp))
		FAIL(a, -EINVAL, "restorer: seccomp arguments out of bounds");
	for (uint32_t i = 0; i < a->n_seccomp_filters; i++)
		if (!f[i].n_insns || f[i].n_insns > BPF_MAXINSNS ||
		    !crf_rst_array_ok(a, f[i].code_off, f[i].n_insns, sizeof(struct sock_filter)))
			FAIL_AT(a, -EINVAL, "restorer: bad seccomp filter", i);
	for (uint32_t i = 0; i < a->n_threads; i++)
		if (!step_ok(a, &t[i].seccomp))
			FAIL_AT(a, -EINVAL, "restorer: bad seccomp arguments for thread", i);
}

uint32_t crf_rst_seccomp_any(const struct crf_rst_args *a)
{
	const struct crf_rst_thread_arg *t = at(a, a->threads_off);
	uint32_t any = a->seccomp.mode;

	for (uint32_t i = 0; i < a->n_threads; i++)
		any |= t[i].seccomp.mode;
	return any != 0;
}

uint64_t crf_rst_seccomp_keep(const struct crf_rst_args *a, const struct crf_rst_seccomp_arg *s,
			      int leader)
{
	if (s->n || (leader && a->n_seccomp_shared))
		return 1ull << CAP_SYS_ADMIN;
	return 0;
}

static void install(struct crf_rst_args *a, uint32_t i, uint32_t flags)
{
	const struct crf_rst_seccomp_filter *f = at(a, a->seccomp_filters_off);
	struct sock_fprog prog = {(unsigned short)f[i].n_insns, at(a, f[i].code_off)};
	long r;

	r = sys3(__NR_seccomp, SECCOMP_SET_MODE_FILTER, f[i].flags | flags, &prog);
	/* With TSYNC, a positive result is the thread that could not follow. */
	if (r > 0)
		FAIL_AT(a, -EBUSY, "seccomp TSYNC refused by thread", (uint64_t)r);
	if (r < 0)
		FAIL_AT(a, r, "seccomp filter install, filter", i);
}

void crf_rst_seccomp_shared(struct crf_rst_args *a)
{
	for (uint32_t i = 0; i < a->n_seccomp_shared; i++)
		install(a, i, SECCOMP_FILTER_FLAG_TSYNC);
}

void crf_rst_seccomp_own(struct crf_rst_args *a, const struct crf_rst_seccomp_arg *s,
			 const struct crf_rst_creds *c, uint64_t keep)
{
	long r;

	for (uint32_t i = 0; i < s->n; i++)
		install(a, s->first + i, 0);
	crf_rst_restore_creds_kept(a, c, keep);
	if (s->mode == SECCOMP_MODE_STRICT) {
		r = sys3(__NR_seccomp, SECCOMP_SET_MODE_STRICT, 0, 0);
		if (r < 0)
			FAIL(a, r, "seccomp strict mode");
	}
}
