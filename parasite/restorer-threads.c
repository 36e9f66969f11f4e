// SPDX-License-Identifier: GPL-2.0-only
/*
 * The restorer's threads: the leader creates every other thread of the task
 * with clone3() and its saved TID, on a stack of its own in the restorer's
 * mapping; each sets its own per-thread state and credentials, reports, and
 * waits for the leader's word.  Every thread, the leader included, then
 * returns into the program through a signal frame of its own.
 *
 * Same rules as restorer.c: no libc, no writable globals, no pointer tables.
 */
#include <stddef.h>
#include <stdint.h>

#include <asm/prctl.h>
#include <asm/sigcontext.h>
#include <linux/ioprio.h>
#include <linux/prctl.h>

#include "crf-restorer.h"
#include "crf-syscall.h"
#include "restorer-kabi.h"
#include "restorer-priv.h"

void crf_restorer_thread_main(struct crf_rst_args *a, struct crf_rst_thread_arg *t)
	__attribute__((noreturn, used));
long crf_restorer_clone_thread(struct kclone_args *ca, size_t size, struct crf_rst_args *a,
			       struct crf_rst_thread_arg *t);

static int thread_ok(const struct crf_rst_args *a, const struct crf_rst_thread_arg *t)
{
	uint64_t room = a->blob_start + a->blob_len - (uint64_t)a;

	return crf_rst_array_ok(a, t->xsave_off, t->xsave_len + 4ul, 1) &&
	       crf_rst_array_ok(a, t->frame_off, CRF_RST_FRAME_SIZE, 1) &&
	       crf_rst_array_ok(a, t->pending_off, t->n_pending, 128) && t->pdeath_signal >= 0 &&
	       t->pdeath_signal <= CRF_RST_NSIG && t->n_set_tid >= 1 &&
	       t->n_set_tid <= CRF_RST_MAX_LEVELS &&
	       t->stack_top_off >= a->args_len + CRF_RST_THREAD_STACK && t->stack_top_off <= room;
}

void crf_rst_check_threads(struct crf_rst_args *a)
{
	const struct crf_rst_thread_arg *t = at(a, a->threads_off);

	if (!crf_rst_array_ok(a, a->threads_off, a->n_threads, sizeof(*t)))
		FAIL(a, -EINVAL, "restorer: thread array out of bounds");
	for (uint32_t i = 0; i < a->n_threads; i++)
		if (!thread_ok(a, &t[i]))
			FAIL_AT(a, -EINVAL, "restorer: bad arguments for thread", i);
}

/* What one thread returns into the program with. */
struct ret_state {
	const uint64_t *regs;
	char *xsave, *frame;
	uint32_t xsave_len;
	int32_t sas_flags;
	uint64_t blocked, sas_sp, sas_size;
};

/*
 * Mark the saved xsave area the way the kernel marks a signal frame's, so
 * that rt_sigreturn restores all of it rather than the legacy part only.
 */
static uint64_t prepare_xsave(char *x, uint32_t len)
{
	struct _fpx_sw_bytes *sw = (struct _fpx_sw_bytes *)(x + 464);
	uint64_t features;

	if (!len)
		return 0;
	if (len <= 512) {
		sw->magic1 = 0;
		return (uint64_t)x;
	}
	/* ptrace fills the software bytes with the full feature mask. */
	features = sw->magic1 == FP_XSTATE_MAGIC1 ? sw->xfeatures : *(uint64_t *)(x + 512);
	sw->magic1 = FP_XSTATE_MAGIC1;
	sw->extended_size = len + FP_XSTATE_MAGIC2_SIZE;
	sw->xfeatures = features;
	sw->xstate_size = len;
	*(uint32_t *)(x + len) = FP_XSTATE_MAGIC2;
	return (uint64_t)x;
}

static struct kucontext *build_frame(const struct ret_state *s)
{
	struct kucontext *uc = (struct kucontext *)(s->frame + 8);
	const uint64_t *g = s->regs;

	memset(s->frame, 0, CRF_RST_FRAME_SIZE);
	uc->flags = UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS;
	/* rt_sigreturn also sets the alternate stack from the frame. */
	uc->ss_sp = s->sas_sp;
	uc->ss_flags = crf_rst_sas_flags(s->sas_size, s->sas_flags);
	uc->ss_size = s->sas_size;
	uc->r8 = g[R8], uc->r9 = g[R9], uc->r10 = g[R10], uc->r11 = g[R11];
	uc->r12 = g[R12], uc->r13 = g[R13], uc->r14 = g[R14], uc->r15 = g[R15];
	uc->rdi = g[RDI], uc->rsi = g[RSI], uc->rbp = g[RBP], uc->rbx = g[RBX];
	uc->rdx = g[RDX], uc->rax = g[RAX], uc->rcx = g[RCX], uc->rsp = g[RSP];
	uc->rip = g[RIP], uc->eflags = g[EFLAGS];
	uc->cs = g[CS], uc->ss = g[SS], uc->fs = g[FS], uc->gs = g[GS];
	uc->fpstate = prepare_xsave(s->xsave, s->xsave_len);
	if (s->xsave_len > 512)
		uc->flags |= UC_FP_XSTATE;
	uc->sigmask = s->blocked;
	return uc;
}

/*
 * Return into the program.  The segment bases are not part of a signal
 * frame, so they are set first; nothing here uses %fs after that.  The
 * kernel finds the frame 8 bytes below %rsp, as if a handler had returned.
 */
static void __attribute__((noreturn)) jump_to_program(const struct ret_state *s)
{
	struct kucontext *uc = build_frame(s);
	long r;

	r = sys2(__NR_arch_prctl, ARCH_SET_FS, s->regs[FS_BASE]);
	if (r == 0)
		r = sys2(__NR_arch_prctl, ARCH_SET_GS, s->regs[GS_BASE]);
	if (r < 0)
		for (;;)
			sys1(__NR_exit_group, 1);
	__asm__ volatile("movq %0, %%rsp\n\t"
			 "movl %1, %%eax\n\t"
			 "syscall\n\t"
			 "ud2"
			 :
			 : "r"(uc), "i"(__NR_rt_sigreturn)
			 : "memory");
	__builtin_unreachable();
}

void crf_rst_leader_return(struct crf_rst_args *a)
{
	struct ret_state s = {a->regs,	    at(a, a->xsave_off), at(a, a->frame_off), a->xsave_len,
			      a->sas_flags, a->blocked,		 a->sas_sp,	      a->sas_size};

	jump_to_program(&s);
}

/* Threads: see crf_rst_thread_arg.  Only the leader's clear_tid and robust list here. */
void crf_rst_leader_thread(struct crf_rst_args *a)
{
	long r;

	if (!a->have_thread_state)
		return;
	sys1(__NR_set_tid_address, a->clear_tid);
	if (!a->robust_head)
		return;
	r = sys2(__NR_set_robust_list, a->robust_head, a->robust_len);
	if (r < 0)
		FAIL_AT(a, r, "set_robust_list", a->robust_head);
}

static void thread_sched(struct crf_rst_args *a, const struct crf_rst_thread_arg *t)
{
	int32_t prio = t->sched_priority;
	long r;

	r = sys3(__NR_sched_setscheduler, 0, t->sched_policy, &prio);
	if (r < 0)
		FAIL_AT(a, r, "thread sched_setscheduler, policy", (uint64_t)t->sched_policy);
	r = sys3(__NR_setpriority, PRIO_PROCESS, 0, t->nice);
	if (r < 0)
		FAIL_AT(a, r, "thread setpriority", (uint64_t)t->nice);
	r = sys3(__NR_sched_setaffinity, 0, sizeof(t->affinity), t->affinity);
	if (r < 0)
		FAIL(a, r, "thread sched_setaffinity");
	/* 0 (none set) too: a thread would have the leader's otherwise. */
	if (t->ioprio >= 0 && (r = sys3(__NR_ioprio_set, IOPRIO_WHO_PROCESS, 0, t->ioprio)) < 0)
		FAIL_AT(a, r, "thread ioprio_set", (uint64_t)t->ioprio);
}

/* A thread's private signals, queued by itself: only then may the siginfo be any. */
static void thread_pending(struct crf_rst_args *a, const struct crf_rst_thread_arg *t)
{
	const char *info = at(a, t->pending_off);
	long pid = sys0(__NR_getpid), tid = sys0(__NR_gettid);

	for (uint32_t i = 0; i < t->n_pending; i++, info += 128) {
		int sig = *(const int32_t *)info;
		long r = sys4(__NR_rt_tgsigqueueinfo, pid, tid, sig, info);

		if (r < 0)
			FAIL_AT(a, r, "queue a thread's pending signal", sig);
	}
}

static void thread_state(struct crf_rst_args *a, const struct crf_rst_thread_arg *t)
{
	struct {
		uint64_t sp;
		int32_t flags, pad;
		uint64_t size;
	} ss = {t->sas_sp, crf_rst_sas_flags(t->sas_size, t->sas_flags), 0, t->sas_size};
	long r;

	sys1(__NR_set_tid_address, t->clear_tid);
	if (t->robust_head) {
		r = sys2(__NR_set_robust_list, t->robust_head, t->robust_len);
		if (r < 0)
			FAIL_AT(a, r, "thread set_robust_list", t->robust_head);
	}
	r = sys2(__NR_sigaltstack, &ss, 0);
	if (r < 0)
		FAIL_AT(a, r, "thread sigaltstack", t->sas_sp);
	r = sys2(__NR_prctl, PR_SET_NAME, t->comm);
	if (r < 0)
		FAIL(a, r, "thread prctl(PR_SET_NAME)");
	thread_sched(a, t);
	crf_rst_thread_slack(a, t);
	thread_pending(a, t);
	if (t->rseq_len) {
		r = sys4(__NR_rseq, t->rseq_ptr, t->rseq_len, 0, t->rseq_sig);
		if (r < 0)
			FAIL_AT(a, r, "thread rseq", t->rseq_ptr);
	}
}

/*
 * A new thread, on its own stack in the restorer's mapping.  Credentials
 * are per thread in Linux: each thread sets its own itself (a raw setresuid
 * changes only the caller's), the process's unless it had credentials of its
 * own, after the rest of its state, which may need crf's privileges.  Then it reports and waits for
 * the leader.
 */
void crf_restorer_thread_main(struct crf_rst_args *a, struct crf_rst_thread_arg *t)
{
	struct ret_state rs = {t->regs,	     at(a, t->xsave_off), at(a, t->frame_off), t->xsave_len,
			       t->sas_flags, t->blocked,	  t->sas_sp,	       t->sas_size};
	const struct crf_rst_creds *creds = t->own_creds ? &t->creds : &a->creds;
	uint64_t keep = crf_rst_seccomp_keep(a, &t->seccomp, 0);

	thread_state(a, t);
	crf_rst_restore_creds(a, creds, keep);
	crf_rst_thread_after_creds(a, t);
	__atomic_add_fetch(&a->threads_ready, 1, __ATOMIC_SEQ_CST);
	sys3(__NR_futex, &a->threads_ready, FUTEX_WAKE_PRIVATE, 1);
	while (!__atomic_load_n(&a->threads_go, __ATOMIC_SEQ_CST))
		sys4(__NR_futex, &a->threads_go, FUTEX_WAIT_PRIVATE, 0, 0);
	crf_rst_seccomp_own(a, &t->seccomp, creds, keep);
	jump_to_program(&rs);
}

/* With the address space built, before the leader's credentials (clone3 with set_tid needs crf's).
 */
void crf_rst_create_threads(struct crf_rst_args *a)
{
	struct crf_rst_thread_arg *t = at(a, a->threads_off);

	for (uint32_t i = 0; i < a->n_threads; i++) {
		struct kclone_args ca;
		long r;

		memset(&ca, 0, sizeof(ca));
		ca.flags = THREAD_CLONE_FLAGS;
		ca.stack = (uint64_t)a + t[i].stack_top_off - CRF_RST_THREAD_STACK;
		ca.stack_size = CRF_RST_THREAD_STACK;
		ca.set_tid = (uint64_t)t[i].set_tid;
		ca.set_tid_size = t[i].n_set_tid;
		r = crf_restorer_clone_thread(&ca, sizeof(ca), a, &t[i]);
		if (r < 0)
			FAIL_AT(a, r, "clone3 of thread", (uint64_t)t[i].set_tid[0]);
	}
}

void crf_rst_wait_threads(struct crf_rst_args *a)
{
	uint32_t n;

	while ((n = __atomic_load_n(&a->threads_ready, __ATOMIC_SEQ_CST)) < a->n_threads)
		sys4(__NR_futex, &a->threads_ready, FUTEX_WAIT_PRIVATE, n, 0);
}

void crf_rst_release_threads(struct crf_rst_args *a)
{
	if (!a->n_threads)
		return;
	__atomic_store_n(&a->threads_go, 1, __ATOMIC_SEQ_CST);
	sys3(__NR_futex, &a->threads_go, FUTEX_WAKE_PRIVATE, 0x7fffffff);
}
