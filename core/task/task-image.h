/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * core-PID.img, the record both sides stand on: the dump writes it
 * (dump/task-dump.h collects it), the restore reads and checks it before
 * anything is forked.  Queued signals are read and checked here too
 * (task-pending.c), both ways.
 */
#ifndef CRF_TASK_IMAGE_H
#define CRF_TASK_IMAGE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "crf-private.h"
#include "core.pb-c.h"

/* task-image.c: write core-PID.img; free what crf_task_* allocated in @tc. */
int task_write(struct crf_imgdir *dir, Crf__Core__TaskCore *tc);
void task_free(Crf__Core__TaskCore *tc);

/*
 * Read core-PID.img and check it (task_check); free with
 * protobuf_c_message_free_unpacked.  On failure *@tc is NULL.
 */
int task_read(struct crf_imgdir *dir, pid_t pid, Crf__Core__TaskCore **tc);
/*
 * Every field of @tc (read from @img) that the restore uses as a size, a
 * count or a signal: -EBADMSG (logged, naming image, record and field)
 * for a corrupt one.
 */
int task_check(const char *img, const Crf__Core__TaskCore *tc);
void task_free_thread(Crf__Core__ThreadCore *th);
void creds_free(Crf__Core__Creds *c);

/* task-pending.c */

/* How many signals one queue of the task can hold: its RLIMIT_SIGPENDING, and more. */
uint64_t task_pending_cap(const Crf__Core__TaskCore *tc);
/*
 * The siginfo queued for thread @tid (@shared: for its process), in queue
 * order, without dequeuing them; more than @cap fails.  A queued SIGSTOP is
 * left out and sets *@stop: the task is to come back stopped.  0 or -errno
 * (logged); *@out and *@n as far as they got, for the caller to free.
 */
int task_read_pending(pid_t tid, bool shared, uint64_t cap, ProtobufCBinaryData **out, size_t *n,
		      bool *stop);
/*
 * Restore: each of @v (@n records of @field in image @img) is a whole
 * siginfo of a signal that can be queued; else -EBADMSG naming the record.
 */
int task_check_pending(const char *img, const char *field, const ProtobufCBinaryData *v, size_t n);

#endif
