/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rst-tree.h - recreating a process tree: every process at its PID, under
 * its parent, in its session and process group, zombies included.
 *
 * crf forks the root; each process, still running crf's code, forks its
 * own children (so that getppid() is right), recursively.  Sessions are
 * made as processes are forked (setsid right after the fork; a child that
 * stays in its parent's old session is forked before its parent's setsid),
 * and so are the groups of their leaders (setpgid(0, 0)).  Then every
 * process joins its group, once all exist.  Zombies then exit with their
 * saved status, and every live process goes on to its restorer:
 *
 *	crf				each process (rst-tree.c)
 *	rst_tree_start
 *	  fork the root  ------------>	fork children; setsid (then the plugins'
 *					 restore-session) / lead a group
 *	  <- FORKED per child, CREATED	(children report the same, recursively)
 *	  barrier ------------------>	setpgid(0, its group)
 *	  <- GROUPED
 *	  barrier ------------------>	zombies exit; the live ones run
 *					 @task_fn: restore-task, restorer
 *	  <- "ready" on each status pipe
 *	restore-finish
 *	rst_tree_release  ------>	"go", one at a time
 *
 * Reports travel on one pipe shared by all (records under PIPE_BUF, so
 * writes do not interleave); each round of the barrier is a pipe from
 * which each process reads one byte (one pipe per round: a fast process
 * must not take a byte of the round it has just left).  crf watches every process it heard of
 * through a pidfd, so a death is seen at once.  On failure crf kills every
 * process the restore created, and, as child subreaper meanwhile, reaps
 * them and any they created.
 */
#ifndef CRF_RST_TREE_H
#define CRF_RST_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "crf-restorer.h"
#include "pstree.h"

/* Rounds of the barrier: after the processes are created, after the groups. */
#define CRF_RST_ROUNDS 2

/* join_pgid: the group the root was born in (crf restore's caller's). */
#define CRF_RST_ROOT_PGID (-1)

/* How one process is put back in place; one per process of the tree. */
struct crf_rst_proc {
	const struct crf_proc *p;
	/*
	 * Who forks it: its parent, or - with CLONE_PARENT, so that the parent
	 * is still its parent - a sibling in the session it must be born in.
	 * first_kid and next_sibling list what a process forks.
	 */
	ssize_t forker;			 /* index, -1: crf (the root) */
	ssize_t first_kid, next_sibling; /* indexes, -1: none */
	bool clone_parent;		 /* forked by a sibling: CLONE_PARENT */
	bool new_pidns;			 /* the init of a new PID namespace: CLONE_NEWPID */
	bool setsid;			 /* a session leader: setsid() */
	bool before_setsid; /* stays in its parent's old session: forked before its setsid */
	bool lead_group;    /* a group leader, not of a session: setpgid(0, 0) */
	bool helper;	    /* stands in for a group or session leader that is gone */
	pid_t join_pgid;    /* 0, a leader's PID, or CRF_RST_ROOT_PGID */
	/*
	 * An fd table shared with other processes (Process.files_of): the
	 * index of the one whose files image holds its fds (the placer, which
	 * installs them), -1 for a table of its own; and whether it is forked
	 * with CLONE_FILES (its forker has the table) or is the table's first.
	 */
	ssize_t fdt;
	bool clone_files;

	/* crf's side */
	int status[2], go[2]; /* live ones: the restorer's handshake */
	int pidfd;
	bool created, reported, ready;
	struct crf_rst_status st;
	/* A placer's: crf's word that its sharers are ready, and how many are */
	int fdt_wait[2];
	size_t fdt_sharers, fdt_ready;
};

struct crf_rst_fdtable;

/*
 * Runs in a live process once its tree is in place: restore the task and
 * enter the restorer with @status_fd and @go_fd; @fdt says how its fd table
 * is shared with other processes (NULL: it is its own).  Returns only on
 * failure, after reporting it on @status_fd.
 */
typedef int (*crf_rst_task_fn)(void *arg, pid_t pid, int status_fd, int go_fd,
			       const struct crf_rst_fdtable *fdt);

/* Runs in a live session leader right after its setsid(); 0 or -errno (logged). */
typedef int (*crf_rst_session_fn)(void *arg, pid_t pid);
/* Runs in a live process right after it is forked, before its children; 0 or -errno (logged). */
typedef int (*crf_rst_premap_fn)(void *arg, pid_t pid);

struct crf_rst_tree {
	const struct crf_pstree *t;
	/* The tree's processes (same indexes as t->procs), then the helpers. */
	struct crf_rst_proc *procs;
	size_t n;
	struct crf_proc *helper_procs;
	unsigned int pid_wait_ms;
	crf_rst_task_fn task_fn;
	crf_rst_session_fn session_fn; /* NULL: none; called with task_arg */
	crf_rst_premap_fn premap_fn;   /* NULL: none; called with task_arg */
	void *task_arg;

	pid_t root_pgid; /* set by the root before it forks */
	int events[2];
	int barrier[CRF_RST_ROUNDS][2];
	bool subreaper;
	bool sibling; /* crf swrk's rst_sibling: the root forked with CLONE_PARENT */
};

/*
 * Plan the restore of @t (rst-plan.c): parents, children, and how each
 * process gets its session and group.  A group whose leader is gone gets a
 * helper: a process with the leader's PID, forked by a member's forker,
 * that makes the group, lets the members join, exits and is reaped by its
 * parent.  A process whose parent is in another session is forked, with
 * CLONE_PARENT, by a sibling that leads its session, or by a session
 * helper (the gone leader's PID, calling setsid) when the leader is not in
 * the tree.  What cannot be made so is refused with a message naming the
 * process.  0 or -errno (logged); free with rst_tree_free.
 */
int rst_plan(const struct crf_pstree *t, struct crf_rst_tree *rt);
void rst_tree_free(struct crf_rst_tree *rt);

/*
 * At the dump: would rst_plan() refuse @t?  So that the dump refuses
 * it instead, while the tree runs.  0 or -errno (logged).
 */
int rst_plan_check(const struct crf_pstree *t);

/*
 * fd tables shared between processes (rst-fdtable.c).  crf's side:
 * rst_fdt_open() (with the status and go pipes) moves each sharer's
 * ends of them above its table's fds and makes each placer's wait pipe;
 * rst_fdt_ready(), as process @i becomes ready, tells a placer once
 * all its sharers are; rst_fdt_close() closes end @end (0: the
 * processes', 1: crf's, -1: both) of every wait pipe.  In process @i:
 * rst_fdt_role() fills @fdt, 1 when its table is shared, 0 when not.
 * 0 or -errno (logged).
 */
int rst_fdt_open(struct crf_rst_tree *rt);
int rst_fdt_ready(struct crf_rst_tree *rt, size_t i);
void rst_fdt_close(struct crf_rst_tree *rt, int end);
int rst_fdt_role(const struct crf_rst_tree *rt, size_t i, struct crf_rst_fdtable *fdt);

/* The index of @pid among the tree's processes and helpers, or -1. */
ssize_t rst_tree_index(const struct crf_rst_tree *rt, pid_t pid);

/* Does it go on to a restorer (neither a zombie nor a helper)? */
static inline bool crf_rst_proc_runs(const struct crf_rst_proc *rp)
{
	return !rp->p->zombie && !rp->helper;
}

/* What each process reports on the events pipe. */
enum crf_rst_event_kind {
	CRF_RST_EV_FORKED,  /* @arg: the PID of a child it just created */
	CRF_RST_EV_CREATED, /* its children exist, its session is made */
	CRF_RST_EV_GROUPED, /* it is in its process group */
	CRF_RST_EV_FAILED,  /* @arg: -errno, @msg: what failed */
};

struct crf_rst_event {
	int32_t pid;
	int32_t kind;
	int32_t arg;
	char msg[180];
};

/* The code of every restored process up to its restorer (rst-tree.c). */
int rst_tree_proc_main(struct crf_rst_tree *rt, size_t i);
/*
 * clone3() with the PID of each namespace level in @set_tid (the innermost
 * first) and @flags; the child runs @child_fn(@arg) and exits with its
 * result.  A PID held by a zombie is waited for (@zombie_wait_ms, 0 for the
 * default).  0 or -errno (logged); the child's PID (in the caller's
 * namespace) in @out.
 */
int rst_clone(const pid_t *set_tid, size_t n_levels, uint64_t flags, unsigned int zombie_wait_ms,
	      int (*child_fn)(void *), void *arg, pid_t *out);

/* Create the root, which creates the rest (rst-tree.c); 0 or -errno (logged). */
int rst_tree_fork_root(struct crf_rst_tree *rt);

/*
 * crf's side (rst-ctl.c): create the tree and bring it up to "ready"
 * (every live process waiting in its restorer).  On failure, call
 * rst_tree_kill.
 */
int rst_tree_start(struct crf_rst_tree *rt);
/* Let every live process go, children before parents. */
int rst_tree_release(struct crf_rst_tree *rt);
/* Kill every process the restore created and reap what crf can. */
void rst_tree_kill(struct crf_rst_tree *rt);

#endif
