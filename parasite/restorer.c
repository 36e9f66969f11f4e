// SPDX-License-Identifier: GPL-2.0-only
/*
 * The restorer: a freestanding blob that turns the forked crf child it runs
 * in into the saved task.  It owns nothing but its own mapping (code, the
 * argument block, a stack), so it drops everything else of crf, builds the
 * saved address space, restores the per-task kernel state, reports to crf,
 * waits for the word to go, and returns into the program with rt_sigreturn.
 *
 * No libc, raw system calls only, no writable globals, no pointer tables:
 * the blob runs wherever crf put it without relocations.  Any failure is
 * reported on the status fd and ends the task: a task with a half-built
 * address space must never run the program.
 */
#include <stddef.h>
#include <stdint.h>

#include <asm/prctl.h>
#include <asm/sigcontext.h>
#include <linux/capability.h>
#include <linux/mman.h>
#include <linux/prctl.h>

#include "crf-restorer.h"
#include "crf-syscall.h"
#include "restorer-kabi.h"
#include "restorer-priv.h"

void crf_restorer_main(struct crf_rst_args *a) __attribute__((noreturn, used));

void *memset(void *s, int c, size_t n)
{
	unsigned char *p = s;

	while (n--)
		*p++ = c;
	return s;
}

void *memcpy(void *d, const void *s, size_t n)
{
	unsigned char *p = d;
	const unsigned char *q = s;

	while (n--)
		*p++ = *q++;
	return d;
}

/* Messages: built in a->error, which lives in the kept mapping. */

static size_t msg_str(struct crf_rst_args *a, size_t n, const char *s)
{
	while (*s && n < sizeof(a->error) - 1)
		a->error[n++] = *s++;
	a->error[n] = '\0';
	return n;
}

static size_t msg_hex(struct crf_rst_args *a, size_t n, uint64_t v)
{
	char buf[19];
	int i = sizeof(buf) - 1;

	buf[i] = '\0';
	do {
		buf[--i] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	buf[--i] = 'x';
	buf[--i] = '0';
	return msg_str(a, n, buf + i);
}

extern char crf_restorer_syscall_insn[];

static void report(struct crf_rst_args *a, long result)
{
	struct crf_rst_status st;

	memset(&st, 0, sizeof(st));
	st.result = result;
	memcpy(st.error, a->error, sizeof(st.error));
	st.error[sizeof(st.error) - 1] = '\0';
	st.area_start = a->blob_start;
	st.area_len = a->blob_len;
	st.syscall_insn = (uint64_t)(unsigned long)crf_restorer_syscall_insn;
	st.stop_signal = a->stop_signal;
	/* Only once ready: a failure may come from arguments not checked yet. */
	st.seccomp = result == 0 ? crf_rst_seccomp_any(a) : 0;
	sys3(__NR_write, a->status_fd, &st, sizeof(st));
}

/* Never returns: a task with a half-built address space must not run on. */
void crf_rst_fail(struct crf_rst_args *a, long err, const char *what, uint64_t addr, int with_addr)
{
	size_t n = msg_str(a, 0, what);

	if (with_addr) {
		n = msg_str(a, n, " ");
		msg_hex(a, n, addr);
	}
	report(a, err < 0 ? err : -EIO);
	/*
	 * After go the status fd is closed: crf, which traces the task then,
	 * reads the message from exit_group's unused arguments (rst-release.c).
	 */
	for (;;)
		sys3(__NR_exit_group, 1, (long)a->error, err < 0 ? err : -EIO);
}

static void check_args(struct crf_rst_args *a)
{
	if (a->magic != CRF_RST_MAGIC)
		FAIL(a, -EINVAL, "restorer: bad argument block magic");
	if (!crf_rst_array_ok(a, a->vmas_off, a->n_vmas, sizeof(struct crf_rst_vma_arg)) ||
	    !crf_rst_array_ok(a, a->pages_off, a->n_pages, sizeof(struct crf_rst_pages_arg)) ||
	    !crf_rst_array_ok(a, a->timers_off, a->n_timers, sizeof(struct crf_rst_timer_arg)) ||
	    !crf_rst_array_ok(a, a->pending_off, a->n_pending, 128) || !crf_rst_attrs_ok(a) ||
	    !crf_rst_array_ok(a, a->xsave_off, a->xsave_len + 4ul, 1) ||
	    !crf_rst_array_ok(a, a->frame_off, CRF_RST_FRAME_SIZE, 1) ||
	    a->auxv_len > sizeof(a->auxv) / sizeof(a->auxv[0]) ||
	    a->creds.n_groups > CRF_RST_MAX_GROUPS)
		FAIL(a, -EINVAL, "restorer: argument block out of bounds");
	crf_rst_check_vmas(a);
	crf_rst_check_threads(a);
	crf_rst_check_seccomp(a);
}

/*
 * Drop all of crf: everything below and above our own mapping, the vDSO
 * included (it is an ordinary VMA to munmap).  Unmapping holes is harmless.
 */
static void unmap_crf(struct crf_rst_args *a)
{
	uint64_t keep[2][2] = {{a->blob_start, a->blob_start + a->blob_len},
			       {a->premap_start, a->premap_end}};
	uint64_t from = 0, end;
	long r;

	/* The mappings made before the fork stay until they are moved (crf_rst_map_vmas). */
	if (keep[1][0] < keep[0][0] && keep[1][1] > keep[1][0]) {
		keep[1][0] = keep[0][0], keep[1][1] = keep[0][1];
		keep[0][0] = a->premap_start, keep[0][1] = a->premap_end;
	}
	for (int i = 0; i < 2; i++) {
		if (keep[i][1] <= keep[i][0])
			continue;
		r = keep[i][0] > from ? sys2(__NR_munmap, from, keep[i][0] - from) : 0;
		if (r < 0)
			FAIL_AT(a, r, "munmap below", keep[i][0]);
		from = keep[i][1];
	}
	end = from;
	/* The larger task size only exists with 5-level paging. */
	r = sys2(__NR_munmap, end, TASK_SIZE_56 - end);
	if (r == -EINVAL)
		r = sys2(__NR_munmap, end, TASK_SIZE_47 - end);
	if (r < 0)
		FAIL_AT(a, r, "munmap above", end);
}

/* The mappings hold their files; the descriptors themselves must go. */
static void close_fds(struct crf_rst_args *a)
{
	const struct crf_rst_vma_arg *v = at(a, a->vmas_off);
	const struct crf_rst_pages_arg *p = at(a, a->pages_off);

	for (uint32_t i = 0; i < a->n_vmas; i++)
		if (v[i].fd >= 0)
			sys1(__NR_close, v[i].fd);
	for (uint32_t i = 0; i < a->n_pages; i++)
		sys1(__NR_close, p[i].fd);
	if (a->exe_fd >= 0)
		sys1(__NR_close, a->exe_fd);
	if (a->mem_fd >= 0)
		sys1(__NR_close, a->mem_fd);
}

static void set_mm(struct crf_rst_args *a)
{
	struct prctl_mm_map m;
	long r;

	if (!a->auxv_len)
		return;
#define SET(f) m.f = a->f;
	CRF_MM_FIELDS(SET)
#undef SET
	m.auxv = (__u64 *)a->auxv;
	m.auxv_size = a->auxv_len * sizeof(a->auxv[0]);
	m.exe_fd = (uint32_t)a->exe_fd;
	r = sys5(__NR_prctl, PR_SET_MM, PR_SET_MM_MAP, &m, sizeof(m), 0);
	if (r < 0)
		FAIL(a, r, "prctl(PR_SET_MM_MAP)");
}

/*
 * The kernel takes the address as a hint, so check with msync() (ENOMEM on
 * a hole) that the vDSO's whole span really landed there.
 */
static void map_vdso(struct crf_rst_args *a)
{
	long r;

	if (!a->vdso)
		return;
	r = sys2(__NR_arch_prctl, ARCH_MAP_VDSO_64, a->vdso);
	if (r < 0)
		FAIL_AT(a, r, "arch_prctl(ARCH_MAP_VDSO_64)", a->vdso);
	r = sys3(__NR_msync, a->vdso, a->vdso_len, MS_ASYNC);
	if (r < 0)
		FAIL_AT(a, r, "vDSO not placed at", a->vdso);
}

static void restore_sigactions(struct crf_rst_args *a)
{
	for (int sig = 1; sig <= CRF_RST_NSIG; sig++) {
		long r;

		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		r = sys4(__NR_rt_sigaction, sig, &a->sa[sig - 1], 0, sizeof(uint64_t));
		if (r < 0)
			FAIL_AT(a, r, "rt_sigaction of signal", sig);
	}
}

static void restore_itimers(struct crf_rst_args *a)
{
	for (int which = 0; which < CRF_ITIMERS; which++) {
		long r = sys3(__NR_setitimer, which, a->itimer[which], 0);

		if (r < 0)
			FAIL_AT(a, r, "setitimer", which);
	}
}

static void create_timer(struct crf_rst_args *a, const struct crf_rst_timer_arg *t, int exact)
{
	struct ksigevent ev;
	struct kitimerspec its;
	int32_t id = t->id;
	long r;

	memset(&ev, 0, sizeof(ev));
	ev.value = t->value;
	ev.signo = t->signo;
	ev.notify = t->notify;
	if (t->notify & SIGEV_THREAD_ID)
		ev.tid = t->notify_tid;
	/* In exact mode the kernel takes the id from where it returns it. */
	r = sys3(__NR_timer_create, t->clock, &ev, &id);
	if (r < 0)
		FAIL_AT(a, r, "timer_create of timer", (uint64_t)t->id);
	if (id != t->id)
		FAIL_AT(a, exact ? -EIO : -EINVAL, "timer id mismatch (no exact ids) for",
			(uint64_t)t->id);
	if (!t->value_ns)
		return;
	its.interval_s = t->interval_ns / 1000000000;
	its.interval_ns = t->interval_ns % 1000000000;
	its.value_s = t->value_ns / 1000000000;
	its.value_ns = t->value_ns % 1000000000;
	r = sys4(__NR_timer_settime, id, 0, &its, 0);
	if (r < 0)
		FAIL_AT(a, r, "timer_settime of timer", (uint64_t)t->id);
}

/*
 * POSIX timers get their saved ids with PR_TIMER_CREATE_RESTORE_IDS (Linux
 * 6.15+).  Without it ids are handed out in order from 0 in a fresh task,
 * which only works for ids that were never freed: checked per timer.
 */
static void restore_timers(struct crf_rst_args *a)
{
	const struct crf_rst_timer_arg *t = at(a, a->timers_off);
	long exact;

	if (!a->n_timers)
		return;
	exact = sys5(__NR_prctl, PR_TIMER_CREATE_RESTORE_IDS, PR_TIMER_CREATE_RESTORE_IDS_ON, 0, 0,
		     0) == 0;
	for (uint32_t i = 0; i < a->n_timers; i++)
		create_timer(a, &t[i], exact);
	if (exact)
		sys5(__NR_prctl, PR_TIMER_CREATE_RESTORE_IDS, PR_TIMER_CREATE_RESTORE_IDS_OFF, 0, 0,
		     0);
}

/* Queue the saved pending signals to ourselves; all signals are blocked. */
static void queue_pending(struct crf_rst_args *a)
{
	const char *info = at(a, a->pending_off);
	long pid = sys0(__NR_getpid);

	for (uint32_t i = 0; i < a->n_pending; i++, info += 128) {
		int sig = *(const int32_t *)info;
		long r;

		if (i < a->n_pending_shared)
			r = sys3(__NR_rt_sigqueueinfo, pid, sig, info);
		else
			r = sys4(__NR_rt_tgsigqueueinfo, pid, pid, sig, info);
		if (r < 0)
			FAIL_AT(a, r, "queue pending signal", sig);
	}
}

int32_t crf_rst_sas_flags(uint64_t size, int32_t flags)
{
	return size ? flags & (SS_DISABLE | SS_AUTODISARM) : SS_DISABLE;
}

static void restore_signals(struct crf_rst_args *a)
{
	struct {
		uint64_t sp;
		int32_t flags, pad;
		uint64_t size;
	} ss = {a->sas_sp, crf_rst_sas_flags(a->sas_size, a->sas_flags), 0, a->sas_size};
	long r;

	restore_sigactions(a);
	r = sys2(__NR_sigaltstack, &ss, 0);
	if (r < 0)
		FAIL_AT(a, r, "sigaltstack", a->sas_sp);
	restore_itimers(a);
	restore_timers(a);
	queue_pending(a);
	if (a->rseq_len) {
		r = sys4(__NR_rseq, a->rseq_ptr, a->rseq_len, 0, a->rseq_sig);
		if (r < 0)
			FAIL_AT(a, r, "rseq", a->rseq_ptr);
	}
}

static void capset(struct crf_rst_args *a, const struct crf_rst_creds *c, uint64_t eff,
		   uint64_t prm)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2] = {
		{(uint32_t)eff, (uint32_t)prm, (uint32_t)c->cap_inh},
		{eff >> 32, prm >> 32, c->cap_inh >> 32},
	};
	long r = sys2(__NR_capset, &h, d);

	if (r < 0)
		FAIL_AT(a, r, "capset, effective", eff);
}

/*
 * A change of uid from 0 empties the effective set even when the permitted
 * one is kept (PR_SET_KEEPCAPS): make crf's permitted set effective again
 * for the steps that need CAP_SETPCAP (securebits, the ambient set), with
 * the saved inheritable set the ambient one needs.
 */
static void capset_kept(struct crf_rst_args *a, const struct crf_rst_creds *c)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	long r = sys2(__NR_capget, &h, d);

	if (r < 0)
		FAIL(a, r, "capget");
	d[0].effective = d[0].permitted;
	d[1].effective = d[1].permitted;
	d[0].inheritable = (uint32_t)c->cap_inh;
	d[1].inheritable = c->cap_inh >> 32;
	r = sys2(__NR_capset, &h, d);
	if (r < 0)
		FAIL(a, r, "capset with the permitted set kept");
}

/* Drop from the bounding set what the saved task lacked, while we may. */
static void drop_bounding(struct crf_rst_args *a, const struct crf_rst_creds *c)
{
	for (int cap = 0; cap < 64; cap++) {
		long r = sys2(__NR_prctl, PR_CAPBSET_READ, cap);

		if (r < 0)
			break; /* past the kernel's last capability */
		if (r == 0 || (c->cap_bnd & (1ull << cap)))
			continue;
		r = sys2(__NR_prctl, PR_CAPBSET_DROP, cap);
		if (r < 0)
			FAIL_AT(a, r, "drop from the bounding set capability", cap);
	}
}

static void set_ids(struct crf_rst_args *a, const struct crf_rst_creds *c)
{
	long r;

	r = sys2(__NR_setgroups, c->n_groups, c->groups);
	/* In a user namespace whose setgroups is "deny": none, kept from outside. */
	if (r == -EPERM && !c->n_groups && sys2(__NR_getgroups, 0, 0) == 0)
		r = 0;
	if (r < 0)
		FAIL(a, r, "setgroups");
	r = sys3(__NR_setresgid, c->gid, c->egid, c->sgid);
	if (r < 0)
		FAIL_AT(a, r, "setresgid, gid", c->gid);
	sys1(__NR_setfsgid, c->fsgid);
	if ((uint32_t)sys1(__NR_setfsgid, -1) != c->fsgid)
		FAIL_AT(a, -EPERM, "setfsgid", c->fsgid);
	drop_bounding(a, c);
	/* Keep the permitted set across the uid change; capset follows. */
	r = sys2(__NR_prctl, PR_SET_KEEPCAPS, 1);
	if (r < 0)
		FAIL(a, r, "prctl(PR_SET_KEEPCAPS)");
	r = sys3(__NR_setresuid, c->uid, c->euid, c->suid);
	if (r < 0)
		FAIL_AT(a, r, "setresuid, uid", c->uid);
	sys1(__NR_setfsuid, c->fsuid);
	if ((uint32_t)sys1(__NR_setfsuid, -1) != c->fsuid)
		FAIL_AT(a, -EPERM, "setfsuid", c->fsuid);
}

/* Permitted and effective as saved, then no_new_privs (it cannot be undone). */
static void finish_creds(struct crf_rst_args *a, const struct crf_rst_creds *c)
{
	long r;

	capset(a, c, c->cap_eff, c->cap_prm);
	if (c->no_new_privs) {
		r = sys5(__NR_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		if (r < 0)
			FAIL(a, r, "prctl(PR_SET_NO_NEW_PRIVS)");
	}
}

/*
 * Credentials come last: each step may take away the right to do the next.
 * Order: groups and gids, bounding set, uids (keeping the permitted set),
 * crf's permitted capabilities effective, securebits, ambient set, then
 * the saved permitted and effective sets and no_new_privs.
 */
void crf_rst_restore_creds(struct crf_rst_args *a, const struct crf_rst_creds *c, uint64_t keep)
{
	long r;

	if (!a->restore_creds)
		return;
	set_ids(a, c);
	capset_kept(a, c);
	if ((uint64_t)sys1(__NR_prctl, PR_GET_SECUREBITS) != c->securebits) {
		r = sys2(__NR_prctl, PR_SET_SECUREBITS, c->securebits);
		if (r < 0)
			FAIL_AT(a, r, "prctl(PR_SET_SECUREBITS)", c->securebits);
	}
	r = sys5(__NR_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (r < 0)
		FAIL(a, r, "clear the ambient capabilities");
	for (int cap = 0; cap < 64; cap++) {
		if (!(c->cap_amb & (1ull << cap)))
			continue;
		r = sys5(__NR_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0);
		if (r < 0)
			FAIL_AT(a, r, "raise ambient capability", cap);
	}
	capset(a, c, c->cap_eff | keep, c->cap_prm | keep);
	if (!keep)
		finish_creds(a, c);
}

void crf_rst_restore_creds_kept(struct crf_rst_args *a, const struct crf_rst_creds *c,
				uint64_t keep)
{
	if (a->restore_creds && keep)
		finish_creds(a, c);
}

/* Tell crf we are ready and wait for its word; no word means crf gave up. */
static void handshake(struct crf_rst_args *a)
{
	char c;

	a->error[0] = '\0';
	report(a, 0);
	sys1(__NR_close, a->status_fd);
	if (sys3(__NR_read, a->go_fd, &c, 1) != 1)
		for (;;)
			sys1(__NR_exit_group, 1);
	sys1(__NR_close, a->go_fd);
}

static void restore_rlimits(struct crf_rst_args *a)
{
	for (uint32_t i = 0; i < a->n_rlimits && i < 16; i++) {
		long r = sys4(__NR_prlimit64, 0, i, a->rlimits[i], 0);

		if (r < 0)
			FAIL_AT(a, r, "prlimit64 of resource", i);
	}
}

void crf_restorer_main(struct crf_rst_args *a)
{
	uint64_t all = ~0ull, keep;

	/* No handler of crf's may run once its code is gone. */
	sys4(__NR_rt_sigprocmask, SIG_SETMASK, &all, 0, sizeof(all));
	check_args(a);
	keep = crf_rst_seccomp_keep(a, &a->seccomp, 1);
	unmap_crf(a);
	/*
	 * Before the saved mappings: the kernel refuses to change the exe
	 * file while the old one (crf's, which may be the same file) is mapped.
	 */
	set_mm(a);
	crf_rst_map_vmas(a);
	crf_rst_read_pages(a);
	crf_rst_finish_vmas(a);
	crf_rst_set_personality(a);
	close_fds(a);
	restore_rlimits(a);
	map_vdso(a);
	restore_signals(a);
	crf_rst_leader_thread(a);
	crf_rst_create_threads(a);
	crf_rst_wait_threads(a);
	crf_rst_restore_creds(a, &a->creds, keep);
	crf_rst_after_creds(a);
	handshake(a);
	crf_rst_take_stop_reports(a);
	crf_rst_seccomp_shared(a);
	crf_rst_release_threads(a);
	crf_rst_seccomp_own(a, &a->seccomp, &a->creds, keep);
	crf_rst_leader_return(a);
}
