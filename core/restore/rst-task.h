/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The restore skeleton for one task: create it with its saved PID, collect
 * what the restorer must build (plugins through crf/restore.h, the core for
 * the task state), hand the task over to the restorer blob, and hold it at
 * the handshake until crf says go.
 *
 * Sequence, for the caller:
 *
 *	parent					child (child_fn)
 *	pipe(status), pipe(go)
 *	rst_fork(pid, ...)  ------------->	rst_task_init(&t)
 *	close child's pipe ends			restore-task hooks (ctx->ops =
 *						  &crf_restore_host_ops, ctx->task = &t)
 *						fill t.a (signals, creds, regs...)
 *						rst_exec(&t, status_w, go_r)
 *	rst_wait_ready(status_r, pid, &st)	<--	restorer: "ready"
 *	... restore-finish ...
 *	rst_release(pid, go_w, &st) ---->	restorer returns into the program
 */
#ifndef CRF_RESTORE_TASK_H
#define CRF_RESTORE_TASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <crf/restore.h>

#include "crf-private.h"
#include "crf-restorer.h"

/* Restorer fds are moved to numbers from here on, and above the program's. */
#define CRF_RST_FD_BASE 1000
/* How long rst_fork waits for a zombie holding the PID by default. */
#define CRF_RST_ZOMBIE_WAIT_MS 5000u

/*
 * Everything the restorer needs.  The scalar task state lives directly in
 * @a, the restorer's own argument block, which the core fills: sa[],
 * blocked, sas_*, itimer, rseq_*, credentials with restore_creds, regs[]
 * (pass them through crf_regs_fix_restart() first).  The arrays, the mm,
 * the vDSO and the descriptor bookkeeping in @a are set by rst_exec()
 * from the rest of this struct; leave them alone.
 */
/* A thread other than the leader; rst_exec() places its arrays. */
struct crf_rst_thread {
	struct crf_rst_thread_arg a;
	uint8_t *xsave;
	size_t xsave_len;
	uint8_t (*pending)[128];
	size_t n_pending;
};

/* A program fd to install at its number when entering the restorer. */
struct crf_rst_fd {
	int fd;	    /* ours, at any number, owned by the task */
	int number; /* the program's */
	bool cloexec;
};

/* A plugin's function to run once the program fds are placed (crf_rst_at_fds_placed). */
struct crf_rst_hook {
	int (*fn)(void *arg);
	void *arg;
	void (*release)(void *arg);
};

/*
 * A task whose fd table other tasks of the tree share (CLONE_FILES;
 * rst-fdtable.c): one of them, the placer, installs the table's fds as any
 * task does its own; the others (sharers) close and move none, and keep
 * their restorers' fds from @floor up, above every fd of the program.
 * The placer waits for one byte on @wait_fd (every sharer's restorer is
 * ready, its own fds closed) before it closes crf's fds, and leaves the
 * sharers' status and go fds (@keep) open.  Zeroes and @wait_fd -1: a
 * table of its own.
 */
struct crf_rst_fdtable {
	bool sharer;
	int floor;
	int wait_fd;
	int *keep;
	size_t n_keep;
};

struct crf_rst_task {
	struct crf_rst_args a;

	struct crf_rst_vma_arg *vmas;
	size_t n_vmas, cap_vmas;
	struct crf_rst_range_arg *guards; /* of every mapping, as added */
	size_t n_guards;
	struct crf_rst_name_arg *names; /* anonymous mappings' names */
	size_t n_names;
	/* /proc/self/mem, opened before the task's root changes (or -1): the
	 * restorer writes the pages of mappings that must never be writable */
	int mem_fd;
	struct crf_rst_pages_arg *pages;
	size_t n_pages, cap_pages;
	struct crf_img **blobs; /* distinct page images, closed by _free */
	size_t n_blobs, cap_blobs;
	struct crf_rst_timer_arg *timers;
	size_t n_timers;
	uint8_t (*pending)[128]; /* siginfo, in the order to queue them, shared first */
	size_t n_pending, cap_pending;
	uint8_t *xsave;
	size_t xsave_len;

	struct crf_rst_thread *threads; /* the others than the leader */
	size_t n_threads;

	struct crf_rst_mm mm;
	bool have_mm;
	uint64_t vdso;		/* the saved [vdso] start, 0: none */
	struct crf_rst_fd *fds; /* crf_rst_keep_fd(), in the order given */
	size_t n_fds, cap_fds;
	struct crf_rst_hook *hooks; /* crf_rst_at_fds_placed(), in the order given */
	size_t n_hooks;
	/* crf_rst_object(): the table inherited from restore-prepare, or NULL */
	struct crf_objects *objects;
	struct crf_rst_fdtable fdt; /* an fd table shared with other tasks */
	/* stopped children whose stop report to take (crf_rst_args.stop_waits_off) */
	int32_t *stop_waits;
	size_t n_stop_waits;
	/*
	 * seccomp (core/restore/seccomp-restore.c): a->n_seccomp_filters struct
	 * crf_rst_seccomp_filter, then their code, in one buffer; code_off
	 * counts from the buffer's start until rst_exec() places it
	 */
	uint8_t *seccomp_buf;
	size_t seccomp_len;
};

/* Plugins' calls of crf/restore.h land here (ctx->task: a struct crf_rst_task). */
extern const struct crf_host_ops crf_restore_host_ops;

void rst_task_init(struct crf_rst_task *t);
/* Close the fds and images it owns and free it (only needed on failure). */
void rst_task_free(struct crf_rst_task *t);

/*
 * Open t->mem_fd, /proc/self/mem of the task, while its root is still
 * crf's (a chroot may hide /proc).  0 or -errno (logged).
 */
int rst_open_mem(struct crf_rst_task *t);

/* The calls behind crf/restore.h, for the core itself.  0 or -errno (logged).
 * The fds in @vma and @mm are owned by @t from the call on, even on failure. */
int rst_task_add_vma(struct crf_rst_task *t, const struct crf_rst_vma *vma);
int rst_task_add_pages(struct crf_rst_task *t, struct crf_img *blob, uint64_t vaddr, uint64_t len,
		       uint64_t off);
int rst_task_set_mm(struct crf_rst_task *t, const struct crf_rst_mm *mm);
int rst_task_set_vdso(struct crf_rst_task *t, uint64_t vdso);
/* Program fd @number will be @fd (owned by @t from the call on, even on failure). */
int rst_task_keep_fd(struct crf_rst_task *t, int fd, int number, bool cloexec);
/* Run @fn(@arg) once the program fds are placed; @release(@arg) by _free. */
int rst_task_at_fds_placed(struct crf_rst_task *t, int (*fn)(void *arg), void *arg,
			   void (*release)(void *arg));

/* Task state with arrays; each copies its input.  0 or -errno (logged). */
int rst_task_add_timer(struct crf_rst_task *t, const struct crf_rst_timer_arg *timer);
/*
 * A pending signal's 128-byte siginfo; @shared: process-wide, else for the
 * leader.  The process-wide ones come first, each queue in its order.
 */
int rst_task_add_pending(struct crf_rst_task *t, const void *siginfo, bool shared);
/*
 * One more thread: @arg's scalars (the offsets are rst_exec()'s to set),
 * its XSAVE area and @n_pending private siginfo of 128 bytes.  Copies all.
 */
int rst_task_add_thread(struct crf_rst_task *t, const struct crf_rst_thread_arg *arg,
			const void *xsave, size_t xsave_len, const void *pending, size_t n_pending);
/* The NT_X86_XSTATE regset as PTRACE_GETREGSET returned it. */
int rst_task_set_xsave(struct crf_rst_task *t, const void *xsave, size_t len);

/*
 * Create a process with PID @pid (clone3 with set_tid; crf must be in the
 * PID namespace the PID belongs to) that runs @child_fn(@arg) and exits with
 * its return value.  The child is a raw clone: no atfork handlers run, so it
 * must not rely on other threads' state.  A PID held by a zombie is waited
 * for up to @zombie_wait_ms (0: CRF_RST_ZOMBIE_WAIT_MS), polling every 10 ms.
 * Returns 0 with *@out = @pid, or -errno (logged): -EEXIST naming the PID's
 * holder (its name and parent) when the PID is taken.
 */
int rst_fork(pid_t pid, unsigned int zombie_wait_ms, int (*child_fn)(void *), void *arg,
	     pid_t *out);

/*
 * Let crf have @need fds: raise the soft RLIMIT_NOFILE to the hard one, and
 * the hard one to @need (at most fs.nr_open) where it is lower and crf may
 * (CAP_SYS_RESOURCE).  0, or -errno (logged) when @must and there is not
 * room for @need; without @must a hard limit that stays lower is no error.
 */
int rst_fd_room(uint64_t need, bool must);

/*
 * In the forked task, last: close every fd of crf's (0-2 included), move
 * the restorer's fds in @a above every program fd number (CRF_RST_FD_BASE
 * at least), and install t->fds at their numbers, in place (rst-fds.c).
 * A sharer of another task's fd table (t->fdt) only moves the restorer's
 * fds, from t->fdt.floor up.  0 or -errno (logged).
 */
int rst_move_fds(struct crf_rst_task *t, struct crf_rst_args *a);

/*
 * In the forked task: put the restorer and its arguments in a place free in
 * both crf's and the saved address space, move the restorer's fds to
 * CRF_RST_FD_BASE and up (or above the highest program fd of t->fds), close
 * every other fd (0-2 included: they are the program's), install t->fds at their
 * numbers, run t->hooks, and jump into the restorer with @status_fd (write
 * end) and @go_fd (read end) for the handshake.  Never returns on success; the restorer reports
 * its own failures on @status_fd.  -errno (logged) when it could not jump.
 */
int rst_exec(struct crf_rst_task *t, int status_fd, int go_fd);

/*
 * In crf: wait for task @pid's restorer to report.  0 when it is ready and
 * waiting for rst_go(); else -errno, logged and described in @err
 * (@len bytes, may be NULL): the restorer's failure, or how the task ended
 * before it reported.
 */
int rst_wait_ready(int status_fd, pid_t pid, char *err, size_t len, struct crf_rst_status *st);
/* Let a ready task return into its program; 0 or -errno (logged). */
int rst_go(int go_fd);

/*
 * Let a ready task go, and make it unmap the restorer once it is back in
 * its program (@st: what rst_wait_ready() returned): crf traces the
 * task through its last system calls up to the exit of rt_sigreturn, has it
 * munmap the restorer's mapping through the `syscall` instruction the
 * restorer names, puts the program's registers back and detaches.  Where
 * tracing is not possible the task just goes, keeping that mapping (a
 * warning says so).  0 or -errno (logged) when the task could not go.
 */
int rst_release(pid_t pid, int go_fd, const struct crf_rst_status *st);

/*
 * Adjust registers saved while the task was stopped in a system call that
 * the kernel was going to restart (orig_rax >= 0, rax one of -ERESTARTSYS,
 * -ERESTARTNOINTR, -ERESTARTNOHAND, -ERESTART_RESTARTBLOCK), so that
 * returning to them repeats the call: rax = orig_rax and rip back over the
 * 2-byte `syscall`.  The restart block of -ERESTART_RESTARTBLOCK (nanosleep,
 * poll with a timeout...) is kernel state that is not saved: the call is
 * repeated with its original, relative, arguments, so it may wait longer.
 * Other registers are left alone.  @regs is in struct user_regs_struct order.
 */
void crf_regs_fix_restart(uint64_t regs[27]);

#endif
