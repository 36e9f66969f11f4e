// SPDX-License-Identifier: GPL-2.0-only
/*
 * Infecting a frozen task with the parasite, and curing it (docs/parasite.md).
 *
 * Bootstrap: crf borrows two bytes of an executable private page of the
 * task, writes a `syscall` there and makes the stopped thread run it with
 * PTRACE_SYSCALL, reading the result at the syscall-exit-stop.  That maps
 * the parasite's area; from then on commands run in the blob, which ends
 * each call with an int3.  The bootstrap deliberately has no int3: a trap
 * is a forced SIGTRAP, and the kernel resets the disposition of a forced
 * signal that is ignored or blocked, which would change the task's state
 * before crf has had a chance to read it.
 *
 * Signals.  While infected the thread blocks every signal but SIGTRAP
 * (needed for the int3), set with PTRACE_SETSIGMASK: nothing can run a
 * handler of the task on the parasite's stack, and what arrives stays
 * pending for the task.  The task's own mask is read after the thread's
 * first resume, because only then has the kernel put back a mask that
 * ppoll/pselect/sigsuspend had replaced temporarily (and those calls
 * restart with their own mask again later).  A signal the thread dequeues
 * before the mask is in place, or one that cannot be blocked, is caught in
 * its signal-delivery-stop and held; blockable ones are queued again in
 * the task with rt_tgsigqueueinfo (the task may send itself any siginfo),
 * the others are sent again with tgkill at the cure.
 *
 * PTRACE_O_EXITKILL is on only from the first borrowed byte to the cure: if
 * crf dies then, the task is killed rather than left running with crf's
 * code in it and its registers pointing there.  Outside an infection it is
 * off, so that a crash of crf after a --leave-running dump cannot kill a
 * healthy task.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <crf/log.h>

#include "crf-blobs.h"
#include "infect-priv.h"
#include "task-attrs.h"
#include "util.h"

#define USER_CS	  0x33 /* 64-bit user code segment; anything else is compat mode */
#define EFLAGS_TF 0x100
#define EFLAGS_DF 0x400

static size_t page_up(size_t n)
{
	return (n + CRF_PSITE_PAGE - 1) & ~(size_t)(CRF_PSITE_PAGE - 1);
}

int crf_parasite_rw(struct crf_parasite *p, uint64_t addr, void *buf, size_t len, bool write)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = write ? pwrite(p->mem_fd, (char *)buf + done, len - done,
					   (off_t)(addr + done))
				  : pread(p->mem_fd, (char *)buf + done, len - done,
					  (off_t)(addr + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return crf_error_errno(n < 0 ? errno : EIO,
					       "pid %d: %s %zu bytes at %#" PRIx64, (int)p->pid,
					       write ? "writing" : "reading", len, addr + done);
		done += (size_t)n;
	}
	return 0;
}

/* 0, or -ENOMEM (logged): a signal that could not be kept fails the dump. */
static int hold(struct crf_parasite *p, const siginfo_t *si)
{
	int sig = si->si_signo;
	siginfo_t *v;

	crf_debug("pid %d: signal %d arrived while infected, held", (int)p->pid, sig);
	if (sig == SIGSTOP || sig == SIGTRAP || sig == SIGKILL) {
		for (size_t i = 0; i < p->n_resend; i++)
			if (p->resend[i] == sig)
				return 0;
		if (p->n_resend < sizeof(p->resend) / sizeof(p->resend[0]))
			p->resend[p->n_resend++] = sig;
		return 0;
	}
	if (p->n_held == p->cap_held) {
		v = reallocarray(p->held, p->cap_held ? 2 * p->cap_held : 8, sizeof(*v));
		if (!v)
			return crf_error_errno(ENOMEM, "pid %d: signal %d arrived while infected",
					       (int)p->pid, sig);
		p->held = v;
		p->cap_held = p->cap_held ? 2 * p->cap_held : 8;
	}
	p->held[p->n_held++] = *si;
	return 0;
}

int crf__psite_wait(struct crf_parasite *p, bool trap)
{
	struct crf_stop st;
	siginfo_t si;
	int r;

	for (;;) {
		r = ptrace_wait(p->pid, -1, &st);
		if (r < 0)
			return r;
		switch (st.kind) {
		case CRF_STOP_EXITED:
			return crf_error_errno(ESRCH, "pid %d died while infected (status %#x)",
					       (int)p->pid, st.status);
		case CRF_STOP_SYSCALL:
			if (!trap)
				return 0;
			break;
		case CRF_STOP_SIGNAL:
			r = ptrace_get_siginfo(p->pid, &si);
			if (r < 0)
				return r;
			/* The blob's int3: a kernel-generated SIGTRAP. */
			if (trap && st.sig == SIGTRAP && si.si_code == SI_KERNEL)
				return 0;
			r = hold(p, &si);
			if (r < 0)
				return r;
			break;
		default: /* a stale interrupt-stop or a group-stop: keep going */
			break;
		}
		r = ptrace_resume(p->pid, !trap, 0);
		if (r < 0)
			return r;
	}
}

/* Registers to start crf's code at @rip with, based on the saved ones. */
static struct user_regs_struct start_regs(const struct crf_parasite *p, uint64_t rip)
{
	struct user_regs_struct g = p->saved.gp;

	g.rip = rip;
	/* Not a system call: no restart logic may touch these registers. */
	g.orig_rax = (uint64_t)-1;
	/* The C ABI wants DF clear; no single-stepping through crf's code. */
	g.eflags &= ~(uint64_t)(EFLAGS_TF | EFLAGS_DF);
	return g;
}

/* One system call through the borrowed bytes (see the top of the file). */
static long bootstrap(struct crf_parasite *p, long nr, long a0, long a1, long a2, long a3, long a4,
		      long a5, bool *ok)
{
	static const uint8_t insn[2] = {0x0f, 0x05}; /* syscall */
	struct user_regs_struct g = start_regs(p, p->code);
	int r;

	*ok = false;
	g.rax = (uint64_t)nr;
	g.rdi = (uint64_t)a0;
	g.rsi = (uint64_t)a1;
	g.rdx = (uint64_t)a2;
	g.r10 = (uint64_t)a3;
	g.r8 = (uint64_t)a4;
	g.r9 = (uint64_t)a5;
	r = crf_parasite_rw(p, p->code, (void *)insn, sizeof(insn), true);
	if (r < 0)
		return r;
	r = ptrace_set_gp(p->pid, &g);
	p->moved = true;
	for (int stop = 0; r >= 0 && stop < 2; stop++) { /* enter, exit */
		r = ptrace_resume(p->pid, true, 0);
		if (r >= 0)
			r = crf__psite_wait(p, false);
	}
	if (r >= 0)
		r = ptrace_get_gp(p->pid, &g);
	/* Put the bytes back whatever happened (a dead task makes this fail too). */
	crf_parasite_rw(p, p->code, p->code_orig, sizeof(p->code_orig), true);
	if (r < 0)
		return r;
	*ok = true;
	return (long)g.rax;
}

/*
 * Two bytes to run `syscall` from: in the executable private mapping the
 * thread stopped in, else the vDSO, else any.  Never a shared mapping: a
 * forced write there would reach the file (the kernel refuses it anyway).
 */
static int find_code(struct crf_parasite *p)
{
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL;
	char path[64], perms[8], name[256];
	size_t cap = 0;
	uint64_t start, end, any = 0, vdso = 0, here = 0;
	int r;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)p->pid);
	f = fopen(path, "re");
	if (!f)
		return crf_error_errno(errno, "%s", path);
	while (getline(&line, &cap, f) > 0) {
		name[0] = '\0';
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %*s %*s %*s %255s", &start, &end,
			   perms, name) < 3)
			continue;
		if (perms[2] != 'x' || perms[3] != 'p' || !strcmp(name, "[vsyscall]"))
			continue;
		if (!any)
			any = start;
		if (!strcmp(name, "[vdso]"))
			vdso = start;
		if (p->saved.gp.rip >= start && p->saved.gp.rip < end)
			here = start;
	}
	p->code = here ?: vdso ?: any;
	if (!p->code)
		return crf_error_errno(ENOEXEC, "pid %d: no executable private mapping",
				       (int)p->pid);
	r = crf_parasite_rw(p, p->code, p->code_orig, sizeof(p->code_orig), false);
	return r < 0 ? r : 0;
}

/* Map the area, block signals, load the blob and make it executable. */
static int map_area(struct crf_parasite *p)
{
	size_t text = page_up(crf_parasite_blob_size);
	size_t len = text + CRF_PSITE_STACK_SIZE + CRF_PSITE_ARGS_SIZE + CRF_PSITE_SCRATCH_SIZE;
	uint64_t all_but_trap = ~(1ull << (SIGTRAP - 1));
	bool ok;
	long ret;
	int r;

	ret = bootstrap(p, SYS_mmap, 0, (long)len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0, &ok);
	if (!ok)
		return (int)ret;
	if (ret < 0 && ret > -4096)
		return crf_error_errno((int)-ret, "pid %d: mmap of the parasite", (int)p->pid);
	p->area = (uint64_t)ret;
	p->area_len = len;
	p->text_len = text;
	p->stack_top = p->area + text + CRF_PSITE_STACK_SIZE;
	p->args = p->stack_top;
	p->scratch = p->args + CRF_PSITE_ARGS_SIZE;

	r = ptrace_get_sigmask(p->pid, &p->sigmask);
	if (r >= 0)
		r = ptrace_set_sigmask(p->pid, all_but_trap);
	if (r < 0)
		return r;
	p->mask_set = true;

	/*
	 * A flag no neighbour has, so the area never merges with an adjacent
	 * anonymous mapping of the task: a memory dump sees it as VMAs of its
	 * own, exactly parasite_area().
	 */
	ret = bootstrap(p, SYS_madvise, (long)p->area, (long)len, MADV_DONTDUMP, 0, 0, 0, &ok);
	if (ok && ret < 0)
		return crf_error_errno((int)-ret, "pid %d: madvise of the parasite", (int)p->pid);
	if (!ok)
		return (int)ret;
	r = crf_parasite_rw(p, p->area, (void *)crf_parasite_blob, crf_parasite_blob_size, true);
	if (r < 0)
		return r;
	ret = bootstrap(p, SYS_mprotect, (long)p->area, (long)text, PROT_READ | PROT_EXEC, 0, 0, 0,
			&ok);
	if (ok && ret == -EACCES) {
		/* Memory-deny-write-execute forbids it: say so, not EACCES. */
		long mdwe = bootstrap(p, SYS_prctl, CRF_PR_GET_MDWE, 0, 0, 0, 0, 0, &ok);

		if (ok && mdwe > 0)
			return crf_error_errno(
				ENOTSUP,
				"pid %d: memory-deny-write-execute (PR_SET_MDWE %#lx), "
				"which crf does not restore (nor can its parasite run "
				"there)",
				(int)p->pid, mdwe);
		ret = -EACCES;
	}
	if (ok && ret < 0)
		return crf_error_errno((int)-ret, "pid %d: mprotect of the parasite", (int)p->pid);
	return ok ? 0 : (int)ret;
}

/* Read SIGTRAP's disposition before the first int3 can change it. */
static int check_sigtrap(struct crf_parasite *p)
{
	uint64_t at = p->args + offsetof(struct crf_psite_args, sigtrap);
	bool ok;
	long ret;

	ret = bootstrap(p, SYS_rt_sigaction, SIGTRAP, 0, (long)at, 8, 0, 0, &ok);
	if (!ok)
		return (int)ret;
	if (ret < 0)
		return crf_error_errno((int)-ret, "pid %d: rt_sigaction(SIGTRAP)", (int)p->pid);
	ret = crf_parasite_rw(p, at, &p->sigtrap, sizeof(p->sigtrap), false);
	if (ret < 0)
		return (int)ret;
	p->sigtrap_ign = p->sigtrap.handler == (uint64_t)(uintptr_t)SIG_IGN;
	return 0;
}

/* Queue the held blockable signals in the task again, as the task itself. */
static int requeue_held(struct crf_parasite *p)
{
	long tgid, tid = 0, ret;
	bool ok;

	if (!p->n_held)
		return 0;
	tgid = crf__psite_call(p, CRF_PSITE_SYSCALL, &(int64_t[7]){SYS_getpid}, 56, NULL, 0, &ok);
	if (ok)
		tid = crf__psite_call(p, CRF_PSITE_SYSCALL, &(int64_t[7]){SYS_gettid}, 56, NULL, 0,
				      &ok);
	if (!ok)
		return (int)tgid;
	while (p->n_held) {
		siginfo_t *si = &p->held[p->n_held - 1];
		int64_t sys[7] = {SYS_rt_tgsigqueueinfo, tgid, tid, si->si_signo,
				  (int64_t)p->scratch};

		ret = crf_parasite_rw(p, p->scratch, si, sizeof(*si), true);
		if (ret >= 0)
			ret = crf__psite_call(p, CRF_PSITE_SYSCALL, sys, sizeof(sys), NULL, 0, &ok);
		if (ret < 0)
			return crf_error_errno((int)-ret, "pid %d: queueing signal %d again",
					       (int)p->pid, si->si_signo);
		p->n_held--;
	}
	return 0;
}

int crf_infect(pid_t pid, struct crf_parasite **out)
{
	struct crf_parasite *p;
	char path[64];
	int r;

	*out = NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return crf_error_errno(ENOMEM, "parasite");
	p->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	p->mem_fd = open(path, O_RDWR | O_CLOEXEC);
	if (p->mem_fd < 0)
		r = crf_error_errno(errno, "%s", path);
	else
		r = crf_regs_get(pid, &p->saved);
	p->regs_saved = r >= 0;
	if (r >= 0 && p->saved.gp.cs != USER_CS)
		r = crf_error_errno(EOPNOTSUPP, "pid %d runs in 32-bit mode (cs %#llx)", (int)pid,
				    p->saved.gp.cs);
	if (r >= 0)
		r = find_code(p);
	if (r >= 0)
		r = ptrace_set_exitkill(pid, true);
	p->exitkill = r >= 0;
	if (r >= 0)
		r = map_area(p);
	if (r >= 0)
		r = check_sigtrap(p);
	p->ready = r >= 0;
	if (r >= 0)
		r = requeue_held(p);
	if (r < 0) {
		crf_error("pid %d: infection failed, putting the task back", (int)pid);
		crf_cure(p);
		return r;
	}
	crf_debug("pid %d infected: parasite at %#" PRIx64 ", %zu bytes", (int)pid, p->area,
		  p->area_len);
	*out = p;
	return 0;
}

static void keep_first(int *r, int c)
{
	if (*r >= 0 && c < 0)
		*r = c;
}

/*
 * Leave the thread as the freeze left it: in an interrupt-stop, inside
 * get_signal(), so that what happens after the detach (a restarted system
 * call, a pending signal) is decided by the kernel from the restored state
 * and not from the syscall- or signal-stop crf's code ended in.
 */
static int park(pid_t tid)
{
	struct crf_stop st;
	int r;

	r = ptrace_interrupt(tid);
	if (r >= 0)
		r = ptrace_resume(tid, false, 0);
	while (r >= 0) {
		r = ptrace_wait(tid, 10000, &st);
		if (r < 0 || st.kind == CRF_STOP_EVENT)
			break;
		if (st.kind == CRF_STOP_EXITED)
			return crf_error_errno(ESRCH, "pid %d died at the cure", (int)tid);
		/* The original registers are back: a signal is delivered as without crf. */
		r = ptrace_resume(tid, false, st.kind == CRF_STOP_SIGNAL ? st.sig : 0);
	}
	return r == -ETIMEDOUT ? crf_error_errno(ETIMEDOUT, "pid %d did not stop again", (int)tid)
			       : r;
}

/* Resume @tid to its next syscall stop; only SIGKILL can interrupt (all else is blocked). */
static int thread_step(pid_t tid)
{
	struct crf_stop st;
	int r, sig = 0;

	for (int i = 0; i < 16; i++) {
		r = ptrace_resume(tid, true, sig);
		if (r >= 0)
			r = ptrace_wait(tid, 10000, &st);
		if (r < 0)
			return r;
		if (st.kind == CRF_STOP_SYSCALL)
			return 0;
		if (st.kind == CRF_STOP_EXITED)
			return crf_error_errno(ESRCH, "thread %d died while infected", (int)tid);
		sig = st.kind == CRF_STOP_SIGNAL ? st.sig : 0;
	}
	return crf_error_errno(EPROTO, "thread %d: no syscall stop", (int)tid);
}

static int thread_call(struct crf_parasite *p, pid_t tid, const struct user_regs_struct *saved,
		       struct crf_thread_call *c)
{
	struct user_regs_struct g = *saved;
	int r;

	g.rip = p->code;
	g.orig_rax = (uint64_t)-1;
	g.eflags &= ~(uint64_t)(EFLAGS_TF | EFLAGS_DF);
	g.rax = (uint64_t)c->nr;
	g.rdi = (uint64_t)c->args[0];
	g.rsi = (uint64_t)c->args[1];
	g.rdx = (uint64_t)c->args[2];
	g.r10 = (uint64_t)c->args[3];
	g.r8 = (uint64_t)c->args[4];
	g.r9 = (uint64_t)c->args[5];
	r = ptrace_set_gp(tid, &g);
	for (int stop = 0; r >= 0 && stop < 2; stop++) /* enter, exit */
		r = thread_step(tid);
	if (r >= 0)
		r = ptrace_get_gp(tid, &g);
	c->ret = (long)g.rax;
	return r;
}

int parasite_thread_calls(struct crf_parasite *p, pid_t tid, struct crf_thread_call *c, size_t n)
{
	static const uint8_t insn[2] = {0x0f, 0x05}; /* syscall */
	struct user_regs_struct saved;
	uint64_t mask;
	int r;

	r = ptrace_get_gp(tid, &saved);
	if (r >= 0)
		r = ptrace_get_sigmask(tid, &mask);
	if (r < 0)
		return r;
	r = ptrace_set_sigmask(tid, ~UINT64_C(0));
	if (r >= 0)
		r = crf_parasite_rw(p, p->code, (void *)insn, sizeof(insn), true);
	for (size_t i = 0; r >= 0 && i < n; i++)
		r = thread_call(p, tid, &saved, &c[i]);
	crf_parasite_rw(p, p->code, p->code_orig, sizeof(p->code_orig), true);
	keep_first(&r, ptrace_set_gp(tid, &saved));
	keep_first(&r, ptrace_set_sigmask(tid, mask));
	keep_first(&r, park(tid));
	return r;
}

/* Undo what the area is there for (held signals, SIGTRAP), then unmap it. */
static int unmap_area(struct crf_parasite *p)
{
	uint64_t at = p->args + offsetof(struct crf_psite_args, sigtrap);
	int r = 0;
	bool ok;
	long ret;

	if (p->ready) {
		keep_first(&r, requeue_held(p));
		if (p->sigtrap_ign) {
			ret = crf_parasite_rw(p, at, &p->sigtrap, sizeof(p->sigtrap), true);
			if (ret >= 0)
				ret = bootstrap(p, SYS_rt_sigaction, SIGTRAP, (long)at, 0, 8, 0, 0,
						&ok);
			keep_first(&r, ret < 0 ? crf_error_errno((int)-ret, "pid %d: SIGTRAP back",
								 (int)p->pid)
					       : 0);
		}
	}
	ret = bootstrap(p, SYS_munmap, (long)p->area, (long)p->area_len, 0, 0, 0, 0, &ok);
	if (ok && ret < 0)
		ret = crf_error_errno((int)-ret, "pid %d: munmap of the parasite", (int)p->pid);
	keep_first(&r, (int)ret);
	return r;
}

int crf_cure(struct crf_parasite *p)
{
	int r = 0;

	if (!p)
		return 0;
	if (p->area)
		keep_first(&r, unmap_area(p));
	if (p->mask_set)
		keep_first(&r, ptrace_set_sigmask(p->pid, p->sigmask));
	if (p->regs_saved && p->moved)
		keep_first(&r, crf_regs_set(p->pid, &p->saved));
	if (p->moved)
		keep_first(&r, park(p->pid));
	for (size_t i = 0; i < p->n_resend; i++)
		if (syscall(SYS_tgkill, p->pid, p->pid, p->resend[i]) < 0)
			keep_first(&r, crf_error_errno(errno, "pid %d: sending signal %d again",
						       (int)p->pid, p->resend[i]));
	if (p->exitkill)
		keep_first(&r, ptrace_set_exitkill(p->pid, false));
	if (r < 0)
		crf_error("pid %d: the cure was incomplete", (int)p->pid);
	if (p->mem_fd >= 0)
		close(p->mem_fd);
	crf_regs_free(&p->saved);
	free(p->held);
	free(p);
	return r;
}
