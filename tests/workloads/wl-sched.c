// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-sched: every thread keeps its own scheduling policy, priority and
 * nice value.
 *
 * The main thread runs SCHED_RR at priority 3; its threads run SCHED_FIFO
 * at 10, SCHED_RR at 20, SCHED_BATCH with nice 5, SCHED_IDLE (nice 3 set
 * before), SCHED_OTHER with nice -4, SCHED_FIFO at 1 with
 * SCHED_RESET_ON_FORK, and SCHED_OTHER at nice 0.  None of them spins: they
 * wait on a condition variable.
 *
 * After restore each thread compares, for itself, sched_getattr() (policy,
 * flags, nice, priority, the deadline and utilisation fields),
 * sched_getscheduler() and getpriority() with what they were, and the
 * policy and priority /proc/self/task/TID/stat shows.
 */
#include "wl.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK 0x40000000
#endif

/* struct sched_attr of the sched_getattr(2) system call (glibc 2.36 has no wrapper). */
struct wl_sched_attr {
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime, deadline, period;
	uint32_t util_min, util_max;
};

struct want {
	int policy, priority, nice;
	bool reset_on_fork;
};

static const struct want wants[] = {
	{SCHED_FIFO, 10, 0, false}, {SCHED_RR, 20, 0, false},	 {SCHED_BATCH, 0, 5, false},
	{SCHED_IDLE, 0, 3, false},  {SCHED_OTHER, 0, -4, false}, {SCHED_FIFO, 1, 0, true},
	{SCHED_OTHER, 0, 0, false},
};
#define N_THREADS (sizeof(wants) / sizeof(wants[0]))
static const struct want main_want = {SCHED_RR, 3, 0, false};

struct snap {
	pid_t tid;
	struct wl_sched_attr attr;
	int policy, nice;
	char stat[64]; /* rt_priority and policy of /proc/self/task/TID/stat */
};

static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static bool go;
static atomic_int set_up;

/* Fields 40 and 41 (rt_priority, policy) of the thread's stat file. */
static void stat_fields(pid_t tid, char *out, size_t size)
{
	char path[64], text[2048], *p;
	int field = 3;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	WL_CHECK(wl_read_file(path, text, sizeof(text)) > 0, "read %s: %s", path, strerror(errno));
	p = strrchr(text, ')');
	WL_CHECK(p, "%s: no command name", path);
	for (p += 2; *p && field < 40; field++)
		p += strcspn(p, " ") + 1;
	snprintf(out, size, "%.*s", (int)strcspn(p, "\n"), p);
	/* Keep only fields 40 and 41. */
	p = strchr(out, ' ');
	if (p && (p = strchr(p + 1, ' ')))
		*p = '\0';
}

static void snap(struct snap *s)
{
	memset(s, 0, sizeof(*s));
	s->tid = (pid_t)syscall(SYS_gettid);
	WL_CHECK(syscall(SYS_sched_getattr, 0, &s->attr, sizeof(s->attr), 0) == 0,
		 "sched_getattr: %s", strerror(errno));
	s->policy = sched_getscheduler(0);
	WL_CHECK(s->policy >= 0, "sched_getscheduler: %s", strerror(errno));
	errno = 0;
	s->nice = getpriority(PRIO_PROCESS, 0);
	WL_CHECK(errno == 0, "getpriority: %s", strerror(errno));
	stat_fields(s->tid, s->stat, sizeof(s->stat));
}

static void compare(const char *who, const struct snap *a, const struct snap *b)
{
	WL_CHECK(a->attr.policy == b->attr.policy && a->policy == b->policy,
		 "%s (TID %d): policy %d (%#x), was %d (%#x)", who, (int)b->tid,
		 (int)b->attr.policy, b->policy, (int)a->attr.policy, a->policy);
	WL_CHECK(a->attr.priority == b->attr.priority, "%s (TID %d): priority %u, was %u", who,
		 (int)b->tid, b->attr.priority, a->attr.priority);
	WL_CHECK(a->attr.nice == b->attr.nice && a->nice == b->nice, "%s (TID %d): nice %d, was %d",
		 who, (int)b->tid, b->nice, a->nice);
	WL_CHECK(a->attr.flags == b->attr.flags, "%s (TID %d): sched flags %#llx, were %#llx", who,
		 (int)b->tid, (unsigned long long)b->attr.flags, (unsigned long long)a->attr.flags);
	WL_CHECK(!memcmp(&a->attr, &b->attr, sizeof(a->attr)),
		 "%s (TID %d): sched_getattr differs (runtime %llu deadline %llu period %llu util "
		 "%u-%u, were %llu %llu %llu %u-%u)",
		 who, (int)b->tid, (unsigned long long)b->attr.runtime,
		 (unsigned long long)b->attr.deadline, (unsigned long long)b->attr.period,
		 b->attr.util_min, b->attr.util_max, (unsigned long long)a->attr.runtime,
		 (unsigned long long)a->attr.deadline, (unsigned long long)a->attr.period,
		 a->attr.util_min, a->attr.util_max);
	WL_CHECK(!strcmp(a->stat, b->stat),
		 "%s (TID %d): stat's rt_priority and policy \"%s\", "
		 "were \"%s\"",
		 who, (int)b->tid, b->stat, a->stat);
}

static void apply(const struct want *w)
{
	struct sched_param sp = {.sched_priority = w->priority};
	int policy = w->policy | (w->reset_on_fork ? SCHED_RESET_ON_FORK : 0);

	/* The nice value first: under SCHED_IDLE it is kept, but means nothing. */
	WL_CHECK(setpriority(PRIO_PROCESS, 0, w->nice) == 0, "setpriority %d: %s", w->nice,
		 strerror(errno));
	WL_CHECK(sched_setscheduler(0, policy, &sp) == 0, "sched_setscheduler(%#x, %d): %s", policy,
		 w->priority, strerror(errno));
}

static void check_applied(const struct want *w, const struct snap *s)
{
	WL_CHECK(s->policy == (w->policy | (w->reset_on_fork ? SCHED_RESET_ON_FORK : 0)) &&
			 (int)s->attr.priority == w->priority && s->nice == w->nice,
		 "TID %d: policy %#x priority %u nice %d, not what was set", (int)s->tid, s->policy,
		 s->attr.priority, s->nice);
}

static void *thread_main(void *arg)
{
	const struct want *w = arg;
	struct snap before, after;
	char name[16];

	snprintf(name, sizeof(name), "wl-sched-%d", (int)(w - wants));
	pthread_setname_np(pthread_self(), name);
	apply(w);
	snap(&before);
	check_applied(w, &before);
	atomic_fetch_add(&set_up, 1);
	pthread_mutex_lock(&mtx);
	while (!go)
		pthread_cond_wait(&cond, &mtx);
	pthread_mutex_unlock(&mtx);
	snap(&after);
	compare(name, &before, &after);
	return NULL;
}

int main(void)
{
	pthread_t t[N_THREADS];
	struct snap before, after;

	wl_init("sched");
	for (size_t i = 0; i < N_THREADS; i++)
		WL_CHECK(pthread_create(&t[i], NULL, thread_main, (void *)&wants[i]) == 0,
			 "pthread_create");
	while (atomic_load(&set_up) < (int)N_THREADS)
		usleep(1000);
	apply(&main_want);
	snap(&before);
	check_applied(&main_want, &before);
	wl_ready();
	wl_wait_verify();
	snap(&after);
	compare("the main thread", &before, &after);
	pthread_mutex_lock(&mtx);
	go = true;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&mtx);
	for (size_t i = 0; i < N_THREADS; i++)
		WL_CHECK(pthread_join(t[i], NULL) == 0, "pthread_join");
	wl_note("%zu threads and the main thread: policies, priorities, nice values intact",
		N_THREADS);
	return 0;
}
