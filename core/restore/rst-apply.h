/* SPDX-License-Identifier: GPL-2.0-only */
/* Applying the core's per-task state in the restored task. */
#ifndef CRF_TASK_RESTORE_H
#define CRF_TASK_RESTORE_H

#include "core.pb-c.h"

/*
 * In the forked task, before the restorer: what crf's own code can set for
 * the task itself (scheduling, nice, affinity, the attributes of
 * attrs_apply(), umask, cwd, comm; the root comes last, with
 * task_apply_root()).  Resource limits, signals, timers, rseq,
 * credentials and the personality are left to the restorer, which sets
 * them once crf's code is gone.  0 or -errno (logged).
 */
int task_apply(const Crf__Core__TaskCore *tc);

struct crf_rst_task;

/*
 * The root (chroot), changed at the very end of the task's set-up, after
 * the plugins' functions of crf_rst_at_fds_placed() (add it after the
 * restore-task hooks): until then crf opens files by their paths from its
 * own root.  0 or -errno (logged).
 */
int task_apply_root(struct crf_rst_task *t, const Crf__Core__TaskCore *tc);

#endif
