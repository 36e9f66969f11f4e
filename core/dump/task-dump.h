/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The dump of the core's own per-task state into TaskCore (the record and
 * its reading are task-image.h's; rst-apply.h applies it at restore).
 */
#ifndef CRF_TASK_DUMP_H
#define CRF_TASK_DUMP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "crf-private.h"
#include "core.pb-c.h"
#include "task-image.h"

struct crf_parasite;
/*
 * The registers and XSAVE area of the leader as crf_infect() found them,
 * before the parasite changed anything (read once, for the cure and here).
 */
int task_regs(const struct crf_parasite *p, Crf__Core__TaskCore *tc);

/*
 * What /proc and ptrace tell of @pid: blocked and queued signals, creds,
 * limits, scheduling, comm, cwd, root, rseq.  Called before the infection,
 * which changes the task's signal mask while the parasite is in.
 */
int task_collect_proc(pid_t pid, Crf__Core__TaskCore *tc);

/*
 * Through the parasite @p, what only the task can read: signal actions,
 * sigaltstack, itimers, POSIX timers, securebits.  After
 * task_collect_proc().
 */
int task_collect_parasite(pid_t pid, struct crf_parasite *p, Crf__Core__TaskCore *tc);

/*
 * Every thread of the process @pr (pr->frozen->tids, the leader first, all
 * frozen) into tc->threads, with @p the leader's parasite: see
 * thread-dump.c.  After task_collect_parasite().
 */
struct crf_proc;
int task_collect_threads(const struct crf_proc *pr, struct crf_parasite *p,
			 Crf__Core__TaskCore *tc);

/* Pieces of the above that task-dump.c shares with thread-dump.c. */
int task_read_thread_regs(pid_t tid, Crf__Core__ThreadCore *th);
int task_read_rseq(pid_t tid, uint64_t *ptr, uint32_t *len, uint32_t *sig);
int task_thread_sched(pid_t tid, Crf__Core__ThreadCore *th);
/* A thread's private queue (see task_read_pending). */
int task_pending_private(pid_t tid, uint64_t cap, Crf__Core__ThreadCore *th, bool *stop);

struct crf_proc_status;
/* Credentials as /proc/PID[/task/TID]/status gives them (securebits: 0). */
int creds_from_status(const struct crf_proc_status *st, Crf__Core__Creds **out);
/*
 * creds-userns.c: @st's ids (read from /proc/@pid[/task/TID]/status) as
 * the task's own user namespace sees them, when it is not crf's; an id it
 * does not map is refused.  0 or -errno (logged).
 */
int creds_in_task_userns(pid_t pid, struct crf_proc_status *st);

/*
 * During the dump of a process, after its threads are in @tc: refuse state
 * a restore could not give back (live AMX tile data), naming the thread;
 * record the process's XSAVE permissions (ARCH_GET_XCOMP_PERM, through @p).
 */
int cpu_dump_task(struct crf_parasite *p, Crf__Core__TaskCore *tc);

#endif
