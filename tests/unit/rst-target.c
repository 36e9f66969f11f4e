// SPDX-License-Identifier: GPL-2.0-only
/*
 * The restorer test's target.  Everything it checks after the restore was
 * set up by itself before the dump: memory of every kind of mapping, signal
 * dispositions, mask, a pending signal, the alternate stack, an itimer, a
 * POSIX timer with a non-first id, the FPU state, rseq and credentials.
 * Memory patterns derive from the PID, which the restore must keep too.
 */
#include <errno.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "rst-target.h"

#define PAGE	    4096ul
#define SPARSE_LEN  (64ul << 20)
#define XMM_PATTERN 0x1122334455667788ull

static volatile sig_atomic_t usr1_count;
static uint32_t data_arr[1024] = {1};
static uint32_t bss_arr[4096];
static char altstack[64 << 10];

struct region {
	void *p;
	size_t len;
};

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
	usr1_count++;
}

static void on_alrm(int sig)
{
}

/* MXCSR with rounding towards +inf and all exceptions masked. */
#define MXCSR_UP 0x5f80u

static uint32_t mxcsr(void)
{
	uint32_t v;

	__asm__ volatile("stmxcsr %0" : "=m"(v));
	return v;
}

static uint32_t pat(uint32_t seed, size_t i)
{
	return (uint32_t)(i * 2654435761u) ^ seed;
}

static void fill(const struct region *r, uint32_t seed)
{
	uint32_t *w = r->p;

	for (size_t i = 0; i < r->len / 4; i++)
		w[i] = pat(seed, i);
}

static int same(const struct region *r, uint32_t seed)
{
	const uint32_t *w = r->p;

	for (size_t i = 0; i < r->len / 4; i++)
		if (w[i] != pat(seed, i))
			return 0;
	return 1;
}

static void *map(size_t len, int prot, int flags)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);

	if (p == MAP_FAILED)
		_exit(TF_SETUP);
	return p;
}

static int sig_setup(struct target_info *in)
{
	struct sigaction sa = {.sa_sigaction = on_usr1, .sa_flags = SA_SIGINFO | SA_ONSTACK};
	stack_t ss = {.ss_sp = altstack, .ss_size = sizeof(altstack)};
	struct itimerval itv = {{50, 0}, {100, 0}};
	sigset_t set;

	if (sigaction(SIGUSR1, &sa, NULL) || signal(SIGALRM, on_alrm) == SIG_ERR ||
	    sigaltstack(&ss, NULL) || setitimer(ITIMER_REAL, &itv, NULL))
		return -1;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigaddset(&set, SIGRTMIN + 3);
	if (sigprocmask(SIG_SETMASK, &set, NULL) || raise(SIGUSR2))
		return -1;
	for (int sig = 1; sig <= 64; sig++)
		if (syscall(SYS_rt_sigaction, sig, NULL, in->sa[sig - 1], 8))
			return -1;
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &in->blocked, 8);
	sigaltstack(NULL, &ss);
	in->sas_sp = (uintptr_t)ss.ss_sp;
	in->sas_size = ss.ss_size;
	in->sas_flags = ss.ss_flags;
	for (int w = 0; w < 3; w++) {
		getitimer(w, &itv);
		in->itimer[w][0] = itv.it_interval.tv_sec;
		in->itimer[w][1] = itv.it_interval.tv_usec;
		in->itimer[w][2] = itv.it_value.tv_sec;
		in->itimer[w][3] = itv.it_value.tv_usec;
	}
	return 0;
}

/* Two timers, the first deleted: the live one's id is not the next free one. */
static int timer_setup(struct target_info *in)
{
	struct sigevent ev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGRTMIN + 3};
	struct itimerspec its = {{7, 0}, {100, 0}};
	int first, id;

	if (syscall(SYS_timer_create, CLOCK_MONOTONIC, &ev, &first) ||
	    syscall(SYS_timer_create, CLOCK_MONOTONIC, &ev, &id) ||
	    syscall(SYS_timer_delete, first) || syscall(SYS_timer_settime, id, 0, &its, NULL))
		return -1;
	in->timer_id = id;
	in->timer_signo = SIGRTMIN + 3;
	in->timer_interval_ns = 7000000000ll;
	in->timer_value_ns = 100000000000ll;
	return 0;
}

static void creds_read(struct target_info *in)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	uid_t u[3];
	gid_t g[3];

	getresuid(&u[0], &u[1], &u[2]);
	getresgid(&g[0], &g[1], &g[2]);
	for (int i = 0; i < 3; i++)
		in->uid[i] = u[i], in->gid[i] = g[i];
	in->uid[3] = syscall(SYS_setfsuid, -1);
	in->gid[3] = syscall(SYS_setfsgid, -1);
	in->n_groups = getgroups(64, (gid_t *)in->groups);
	syscall(SYS_capget, &h, d);
	in->cap_eff = d[0].effective | (uint64_t)d[1].effective << 32;
	in->cap_prm = d[0].permitted | (uint64_t)d[1].permitted << 32;
	in->cap_inh = d[0].inheritable | (uint64_t)d[1].inheritable << 32;
	for (int c = 0; c < 64; c++) {
		if (prctl(PR_CAPBSET_READ, c) == 1)
			in->cap_bnd |= 1ull << c;
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, c, 0, 0) == 1)
			in->cap_amb |= 1ull << c;
	}
	in->securebits = prctl(PR_GET_SECUREBITS);
	in->no_new_privs = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
}

static void rseq_read(struct target_info *in)
{
	if (!__rseq_size)
		return;
	in->rseq_ptr = (uintptr_t)__builtin_thread_pointer() + __rseq_offset;
	/* glibc registers 32 bytes even where __rseq_size says less. */
	in->rseq_len = __rseq_size < 32 ? 32 : __rseq_size;
	in->rseq_sig = RSEQ_SIG;
}

static int maps_perms(const void *addr, const char *want)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512], perms[8];
	unsigned long start;
	int ok = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%*x %7s", &start, perms) == 2 && start == (uintptr_t)addr)
			ok = !strcmp(perms, want);
	fclose(f);
	return ok;
}

static int check_signals(const struct target_info *in, pid_t pid)
{
	struct sigaction sa;
	struct timespec zero = {0, 0};
	uint64_t blocked = 0, usr2 = 1ull << (SIGUSR2 - 1);
	siginfo_t si;

	syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &blocked, 8);
	if (blocked != in->blocked)
		return TF_MASK;
	sigaction(SIGUSR1, NULL, &sa);
	if (sa.sa_sigaction != on_usr1 || !(sa.sa_flags & SA_ONSTACK) || !usr1_count)
		return TF_HANDLER;
	/* The raw call: glibc's sigtimedwait() reports SI_TKILL as SI_USER. */
	if (syscall(SYS_rt_sigtimedwait, &usr2, &si, &zero, 8) != SIGUSR2 ||
	    si.si_code != SI_TKILL || si.si_pid != pid)
		return TF_PENDING;
	return 0;
}

static int check_timers(const struct target_info *in)
{
	struct itimerspec its;
	struct itimerval itv;
	stack_t ss;

	getitimer(ITIMER_REAL, &itv);
	if (itv.it_interval.tv_sec != 50 || itv.it_interval.tv_usec || itv.it_value.tv_sec > 100 ||
	    (!itv.it_value.tv_sec && !itv.it_value.tv_usec))
		return TF_ITIMER;
	if (syscall(SYS_timer_gettime, in->timer_id, &its) || its.it_interval.tv_sec != 7 ||
	    its.it_value.tv_sec > 100 || its.it_value.tv_sec < 50)
		return TF_TIMER;
	/* The deleted first timer must not have come back. */
	if (syscall(SYS_timer_gettime, in->timer_id - 1, &its) == 0 || errno != EINVAL)
		return TF_TIMER;
	sigaltstack(NULL, &ss);
	if ((uintptr_t)ss.ss_sp != in->sas_sp || ss.ss_size != in->sas_size ||
	    ss.ss_flags != in->sas_flags)
		return TF_ALTSTACK;
	return 0;
}

static int check_task(const struct target_info *in)
{
	struct target_info now = {0};
	struct timespec ts;

	if (in->rseq_len &&
	    (syscall(SYS_rseq, in->rseq_ptr, in->rseq_len, 0, in->rseq_sig) == 0 || errno != EBUSY))
		return TF_RSEQ;
	creds_read(&now);
	if (memcmp(now.uid, in->uid, sizeof(in->uid)) ||
	    memcmp(now.gid, in->gid, sizeof(in->gid)) || now.cap_eff != in->cap_eff ||
	    now.cap_prm != in->cap_prm || now.cap_bnd != in->cap_bnd ||
	    now.securebits != in->securebits)
		return TF_CREDS;
	/* Goes through the vDSO, which must be back at its place. */
	if (clock_gettime(CLOCK_MONOTONIC, &ts))
		return TF_PID;
	return 0;
}

int target_main(int info_fd)
{
	static struct target_info in;
	char stack_buf[16384];
	char *sparse = map(SPARSE_LEN, PROT_READ | PROT_WRITE, MAP_NORESERVE);
	struct region r[] = {
		{map(4 * PAGE, PROT_READ | PROT_WRITE, 0), 4 * PAGE},
		{map(2 * PAGE, PROT_READ | PROT_WRITE, 0), 2 * PAGE},
		{malloc(64 << 10), 64 << 10},
		{stack_buf, sizeof(stack_buf)},
		{data_arr, sizeof(data_arr)},
		{bss_arr, sizeof(bss_arr)},
		{sparse, PAGE},
		{sparse + (1ul << 20), PAGE},
		{sparse + SPARSE_LEN - PAGE, PAGE},
	};
	void *hole = map(3 * PAGE, PROT_NONE, 0);
	pid_t pid = getpid();
	uint64_t xmm = 0;
	int n = sizeof(r) / sizeof(r[0]), fail;

	for (int i = 0; i < n; i++)
		fill(&r[i], pid + i);
	if (!r[2].p || mprotect(r[1].p, r[1].len, PROT_READ) || sig_setup(&in) || timer_setup(&in))
		_exit(TF_SETUP);
	__asm__ volatile("ldmxcsr %0" : : "m"((uint32_t){MXCSR_UP}));
	creds_read(&in);
	rseq_read(&in);
	if (write(info_fd, &in, sizeof(in)) != sizeof(in))
		_exit(TF_SETUP);
	close(info_fd);

	/* Dumped somewhere in here; restored, we go on after a SIGUSR1. */
	__asm__ volatile("movq %0, %%xmm15" : : "r"(XMM_PATTERN) : "xmm15");
	while (!usr1_count)
		pause();
	__asm__ volatile("movq %%xmm15, %0" : "=r"(xmm));

	if (getpid() != pid)
		_exit(TF_PID);
	for (int i = 0; i < n; i++)
		if (!same(&r[i], pid + i))
			_exit(TF_MEMORY + i);
	if (sparse[SPARSE_LEN / 2] != 0)
		_exit(TF_MEMORY + n);
	if (!maps_perms(hole, "---p") || !maps_perms(r[1].p, "r--p"))
		_exit(TF_MAPS);
	if (xmm != XMM_PATTERN || (mxcsr() & ~0x3fu) != MXCSR_UP)
		_exit(TF_FPU);
	fail = check_signals(&in, pid);
	if (!fail)
		fail = check_timers(&in);
	if (!fail)
		fail = check_task(&in);
	_exit(fail);
}
