/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * files.h - what the files of the files plugin share.
 */
#ifndef CRF_PLUGIN_FILES_H
#define CRF_PLUGIN_FILES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <crf/image.h>
#include <crf/plugin.h>

#include "policy.h"

struct files_pipes;
struct files_descs;
struct files_ttys;
struct files_locks;
struct files_ext;
struct files_unlinked;

/*
 * What the plugin keeps from one hook to the next, across the tasks of one
 * dump or restore: its private pointer outside dump-task.
 */
struct files_tree {
	struct files_pipes *pipes; /* pipe.c */
	struct files_descs *descs; /* shared.c */
	struct files_ttys *ttys;   /* tty.c, tty-restore.c */
	struct files_locks *locks; /* locks.c: the dump's POSIX locks of a task */
	struct files_ext *ext;	   /* external.c: what lies outside the tree */
	/* unlinked.c: the dump's unlinked files */
	struct files_unlinked *unlinked;
	struct files_syncs *syncs; /* sync.c: one fd per filesystem written to */
};

/* The plugin's files_tree, created on first use; NULL after logging ENOMEM. */
struct files_tree *files_tree_get(struct crf_ctx *ctx);

/* dump-cleanup and restore-cleanup: let go of the files_tree. */
int files_cleanup(struct crf_ctx *ctx);

/* The fd table of one task being dumped (the plugin's private pointer meanwhile). */
struct files_dump {
	struct files_tree *tree;
	struct crf_img *img; /* files-PID.img */
	int pid, pidfd;
	/* The fd being dumped and the walk's stat of its file (zeroes if it failed). */
	int cur_fd;
	struct stat cur_st;
	bool cur_st_ok;
	/*
	 * What the kinds read of that fd, once each and only when asked
	 * (files_cur_fdinfo, files_cur_copy); the walk lets go of them
	 * after the fd's dump.  NULL and -1 until then.
	 */
	char *cur_fdinfo;
	int cur_copy;
	/* --inherit-stdio: fds 0-2 that are not terminals are the "stdio" kind */
	bool inherit_stdio;
	/* The handler of the fd being dumped, recorded with it by files_fd_write(). */
	const char *cur_kind, *cur_plugin, *cur_version;
};

/*
 * sync.c: the filesystem (@dev) of a writable regular file, whose fd
 * @copy (files_cur_copy) is kept, once per filesystem, for dump-finish's
 * syncfs; and that stage, and the table's release.
 */
int files_sync_note(struct files_dump *d, int copy, dev_t dev, const char *path);
int files_syncs_dump_finish(struct crf_ctx *ctx);
void files_syncs_free(struct files_syncs *s);

/* The whole fdinfo of the fd being dumped, read once per fd; 0 or -errno (not logged). */
int files_cur_fdinfo(struct files_dump *d, const char **text);

/*
 * A copy of the fd being dumped (pidfd_getfd), taken once per fd and
 * closed by the walk, not by the caller; the fd or -errno (logged).
 */
int files_cur_copy(struct files_dump *d);

/*
 * The stat of the fd being dumped: the walk's, or (when that failed) an
 * fstat of files_cur_copy(); 0 or -errno (logged).
 */
int files_cur_stat(struct files_dump *d, const struct stat **st);

struct Crf__Files__Fd;

/*
 * Begin the record @e of fd @obj->id of the task being dumped (*@dp): the
 * fields every fd has (number, close-on-exec, flags, position, path), from
 * its fdinfo.  0 or -errno (logged).
 */
int files_fd_begin(struct crf_ctx *ctx, const struct crf_object *obj, struct Crf__Files__Fd *e,
		   struct files_dump **dp);

/*
 * What lies outside the tree (external.c): the plugin's keys "external"
 * (crf dump --external RESOURCE...), "inherit-fd" (crf restore --inherit-fd
 * fd[N]:RESOURCE...), "inherit-stdio" and "file-validation", read once per
 * dump or restore (files_ext_get(), NULL after logging why), and
 * external.img, which lists the resources a dump needs from the restore.
 */
struct files_ext *files_ext_get(struct crf_ctx *ctx);
void files_ext_free(struct files_ext *x);
/* A yes/no key of the plugin: 1, 0 (also when unset), or -EINVAL (logged). */
int files_config_bool(struct crf_ctx *ctx, const char *key);
bool files_ext_inherit_stdio(const struct files_ext *x);
/* restore: the rule of --file-validation (lax when @x is NULL). */
enum files_validation files_ext_validation(const struct files_ext *x);
/* restore: the dump has no external.img (fds 0-2 were not saved then). */
bool files_ext_old_dump(const struct files_ext *x);
/* dump-task: the task @pid is in the tree (outside holders are looked for elsewhere). */
int files_ext_note_task(struct files_ext *x, pid_t pid);
/* dump: whether --external named @name ("pipe:[123]"); it counts as met. */
bool files_ext_named(struct files_ext *x, const char *name);
/* dump: @name (first held as fd @fd of @pid) goes to external.img; 0 or -ENOMEM (logged). */
int files_ext_add(struct files_ext *x, const char *name, int pid, int fd);
/* dump-finish: refuse an --external name the tree does not hold; write external.img. */
int files_ext_dump_finish(struct crf_ctx *ctx);
/*
 * restore-prepare, before anything else: every resource external.img lists
 * must be given (--inherit-fd, --inherit-stdio), and every --inherit-fd
 * must name one of them; 0 or -errno (logged).
 */
int files_ext_restore_prepare(struct crf_ctx *ctx);
/* restore: crf restore's fd that --inherit-fd gives for @name, or -ENOENT (logged). */
int files_ext_fd(const struct files_ext *x, const char *name);

/*
 * A pipe or FIFO the tree lacks an end of, to look for outside the tree:
 * files_ext_find_holders() reads the fds of every process but the tree's
 * and crf's once, and fills in the first that holds each (pid 0: none).
 * 0 or -errno (logged).
 */
struct files_lookout {
	uint64_t dev, ino;
	bool fifo;
	pid_t pid; /* found: the holder, its fd, its fd's flags and its name */
	int fd;
	unsigned int flags;
	char comm[20];
};
int files_ext_find_holders(const struct files_ext *x, struct files_lookout *v, size_t n);

/* The probe hook: taking fds from a task, comparing them, reading their state. */
int files_probe(struct crf_ctx *ctx);

/* dump-task: walk the fd table, handing each fd to its kind's handler. */
int files_dump_task(struct crf_ctx *ctx);

/*
 * The "stdio" kind, with --inherit-stdio only (the walk names an fd 0-2
 * that is not a terminal so): not saved, but given crf restore's own fd of
 * its number at restore (files_stdio_reopen(), an fd O_CLOEXEC or -errno,
 * logged).  Without it, fds 0-2 are saved as the kind they are.
 */
int files_stdio_dump(struct crf_ctx *ctx, const struct crf_object *obj);
int files_stdio_reopen(const struct Crf__Files__Fd *e);

/*
 * Regular files, directories and /dev/{null,zero,random,urandom}: saved by
 * path, flags and offset in files-PID.img (regfile.c), reopened at restore
 * (restore.c).
 */
bool files_is_plain_chr(const struct crf_object *obj);
int files_regfile_dump(struct crf_ctx *ctx, const struct crf_object *obj);
int files_restore_task(struct crf_ctx *ctx);

/*
 * Reopen the file of @e as it was (a regular file must be the dump's, or
 * have changed only as --file-validation allows); our fd (O_CLOEXEC) or
 * -errno (logged).
 */
int files_regfile_reopen(struct crf_ctx *ctx, const struct Crf__Files__Fd *e);

/* dump-finish and restore-prepare: the hooks, calling pipe.c's and shared.c's. */
int files_dump_finish(struct crf_ctx *ctx);
int files_restore_prepare(struct crf_ctx *ctx);

/*
 * Descriptions shared between fds, in a task or across the tree (shared.c).
 * files_desc_find() looks for the description of fd @fd of the task being
 * dumped among those saved so far in the tree (ordered by kcmp, so log n
 * comparisons): 1 when it is one of them (@e's same_as, and same_pid for
 * another task's, are set), 0 when not, -errno (logged) when kcmp fails.
 * files_desc_remember() adds the description of @fd once its record is
 * saved.  dump-finish writes those of several tasks to shared-fds.img;
 * restore-prepare creates each of them once in crf's top process, and
 * files_shared_dup(), in a restored task, returns an fd (O_CLOEXEC) on the
 * one first held by fd @fd of @pid, -ENOENT (not logged) when it is not
 * shared, or -errno (logged).  The first call for a description returns
 * the inherited fd itself, later ones a dup of it: the caller must hand
 * each to the core (crf_rst_keep_fd), which keeps them open.
 */
int files_desc_find(struct files_dump *d, int fd, struct Crf__Files__Fd *e);
/*
 * @e, which files_desc_find() just found to be a description of another
 * task, is to be saved as one of this task's own: a record with its state,
 * not listed as shared on its account (a pidfd: see anonfd.c).
 */
void files_desc_unshare(struct files_dump *d, struct Crf__Files__Fd *e);
int files_desc_remember(struct files_dump *d, int fd);
/*
 * Whether the task of @d shares its fd table with a task saved before
 * (CLONE_FILES): 1 (its fds are saved with that task), 0 (its own, now
 * remembered), or -errno (logged).
 */
int files_table_seen(struct files_dump *d);

/*
 * Begin the record of fd @obj->id for a kind whose state its fdinfo lists
 * (@what: "epoll", "inotify"): files_fd_begin(), with that fdinfo in
 * *@text (files_cur_fdinfo's), and look for a description already saved.
 * Returns 1 when @e is an fd of a description saved before, in this task
 * or another (nothing more to save: the first fd's record holds the
 * registrations or watches, and a description shared between tasks is
 * made once in restore-prepare), 0 when it is new, or -errno (logged).
 */
int files_fdinfo_fd_begin(struct crf_ctx *ctx, const struct crf_object *obj, const char *what,
			  struct Crf__Files__Fd *e, const char **text, struct files_dump **dp);
int files_shared_dump_finish(struct crf_ctx *ctx);
int files_shared_restore_prepare(struct crf_ctx *ctx);
int files_shared_restore_premap(struct crf_ctx *ctx);
int files_shared_dup(struct crf_ctx *ctx, int pid, int fd);
void files_descs_free(struct files_descs *descs);

/*
 * Pipes and FIFOs (pipe.c): the "pipe" and "fifo" kinds write an Fd record
 * with .pipe set and collect one pipe per inode across the tree, with its
 * capacity and buffered bytes; dump-finish writes them to pipes.img.
 * restore-prepare creates every pipe once in crf's top process, which the
 * tasks inherit; files_pipe_reopen() (restore-task) returns a new fd
 * (O_CLOEXEC) on the saved end of one, or -errno (logged).
 */
int files_pipe_dump(struct crf_ctx *ctx, const struct crf_object *obj);
int files_pipes_dump_finish(struct crf_ctx *ctx);
int files_pipes_restore_prepare(struct crf_ctx *ctx);
int files_pipe_reopen(struct crf_ctx *ctx, const struct Crf__Files__Fd *e);
void files_pipes_free(struct files_pipes *pipes);

/*
 * Locks and signal-driven I/O of an fd (fdattr.c, locks.c, owner.c).
 * Every kind writes its record with files_fd_write(), which adds the locks
 * that fdinfo lists for the fd (refusing leases, delegations and mandatory
 * locks) and the owner and signal of its description, then writes it to
 * files-PID.img; 0 or -errno (logged).  Both come from the fd's fdinfo and
 * copy that the kind may have read already (files_cur_fdinfo,
 * files_cur_copy).  files_fdattr_restore_task(), at the end of
 * restore-task, has them applied in the task once its fds are at their
 * numbers (crf_rst_at_fds_placed); 0 or -errno (logged).
 */
int files_fd_write(struct files_dump *d, struct Crf__Files__Fd *e);
int files_fdattr_restore_task(struct crf_ctx *ctx);

struct Crf__Files__FdOwner;

/*
 * fd kinds through the registry (kinds.c).  files_record_kind(): the kind
 * @e was dumped as (the handler's name; for older records without one,
 * the kind its fields tell).  files_open_by_kind(): a new description
 * (O_CLOEXEC) for @e, fd of task @pid, from the handler of its kind of the
 * plugin recorded with it (crf_kind_restore), or -errno (logged).
 * files_foreign_dump(): the record of an fd whose kind @kind another
 * plugin declares: the generic fields, dups and sharing here, the payload
 * from that plugin's dump.  files_kinds_check(), in restore-prepare: every
 * record that needs a description has an enabled handler; 0 or -ENOTSUP
 * (logged, naming the fd, the kind and the plugin).  The rest: the
 * restore handlers of the plugin's own kinds.
 */
const char *files_record_kind(const struct Crf__Files__Fd *e);
int files_open_by_kind(struct crf_ctx *ctx, const struct Crf__Files__Fd *e, int pid);
int files_foreign_dump(struct crf_ctx *ctx, const struct crf_object *obj,
		       const struct crf_kind *kind);
int files_kinds_check(struct crf_ctx *ctx);
int files_regfile_restore(struct crf_ctx *ctx, const struct crf_object *obj);
int files_stdio_restore(struct crf_ctx *ctx, const struct crf_object *obj);
int files_pipe_restore(struct crf_ctx *ctx, const struct crf_object *obj);
int files_tty_restore(struct crf_ctx *ctx, const struct crf_object *obj);
int files_epoll_restore(struct crf_ctx *ctx, const struct crf_object *obj);
int files_inotify_restore(struct crf_ctx *ctx, const struct crf_object *obj);
int files_anon_restore(struct crf_ctx *ctx, const struct crf_object *obj);

/*
 * Add the locks of the "lock:" lines of @text (the fd's fdinfo) to @e,
 * each once (locks.c); files_locks_release() frees them.  0 or -errno (logged).
 */
int files_locks_dump(struct files_dump *d, const char *text, struct Crf__Files__Fd *e);
void files_locks_release(struct Crf__Files__Fd *e);
void files_locks_free(struct files_locks *seen);
/* In the task, fds placed: take the locks of @e through fd @e->fd; 0 or -errno (logged). */
int files_locks_take(int pid, const struct Crf__Files__Fd *e);

/*
 * Read the owner and signal of @e's description into @e, the owner into
 * @own, which @e then points to (owner.c), through files_cur_copy(); 0 or
 * -errno (logged).
 */
int files_owner_dump(struct files_dump *d, struct Crf__Files__Fd *e,
		     struct Crf__Files__FdOwner *own);
/* Whether @e has an owner, a signal or O_ASYNC to set at restore. */
bool files_owner_wanted(const struct Crf__Files__Fd *e);
/* In the task, fds placed: set them through fd @e->fd; 0 or -errno (logged). */
int files_owner_set(int pid, const struct Crf__Files__Fd *e);

#endif
