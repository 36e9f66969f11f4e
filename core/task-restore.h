/* SPDX-License-Identifier: GPL-2.0-only */
/* Applying the core's per-task state in the restored task. */
#ifndef CRF_TASK_RESTORE_H
#define CRF_TASK_RESTORE_H

#include "core.pb-c.h"

/*
 * In the forked task, before the restorer: what crf's own code can set for
 * the task itself (scheduling, nice, affinity, the attributes of
 * crf_attrs_apply(), umask, cwd, root, comm).  Resource limits, signals,
 * timers, rseq, credentials and the personality are left to the restorer,
 * which sets them once crf's code is gone.  0 or -errno (logged).
 */
int crf_task_apply(const Crf__Core__TaskCore *tc);

#endif
