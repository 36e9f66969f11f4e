/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pstree-dump.h - the tree at the dump: frozen process by process
 * (pstree-freeze.c), then checked for what the restore could not give back
 * (pstree-fs.c).  The tree itself and its image are proc/pstree.h's.
 */
#ifndef CRF_PSTREE_DUMP_H
#define CRF_PSTREE_DUMP_H

#include <sys/types.h>

#include "freeze.h"
#include "pstree.h"

/*
 * Freeze the tree below @root: @root with @mode, every descendant with
 * ptrace, each before its children are listed (from the children files of
 * all its threads), and rescan until no new process shows up.  Zombies are
 * listed, not frozen.  On failure nothing stays frozen.  0 or -errno
 * (logged).  Unless @mode is ptrace, a tree that is exactly the processes
 * of a cgroup v2 subtree is frozen through it first (docs/cgroup.md, "The
 * freezer"); a tree in a cgroup frozen by someone else is refused.
 */
int pstree_freeze(pid_t root, enum crf_freeze_mode mode, struct crf_pstree *t);

/* Resume every frozen process; the first error, after trying them all. */
int pstree_unfreeze(struct crf_pstree *t);

/*
 * SIGKILL every frozen process while it is still stopped, and collect crf's
 * exit reports as tracer.  Each is then reaped by its parent, or by the
 * reaper its orphans go to.
 */
int pstree_kill(struct crf_pstree *t);

/*
 * Find the fd tables processes of the tree share (kcmp(KCMP_FILES)) and
 * note them in the processes' files_of and fd_table_end (pstree-fs.c).
 * Refuses a table shared with a process outside the tree, a thread with
 * a table of its own (unshare(CLONE_FILES)), and processes sharing one
 * cwd, root and umask (CLONE_FS), naming both.  0 or -errno (logged).
 */
int pstree_fdtables(struct crf_pstree *t);

/*
 * Refuse a tree with a process whose cwd or root the restore cannot enter
 * again (pstree-fs.c): a deleted directory, a /proc directory of a process
 * that is not a live one of the tree, a root under /proc.  The message
 * names the process, the directory and why.  0 or -errno (logged).
 */
int pstree_check_fs(const struct crf_pstree *t);

#endif
