// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-threads: every thread of a process survives a checkpoint with its own
 * state.
 *
 * Eight threads spin on their own computation with values kept in
 * registers (rbx, r12-r15, xmm0-xmm7, loaded from a per-thread pattern,
 * advanced in a loop, compared after each block); one waits on a futex,
 * one on a condition variable, one in nanosleep; one has SIGUSR1 blocked
 * and pending (pthread_kill before the checkpoint), delivered to it after
 * the restore.  Each has its own name, blocked mask and sigaltstack, and
 * checks after the restore its TID, name, mask, sigaltstack and its work.
 * The sleeping thread also has credentials of its own (a raw setresgid
 * changes only the calling thread's); the others keep the process's.
 * The main thread joins them all and exits 0.
 */
#include "wl.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define N_SPIN 8
enum { KIND_SPIN, KIND_FUTEX, KIND_COND, KIND_SLEEP, KIND_PENDING };
#define N_THREADS (N_SPIN + 4)

struct th {
	int idx, kind;
	pthread_t pt;
	pid_t tid;
	char name[16];
	sigset_t mask;
	stack_t ss;
	gid_t gid; /* its real, effective and saved gid */
	char altstack[32768];
};

#define OWN_GID 4242

static struct th ths[N_THREADS];
static atomic_int set_up, go;
static uint32_t futex_word;
static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int cond_flag;
static __thread volatile sig_atomic_t got_usr1;

static void on_usr1(int sig)
{
	(void)sig;
	got_usr1 = 1;
}

/* Registers in, a spin, registers out: in[0..4] gprs, in[5..20] xmm0-7 (2 words each). */
static void spin(const uint64_t in[21], uint64_t out[22], uint64_t iters)
{
	__asm__ volatile("mov 0(%0), %%rbx\n\t"
			 "mov 8(%0), %%r12\n\t"
			 "mov 16(%0), %%r13\n\t"
			 "mov 24(%0), %%r14\n\t"
			 "mov 32(%0), %%r15\n\t"
			 "movdqu 40(%0), %%xmm0\n\t"
			 "movdqu 56(%0), %%xmm1\n\t"
			 "movdqu 72(%0), %%xmm2\n\t"
			 "movdqu 88(%0), %%xmm3\n\t"
			 "movdqu 104(%0), %%xmm4\n\t"
			 "movdqu 120(%0), %%xmm5\n\t"
			 "movdqu 136(%0), %%xmm6\n\t"
			 "movdqu 152(%0), %%xmm7\n\t"
			 "xor %%eax, %%eax\n\t"
			 "mov %2, %%rcx\n\t"
			 "1:\n\t"
			 "inc %%rax\n\t"
			 "add %%r14, %%r15\n\t"
			 "paddq %%xmm6, %%xmm7\n\t"
			 "dec %%rcx\n\t"
			 "jnz 1b\n\t"
			 "mov %%rbx, 0(%1)\n\t"
			 "mov %%r12, 8(%1)\n\t"
			 "mov %%r13, 16(%1)\n\t"
			 "mov %%r14, 24(%1)\n\t"
			 "mov %%r15, 32(%1)\n\t"
			 "movdqu %%xmm0, 40(%1)\n\t"
			 "movdqu %%xmm1, 56(%1)\n\t"
			 "movdqu %%xmm2, 72(%1)\n\t"
			 "movdqu %%xmm3, 88(%1)\n\t"
			 "movdqu %%xmm4, 104(%1)\n\t"
			 "movdqu %%xmm5, 120(%1)\n\t"
			 "movdqu %%xmm6, 136(%1)\n\t"
			 "movdqu %%xmm7, 152(%1)\n\t"
			 "mov %%rax, 168(%1)\n\t"
			 :
			 : "r"(in), "r"(out), "r"(iters)
			 : "rax", "rbx", "rcx", "r12", "r13", "r14", "r15", "xmm0", "xmm1", "xmm2",
			   "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "memory", "cc");
}

static void spin_check(const struct th *t, const uint64_t in[21], uint64_t iters)
{
	uint64_t out[22], want[22];

	spin(in, out, iters);
	memcpy(want, in, 21 * sizeof(*in));
	want[4] = in[4] + iters * in[3];
	want[19] = in[19] + iters * in[17];
	want[20] = in[20] + iters * in[18];
	want[21] = iters;
	for (int i = 0; i < 22; i++)
		WL_CHECK(out[i] == want[i], "thread %d: register word %d is %#llx, want %#llx",
			 t->idx, i, (unsigned long long)out[i], (unsigned long long)want[i]);
}

static void run_spin(struct th *t)
{
	uint64_t in[21];
	struct wl_rng r = {0x1234567ull * (t->idx + 1)};

	for (int i = 0; i < 21; i++)
		in[i] = wl_rng_next(&r);
	do {
		spin_check(t, in, 2000000);
	} while (!atomic_load(&go));
	spin_check(t, in, 2000000);
}

static void run_wait(struct th *t)
{
	const struct timespec ts = {1, 0};

	switch (t->kind) {
	case KIND_FUTEX:
		while (!__atomic_load_n(&futex_word, __ATOMIC_SEQ_CST))
			syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
		break;
	case KIND_COND:
		pthread_mutex_lock(&mtx);
		while (!cond_flag)
			pthread_cond_wait(&cond, &mtx);
		pthread_mutex_unlock(&mtx);
		break;
	case KIND_SLEEP:
		while (!atomic_load(&go))
			nanosleep(&ts, NULL);
		break;
	case KIND_PENDING:
		while (!atomic_load(&go))
			nanosleep(&ts, NULL);
		break;
	}
}

static void set_own_state(struct th *t)
{
	sigset_t m;

	t->tid = (pid_t)syscall(SYS_gettid);
	snprintf(t->name, sizeof(t->name), "wl-th-%d", t->idx);
	WL_CHECK(pthread_setname_np(pthread_self(), t->name) == 0, "setname");
	sigemptyset(&m);
	sigaddset(&m, SIGRTMIN + t->idx % 16);
	if (t->idx % 2)
		sigaddset(&m, SIGWINCH);
	if (t->kind == KIND_PENDING)
		sigaddset(&m, SIGUSR1);
	WL_CHECK(pthread_sigmask(SIG_BLOCK, &m, NULL) == 0, "sigmask");
	pthread_sigmask(SIG_BLOCK, NULL, &t->mask);
	t->ss = (stack_t){.ss_sp = t->altstack, .ss_size = sizeof(t->altstack)};
	WL_CHECK(sigaltstack(&t->ss, NULL) == 0, "sigaltstack: %s", strerror(errno));
	sigaltstack(NULL, &t->ss);
	if (t->kind == KIND_SLEEP)
		WL_CHECK(syscall(SYS_setresgid, OWN_GID, OWN_GID, OWN_GID) == 0, "setresgid: %s",
			 strerror(errno));
	t->gid = getegid();
	if (t->kind == KIND_SLEEP)
		t->gid = OWN_GID;
}

/* The thread's own gids (getresgid is per thread as a raw system call). */
static void check_own_gid(struct th *t)
{
	gid_t r, e, s;

	WL_CHECK(syscall(SYS_getresgid, &r, &e, &s) == 0, "getresgid");
	WL_CHECK(r == t->gid && e == t->gid && s == t->gid, "thread %d: gids %u %u %u, were %u",
		 t->idx, (unsigned)r, (unsigned)e, (unsigned)s, (unsigned)t->gid);
}

static void check_own_state(struct th *t)
{
	char path[64], comm[32];
	sigset_t m, p;
	stack_t ss;

	WL_CHECK(syscall(SYS_gettid) == t->tid, "thread %d: tid %ld, was %d", t->idx,
		 (long)syscall(SYS_gettid), (int)t->tid);
	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)t->tid);
	WL_CHECK(wl_read_file(path, comm, sizeof(comm)) > 0, "read %s", path);
	comm[strcspn(comm, "\n")] = '\0';
	WL_CHECK(!strcmp(comm, t->name), "thread %d: name %s, was %s", t->idx, comm, t->name);
	pthread_sigmask(SIG_BLOCK, NULL, &m);
	for (int sig = 1; sig <= SIGRTMAX; sig++)
		WL_CHECK(sigismember(&m, sig) == sigismember(&t->mask, sig),
			 "thread %d: signal %d %s blocked now", t->idx, sig,
			 sigismember(&m, sig) ? "is" : "is not");
	sigaltstack(NULL, &ss);
	WL_CHECK(ss.ss_sp == t->ss.ss_sp && ss.ss_size == t->ss.ss_size &&
			 ss.ss_flags == t->ss.ss_flags,
		 "thread %d: sigaltstack %p+%zu/%d, was %p+%zu/%d", t->idx, ss.ss_sp, ss.ss_size,
		 ss.ss_flags, t->ss.ss_sp, t->ss.ss_size, t->ss.ss_flags);
	check_own_gid(t);
	if (t->kind != KIND_PENDING)
		return;
	sigpending(&p);
	WL_CHECK(sigismember(&p, SIGUSR1), "thread %d: SIGUSR1 no longer pending", t->idx);
	sigemptyset(&m);
	sigaddset(&m, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &m, NULL);
	WL_CHECK(got_usr1, "thread %d: SIGUSR1 not delivered once unblocked", t->idx);
}

static void *thread_main(void *arg)
{
	struct th *t = arg;

	set_own_state(t);
	atomic_fetch_add(&set_up, 1);
	if (t->kind == KIND_SPIN)
		run_spin(t);
	else
		run_wait(t);
	check_own_state(t);
	return NULL;
}

static void wake_all(void)
{
	atomic_store(&go, 1);
	__atomic_store_n(&futex_word, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &futex_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	pthread_mutex_lock(&mtx);
	cond_flag = 1;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&mtx);
}

int main(void)
{
	const struct timespec ms = {0, 1000000};
	struct sigaction sa = {.sa_handler = on_usr1};

	wl_init("threads");
	sigaction(SIGUSR1, &sa, NULL);
	for (int i = 0; i < N_THREADS; i++) {
		ths[i].idx = i;
		ths[i].kind = i < N_SPIN ? KIND_SPIN : KIND_FUTEX + (i - N_SPIN);
		WL_CHECK(pthread_create(&ths[i].pt, NULL, thread_main, &ths[i]) == 0,
			 "pthread_create");
	}
	while (atomic_load(&set_up) < N_THREADS)
		nanosleep(&ms, NULL);
	pthread_kill(ths[N_THREADS - 1].pt, SIGUSR1);
	/* Let the waiters reach their waits. */
	for (int i = 0; i < 100; i++)
		nanosleep(&ms, NULL);
	wl_ready();
	wl_wait_verify();
	wake_all();
	for (int i = 0; i < N_THREADS; i++)
		WL_CHECK(pthread_join(ths[i].pt, NULL) == 0, "pthread_join");
	wl_note("%d threads: TIDs, names, masks, altstacks, registers intact", N_THREADS);
	return 0;
}
