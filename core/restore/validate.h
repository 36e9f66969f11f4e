/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * validate.h - the core's images of a dump, decoded and checked before the
 * first fork (docs/image-format.md, "What restore validates").
 *
 * crf_restore() reads pstree.img and every core-PID.img before it creates
 * anything, and refuses a record the forked tasks could not use as it is
 * (a count, a length, an index, a PID) with the file, the record and the
 * field named.  The same checks run without a restore, on any image
 * directory, for the fuzzer (tests/fuzz/).
 */
#ifndef CRF_CORE_VALIDATE_H
#define CRF_CORE_VALIDATE_H

#include <stddef.h>

#include "core.pb-c.h"
#include "pstree.h"

struct crf_imgdir;

/*
 * The core records of @t (@tcs by tree index, NULL for zombies, read from
 * @dir) agree with each other and with the tree: each core-PID.img's pid
 * is its file's, its threads are the process's (the leader first, unique
 * TIDs, one PID per namespace level of the process), every array is
 * within what the restorer takes (signals, limits, timers, groups,
 * affinity, XSAVE), and no core-PID.img names a PID the tree lacks.
 * 0 or -EBADMSG (logged).
 */
int rst_validate_cores(struct crf_imgdir *dir, const struct crf_pstree *t,
		       Crf__Core__TaskCore *const *tcs);

/*
 * Everything the core checks of the dump in @dir with root @root before a
 * restore forks, on its own: pstree.img and its plan, every core-PID.img
 * (task_read, rst_validate_cores), cpu.img against this CPU, seccomp.
 * Creates nothing.  0 or -errno (logged).
 */
int crf_restore_validate(struct crf_imgdir *dir, pid_t root);

#endif
