// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-rseq-robust: what each thread registered with the kernel by address
 * survives: its robust futex list and its rseq area.
 *
 * glibc registers both for every thread it starts (set_robust_list and rseq
 * on the thread's own TLS); where it registered no rseq area (the
 * glibc.pthread.rseq tunable), each thread registers one of its own.  Four
 * threads and the main thread record get_robust_list() and find the rseq
 * registration (rseq() with the same area, length and signature fails with
 * EBUSY only when exactly that is registered).  One thread holds a robust
 * mutex across the checkpoint.
 *
 * After restore each thread checks, for itself, that get_robust_list()
 * answers what it did and that the same rseq area is registered.  Then the
 * holder exits without unlocking: the kernel walks its robust list and marks
 * the mutex owner-dead, so the main thread's lock returns EOWNERDEAD (with
 * no robust list registered it would wait for ever, so it gives up after
 * CRF_TEST_TIMEOUT-like 30 s and fails).
 */
#include "wl.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define N_THREADS 4

struct regs {
	pid_t tid;
	void *robust_head;
	size_t robust_len;
	void *rseq_area;
	uint32_t rseq_len;
};

static pthread_mutex_t robust;
static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static bool go;
static atomic_int set_up;
static __thread struct rseq own_rseq __attribute__((aligned(32)));

/* The rseq length registered for @area: EBUSY answers only an exact match; 0 if none. */
static uint32_t rseq_registered(void *area)
{
	const uint32_t lens[] = {32, __rseq_size};

	for (size_t i = 0; i < 2; i++) {
		long r;

		if (!lens[i])
			continue;
		r = syscall(SYS_rseq, area, lens[i], 0, RSEQ_SIG);
		if (r == 0) {
			/* It was not registered, and now is: undo, so that it reads as before. */
			syscall(SYS_rseq, area, lens[i], RSEQ_FLAG_UNREGISTER, RSEQ_SIG);
			return 0;
		}
		if (errno == EBUSY)
			return lens[i];
		WL_CHECK(errno == EINVAL || errno == EPERM, "rseq(%p, %u): %s", area, lens[i],
			 strerror(errno));
	}
	return 0;
}

static void record(struct regs *r)
{
	struct robust_list_head *head;
	size_t len;

	memset(r, 0, sizeof(*r));
	r->tid = (pid_t)syscall(SYS_gettid);
	WL_CHECK(syscall(SYS_get_robust_list, 0, &head, &len) == 0, "get_robust_list: %s",
		 strerror(errno));
	r->robust_head = head;
	r->robust_len = len;
	r->rseq_area = __rseq_size ? (void *)((char *)__builtin_thread_pointer() + __rseq_offset)
				   : (void *)&own_rseq;
	r->rseq_len = rseq_registered(r->rseq_area);
}

/* Before the dump: what glibc registered, or our own rseq area where it registered none. */
static void set_up_thread(struct regs *r)
{
	record(r);
	if (!r->rseq_len) {
		WL_CHECK(syscall(SYS_rseq, &own_rseq, sizeof(own_rseq), 0, RSEQ_SIG) == 0,
			 "rseq: %s", strerror(errno));
		record(r);
	}
	WL_CHECK(r->robust_head && r->robust_len == sizeof(struct robust_list_head),
		 "TID %d: no robust list registered (%p, %zu)", (int)r->tid, r->robust_head,
		 r->robust_len);
	WL_CHECK(r->rseq_len, "TID %d: no rseq area registered at %p", (int)r->tid, r->rseq_area);
}

static void check(const char *who, const struct regs *a)
{
	struct regs b;

	record(&b);
	WL_CHECK(b.tid == a->tid, "%s: TID %d, was %d", who, (int)b.tid, (int)a->tid);
	WL_CHECK(b.robust_head == a->robust_head && b.robust_len == a->robust_len,
		 "%s (TID %d): robust list %p+%zu, was %p+%zu", who, (int)a->tid, b.robust_head,
		 b.robust_len, a->robust_head, a->robust_len);
	WL_CHECK(b.rseq_len == a->rseq_len,
		 "%s (TID %d): rseq area %p is %s, was registered with length %u", who, (int)a->tid,
		 a->rseq_area, b.rseq_len ? "registered with another length" : "not registered",
		 a->rseq_len);
}

static void *thread_main(void *arg)
{
	long idx = (long)arg;
	struct regs r;
	char who[32];

	snprintf(who, sizeof(who), "thread %ld", idx);
	set_up_thread(&r);
	if (idx == 0)
		WL_CHECK(pthread_mutex_lock(&robust) == 0, "lock the robust mutex");
	atomic_fetch_add(&set_up, 1);
	pthread_mutex_lock(&mtx);
	while (!go)
		pthread_cond_wait(&cond, &mtx);
	pthread_mutex_unlock(&mtx);
	check(who, &r);
	/* Thread 0 ends holding the robust mutex. */
	return NULL;
}

static void check_owner_dead(pthread_t holder)
{
	struct timespec until;
	int r;

	WL_CHECK(pthread_join(holder, NULL) == 0, "pthread_join");
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 30;
	r = pthread_mutex_timedlock(&robust, &until);
	WL_CHECK(r != ETIMEDOUT,
		 "the robust mutex its holder died with was not released: the kernel did not walk "
		 "that thread's robust list");
	WL_CHECK(r == EOWNERDEAD, "lock the robust mutex its holder died with: %s (not EOWNERDEAD)",
		 strerror(r));
	WL_CHECK(pthread_mutex_consistent(&robust) == 0 && pthread_mutex_unlock(&robust) == 0,
		 "make the robust mutex consistent");
}

int main(void)
{
	pthread_mutexattr_t ma;
	pthread_t t[N_THREADS];
	struct regs main_regs;

	wl_init("rseq-robust");
	WL_CHECK(pthread_mutexattr_init(&ma) == 0 &&
			 pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST) == 0 &&
			 pthread_mutex_init(&robust, &ma) == 0,
		 "a robust mutex");
	set_up_thread(&main_regs);
	for (long i = 0; i < N_THREADS; i++)
		WL_CHECK(pthread_create(&t[i], NULL, thread_main, (void *)i) == 0,
			 "pthread_create");
	while (atomic_load(&set_up) < N_THREADS)
		usleep(1000);
	wl_ready();
	wl_wait_verify();
	check("the main thread", &main_regs);
	pthread_mutex_lock(&mtx);
	go = true;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&mtx);
	for (int i = 1; i < N_THREADS; i++)
		WL_CHECK(pthread_join(t[i], NULL) == 0, "pthread_join");
	check_owner_dead(t[0]);
	wl_note("robust lists and rseq areas of %d threads and the main thread intact; the robust "
		"mutex of a thread that died holding it is owner-dead",
		N_THREADS);
	return 0;
}
