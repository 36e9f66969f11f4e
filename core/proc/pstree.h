/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pstree.h - the process tree of a dump: who is whose child, in which
 * session and process group, alive or a zombie.
 *
 * Dump: pstree_freeze() (dump/freeze.h) collects the tree below a
 * process, freezing each process as it is found, and pstree_write() saves it
 * (pstree.img).  Restore: pstree_read() loads it back.  In both, the
 * root comes first and every parent before its children.
 */
#ifndef CRF_PSTREE_H
#define CRF_PSTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "crf-private.h"

struct crf_frozen;

#define CRF_IMG_PSTREE "pstree.img"

/* PID namespace levels a process can have below crf's (the kernel's MAX_PID_NS_LEVEL). */
#define CRF_PIDNS_LEVELS 32

struct crf_proc {
	pid_t pid, ppid, pgid, sid; /* as crf's namespace sees them */
	/*
	 * Its PID in each PID namespace level from crf's down to its own
	 * (/proc/PID/status NSpid): ns_pid[0] is @pid.  n_levels 0 reads as 1.
	 */
	pid_t ns_pid[CRF_PIDNS_LEVELS];
	unsigned int n_levels;
	bool zombie;
	int exit_status; /* zombie: as waitpid reports it */
	char comm[16];	 /* zombie: its name, as /proc/PID/stat shows it */
	unsigned int n_threads;
	/*
	 * A table of fds shared with other processes (CLONE_FILES): the first
	 * of the tree with it (0: a table of its own, or it is that first);
	 * on that first one, one more than the table's highest fd number.
	 */
	pid_t files_of;
	int fd_table_end;
	struct crf_frozen *frozen; /* dump: an alive process while frozen */
};

/* How many PID namespace levels @p has from crf's down (1: crf's own). */
static inline unsigned int crf_proc_levels(const struct crf_proc *p)
{
	return p->n_levels ? p->n_levels : 1;
}

struct crf_pstree {
	struct crf_proc *procs;
	size_t n, cap;
};

/* Append a copy of @p; 0 or -ENOMEM (logged). */
int pstree_add(struct crf_pstree *t, const struct crf_proc *p);
/* The process with PID @pid, or NULL; its index, or -1. */
struct crf_proc *pstree_find(const struct crf_pstree *t, pid_t pid);
ssize_t pstree_index(const struct crf_pstree *t, pid_t pid);
/* Frees the list (not the frozen processes: unfreeze or kill them first). */
void pstree_free(struct crf_pstree *t);

/*
 * Fill @p from /proc/@pid/stat: parent, group, session, and whether it is a
 * zombie (then its exit status too); and its PID in every namespace level
 * from /proc/@pid/status.  -ESRCH when it is gone (not logged).
 */
int crf_proc_read_stat(pid_t pid, struct crf_proc *p);

/* Write pstree.img; 0 or -errno (logged). */
int pstree_write(struct crf_imgdir *dir, const struct crf_pstree *t);

/*
 * Read pstree.img into @t (empty).  A dump without one (made before trees
 * were saved) reads as @root alone, in the caller's session and group.
 * Checks that @root comes first, that PIDs are unique and every other
 * process's parent is listed before it.  0 or -errno (logged).
 */
int pstree_read(struct crf_imgdir *dir, pid_t root, struct crf_pstree *t);

#endif
