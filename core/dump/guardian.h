/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * guardian.h - what a dump leaves when crf itself dies (SIGKILL, a crash).
 *
 * Ptrace needs no help: the kernel detaches the threads of a dead tracer
 * and they run on.  But a cgroup crf froze stays frozen, and the images of
 * an unfinished dump stay behind.  So a dump starts a guardian: a small
 * child of crf, in a process group of its own (a ^C to crf's group does
 * not reach it), that holds one end of a pipe.  crf tells it what it holds
 * as it goes; if the pipe ends without "done", crf died: the guardian
 * thaws the cgroup crf had frozen and removes the unfinished images.
 *
 * Every function is a no-op when no guardian runs; a guardian that cannot
 * start is a warning, not a failed dump.
 */
#ifndef CRF_GUARDIAN_H
#define CRF_GUARDIAN_H

#include <stdbool.h>

/* Start the guardian of a dump into @imgdir (@created: made by this dump). */
void guardian_start(const char *imgdir, bool created);

/* crf froze the cgroup v2 @dir / thawed it again. */
void guardian_frozen(const char *dir);
void guardian_thawed(void);

/* The image directory is this dump's (not one that holds another dump's). */
void guardian_owned(void);

/* The images are complete (the inventory is written): keep them. */
void guardian_complete(void);

/* The dump is over, whatever its outcome: the guardian leaves. */
void guardian_stop(void);

#endif
