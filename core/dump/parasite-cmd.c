// SPDX-License-Identifier: GPL-2.0-only
/*
 * Calling the parasite: one command per call, driven by ptrace (see
 * docs/parasite.md for why this and not a socket), and the commands
 * crf_parasite_* offer on top of it.
 */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>

#include <crf/log.h>

#include "crf-private.h"
#include "infect-priv.h"

#define HDR_LEN offsetof(struct crf_psite_args, sys)

long crf__psite_call(struct crf_parasite *p, int cmd, const void *in, size_t in_len, void *out,
		     size_t out_len, bool *ok)
{
	struct user_regs_struct g = p->saved.gp;
	struct crf_psite_args a;
	uint8_t *buf = (uint8_t *)&a;
	char point[64];
	long rax;
	int r;

	*ok = false;
	if (!p->ready)
		return crf_error_errno(ENOTCONN, "pid %d: the parasite is not in place",
				       (int)p->pid);
	snprintf(point, sizeof(point), "pid %d command %d", (int)p->pid, cmd);
	r = crf__fault_fine("parasite call", point, true);
	if (r < 0)
		return r;
	if (in_len > sizeof(a) - HDR_LEN || out_len > sizeof(a) - HDR_LEN)
		return crf_error_errno(E2BIG, "pid %d: parasite command %d too large", (int)p->pid,
				       cmd);
	memset(buf, 0, HDR_LEN);
	a.restore_sigtrap = p->sigtrap_ign;
	a.sigtrap = p->sigtrap;
	if (in_len)
		memcpy(buf + HDR_LEN, in, in_len);
	r = crf_parasite_rw(p, p->args, buf, HDR_LEN + in_len, true);
	if (r < 0)
		return r;

	g.rip = p->area;
	g.orig_rax = (uint64_t)-1;
	g.eflags &= ~(uint64_t)0x500; /* TF, DF */
	g.rdi = (uint64_t)cmd;
	g.rsi = p->args;
	g.rsp = p->stack_top;
	g.rax = 0;
	r = ptrace_set_gp(p->pid, &g);
	if (r >= 0)
		r = ptrace_resume(p->pid, false, 0);
	if (r >= 0)
		r = crf__psite_wait(p, true);
	if (r < 0)
		return r;
	errno = 0;
	rax = ptrace(PTRACE_PEEKUSER, p->pid, offsetof(struct user_regs_struct, rax), 0);
	if (errno)
		return crf_error_errno(errno, "pid %d: reading the parasite's result", (int)p->pid);
	if (out_len) {
		r = crf_parasite_rw(p, p->args + HDR_LEN, out, out_len, false);
		if (r < 0)
			return r;
	}
	*ok = true;
	return rax;
}

/* A command whose failure is the command's own: log it with its name. */
static long command(struct crf_parasite *p, int cmd, const char *what, const void *in,
		    size_t in_len, void *out, size_t out_len)
{
	bool ok;
	long r = crf__psite_call(p, cmd, in, in_len, out, out_len, &ok);

	if (ok && r < 0 && r > -4096)
		return crf_error_errno((int)-r, "pid %d: %s in the parasite", (int)p->pid, what);
	return r;
}

long parasite_syscall_raw(struct crf_parasite *p, long nr, const long args[6])
{
	int64_t sys[7] = {nr};
	bool ok;

	for (int i = 0; i < 6; i++)
		sys[i + 1] = args ? args[i] : 0;
	return crf__psite_call(p, CRF_PSITE_SYSCALL, sys, sizeof(sys), NULL, 0, &ok);
}

int parasite_get_sigactions(struct crf_parasite *p, struct crf_sigaction_info out[64])
{
	struct crf_psite_sigaction sa[CRF_PSITE_NSIG];
	long r;

	r = command(p, CRF_PSITE_GET_SIGACTIONS, "rt_sigaction", NULL, 0, sa, sizeof(sa));
	if (r < 0)
		return (int)r;
	for (int i = 0; i < CRF_PSITE_NSIG; i++)
		out[i] = (struct crf_sigaction_info){sa[i].handler, sa[i].flags, sa[i].restorer,
						     sa[i].mask};
	return 0;
}

int parasite_get_sigaltstack(struct crf_parasite *p, struct crf_sigaltstack_info *out)
{
	struct crf_psite_stack ss;
	uint64_t sp = p->saved.gp.rsp;
	long r;

	r = command(p, CRF_PSITE_GET_SIGALTSTACK, "sigaltstack", NULL, 0, &ss, sizeof(ss));
	if (r < 0)
		return (int)r;
	*out = (struct crf_sigaltstack_info){ss.sp, ss.size, ss.flags};
	/*
	 * The parasite runs on its own stack, so the kernel never says
	 * SS_ONSTACK to it; whether the task was on its alternate stack is a
	 * matter of where its own %rsp was.
	 */
	if (!(ss.flags & SS_DISABLE) && sp > ss.sp && sp - ss.sp <= ss.size)
		out->flags |= SS_ONSTACK;
	return 0;
}

int parasite_get_itimers(struct crf_parasite *p, struct crf_itimer_info out[CRF_ITIMERS])
{
	int64_t it[CRF_ITIMERS][2][2];
	long r;

	r = command(p, CRF_PSITE_GET_ITIMERS, "getitimer", NULL, 0, it, sizeof(it));
	if (r < 0)
		return (int)r;
	for (int i = 0; i < CRF_ITIMERS; i++)
		out[i] = (struct crf_itimer_info){it[i][0][0], it[i][0][1], it[i][1][0],
						  it[i][1][1]};
	return 0;
}

int parasite_get_posix_timers(struct crf_parasite *p, struct crf_posix_timer_info *t, size_t n)
{
	struct {
		uint32_t n, pad;
		struct crf_psite_timer t[CRF_PSITE_MAX_TIMERS];
	} a;
	size_t len = offsetof(__typeof__(a), t) + n * sizeof(a.t[0]);
	long r;

	if (n > CRF_PSITE_MAX_TIMERS)
		return crf_error_errno(E2BIG, "pid %d: %zu POSIX timers at once, at most %u",
				       (int)p->pid, n, CRF_PSITE_MAX_TIMERS);
	memset(&a, 0, len);
	a.n = (uint32_t)n;
	for (size_t i = 0; i < n; i++)
		a.t[i].id = t[i].id;
	r = command(p, CRF_PSITE_GET_POSIX_TIMERS, "timer_gettime", &a, len, &a, len);
	if (r < 0)
		return (int)r;
	for (size_t i = 0; i < n; i++) {
		const struct crf_psite_timer *s = &a.t[i];

		t[i].err = (int)s->err;
		t[i].overrun = s->overrun;
		t[i].interval_sec = s->interval.sec;
		t[i].interval_nsec = s->interval.nsec;
		t[i].value_sec = s->value.sec;
		t[i].value_nsec = s->value.nsec;
	}
	return 0;
}

long parasite_get_securebits(struct crf_parasite *p)
{
	return command(p, CRF_PSITE_GET_SECUREBITS, "PR_GET_SECUREBITS", NULL, 0, NULL, 0);
}

int parasite_scratch_area(struct crf_parasite *p, uint64_t *addr, size_t *size)
{
	if (!p->ready)
		return -ENOTCONN;
	*addr = p->scratch;
	*size = CRF_PSITE_SCRATCH_SIZE;
	return 0;
}

void parasite_area(const struct crf_parasite *p, uint64_t *start, size_t *len)
{
	*start = p->area;
	*len = p->area_len;
}

const struct crf_regs *parasite_saved_regs(const struct crf_parasite *p)
{
	return &p->saved;
}

uint64_t parasite_blocked(const struct crf_parasite *p)
{
	return p->sigmask;
}

static long host_syscall(void *task, long nr, const long args[6])
{
	return parasite_syscall_raw(task, nr, args);
}

static int host_scratch(void *task, uint64_t *addr, size_t *size)
{
	return parasite_scratch_area(task, addr, size);
}

static int host_rw(void *task, uint64_t addr, void *buf, size_t len, bool write)
{
	return crf_parasite_rw(task, addr, buf, len, write);
}

static int host_mapping(void *task, uint64_t *start, uint64_t *len)
{
	const struct crf_parasite *p = task;
	size_t n;

	if (!p->area)
		return -ENOTCONN;
	parasite_area(p, start, &n);
	*len = n;
	return 0;
}

const struct crf_host_ops crf_dump_host_ops = {
	.parasite_syscall = host_syscall,
	.parasite_scratch = host_scratch,
	.parasite_rw = host_rw,
	.parasite_mapping = host_mapping,
};
