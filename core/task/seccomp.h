/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * seccomp.h - a task's seccomp state: strict mode and filter chains, per
 * thread (TaskCore.seccomp in core-PID.img; docs/dump-restore.md, "Seccomp").
 *
 * Dump (seccomp-dump.c): with the process frozen, before the infection, every
 * thread's mode and filters are read with ptrace; a state that cannot come
 * back exactly is refused, naming the thread.  Restore (seccomp-restore.c):
 * checked before anything is forked, then handed to the restorer, which
 * installs it after crf's "go" (parasite/restorer-seccomp.c), while crf
 * traces the task with PTRACE_O_SUSPEND_SECCOMP.
 */
#ifndef CRF_SECCOMP_H
#define CRF_SECCOMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core.pb-c.h"

struct crf_proc;
struct crf_rst_task;

/* The kernel's limits: instructions per filter, per chain (with 4 per filter). */
#define CRF_SECCOMP_MAX_INSNS	   4096
#define CRF_SECCOMP_MAX_PATH_INSNS 32768

/*
 * Read every thread of the frozen @pr into tc->seccomp (left NULL when no
 * thread has seccomp).  Refuses, with one message naming the thread: a
 * thread under seccomp that crf could not suspend (see freeze.h), a filter
 * that may hand system calls to a user-space listener, filters that only
 * some threads share.  Free with seccomp_free().
 */
int seccomp_dump(const struct crf_proc *pr, Crf__Core__TaskCore *tc);
void seccomp_free(Crf__Core__TaskCore *tc);

/*
 * Restore, before the tree is forked: every record of @tcs (@n, NULL
 * entries skipped) is well-formed and fits the kernel's limits, and, when
 * one has seccomp state, this crf can suspend seccomp in a traced task.
 */
int seccomp_restore_check(Crf__Core__TaskCore *const *tcs, size_t n);

/*
 * Put @tc's seccomp state into @t's restorer arguments (the leader's in
 * t->a, each other thread's in its crf_rst_thread_arg, the filters in
 * t->seccomp_buf).  After the threads were added.
 */
int seccomp_fill(struct crf_rst_task *t, const Crf__Core__TaskCore *tc);

/* Pure parts, for the unit tests. */

/*
 * The "Seccomp:" and "Seccomp_filters:" values of a /proc status file.
 * -ENOENT when the kernel shows no "Seccomp:" line; a missing
 * "Seccomp_filters:" reads as 0.
 */
int seccomp_parse_status(const char *text, int *mode, int *n_filters);

/* One thread's filter chain, the oldest (the root) first. */
struct crf_seccomp_chain {
	pid_t tid;
	int mode;
	const ProtobufCBinaryData *code; /* n programs */
	const uint32_t *flags;
	size_t n;
};

/*
 * How many filters, from the root, every chain of @c (@n) has alike
 * (same code and flags): those a restore makes shared.  0 when n is 0.
 */
size_t seccomp_common(const struct crf_seccomp_chain *c, size_t n);

/*
 * Past the first @k filters: -EBUSY when two threads' next filters are
 * alike (a filter some threads share and others lack), with *@a and *@b
 * their indices; else 0.
 */
int seccomp_own_clash(const struct crf_seccomp_chain *c, size_t n, size_t k, size_t *a, size_t *b);

/*
 * Whether the program (@len bytes of struct sock_filter) can return
 * SECCOMP_RET_USER_NOTIF: a return of that constant, or of the accumulator,
 * whose value is computed.
 */
bool seccomp_may_notify(const void *code, size_t len);

#endif
