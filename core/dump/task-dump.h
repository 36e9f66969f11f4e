/* SPDX-License-Identifier: GPL-2.0-only */
/* The core's own per-task state: collected at dump, applied at restore. */
#ifndef CRF_TASK_DUMP_H
#define CRF_TASK_DUMP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "crf-private.h"
#include "core.pb-c.h"

struct crf_parasite;
/*
 * The registers and XSAVE area of the leader as crf_infect() found them,
 * before the parasite changed anything (read once, for the cure and here).
 */
int crf_task_regs(const struct crf_parasite *p, Crf__Core__TaskCore *tc);

/*
 * What /proc and ptrace tell of @pid: blocked and queued signals, creds,
 * limits, scheduling, comm, cwd, root, rseq.  Called before the infection,
 * which changes the task's signal mask while the parasite is in.
 */
int crf_task_collect_proc(pid_t pid, Crf__Core__TaskCore *tc);

/*
 * Through the parasite @p, what only the task can read: signal actions,
 * sigaltstack, itimers, POSIX timers, securebits.  After
 * crf_task_collect_proc().
 */
int crf_task_collect_parasite(pid_t pid, struct crf_parasite *p, Crf__Core__TaskCore *tc);

/*
 * Every thread of the process @pr (pr->frozen->tids, the leader first, all
 * frozen) into tc->threads, with @p the leader's parasite: see
 * thread-dump.c.  After crf_task_collect_parasite().
 */
struct crf_proc;
int crf_task_collect_threads(const struct crf_proc *pr, struct crf_parasite *p,
			     Crf__Core__TaskCore *tc);

/* Pieces of the above that task-dump.c shares with thread-dump.c. */
int crf_task_read_thread_regs(pid_t tid, Crf__Core__ThreadCore *th);
int crf_task_read_rseq(pid_t tid, uint64_t *ptr, uint32_t *len, uint32_t *sig);
int crf_task_thread_sched(pid_t tid, Crf__Core__ThreadCore *th);
/* A thread's private queue (see crf_task_read_pending). */
int crf_task_pending_private(pid_t tid, uint64_t cap, Crf__Core__ThreadCore *th, bool *stop);
void crf_task_free_thread(Crf__Core__ThreadCore *th);

/* task-pending.c */

/* How many signals one queue of the task can hold: its RLIMIT_SIGPENDING, and more. */
uint64_t crf_task_pending_cap(const Crf__Core__TaskCore *tc);
/*
 * The siginfo queued for thread @tid (@shared: for its process), in queue
 * order, without dequeuing them; more than @cap fails.  A queued SIGSTOP is
 * left out and sets *@stop: the task is to come back stopped.  0 or -errno
 * (logged); *@out and *@n as far as they got, for the caller to free.
 */
int crf_task_read_pending(pid_t tid, bool shared, uint64_t cap, ProtobufCBinaryData **out,
			  size_t *n, bool *stop);
/*
 * Restore: each of @v (@n records of @field in image @img) is a whole
 * siginfo of a signal that can be queued; else -EBADMSG naming the record.
 */
int crf_task_check_pending(const char *img, const char *field, const ProtobufCBinaryData *v,
			   size_t n);

struct crf_proc_status;
/* Credentials as /proc/PID[/task/TID]/status gives them (securebits: 0). */
int crf_creds_from_status(const struct crf_proc_status *st, Crf__Core__Creds **out);
void crf_creds_free(Crf__Core__Creds *c);

/* task-image.c: write core-PID.img; free what crf_task_* allocated in @tc. */
int crf_task_write(struct crf_imgdir *dir, Crf__Core__TaskCore *tc);
void crf_task_free(Crf__Core__TaskCore *tc);

/*
 * Read core-PID.img and check it (crf_task_check); free with
 * protobuf_c_message_free_unpacked.  On failure *@tc is NULL.
 */
int crf_task_read(struct crf_imgdir *dir, pid_t pid, Crf__Core__TaskCore **tc);
/*
 * Every field of @tc (read from @img) that the restore uses as a size, a
 * count or a signal: -EBADMSG (logged, naming image, record and field)
 * for a corrupt one.
 */
int crf_task_check(const char *img, const Crf__Core__TaskCore *tc);

#endif
