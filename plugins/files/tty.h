/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tty.h - terminals: ptys the tree owns, and the external terminal of a
 * shell job (tty.c dumps them, tty-restore.c restores them).
 */
#ifndef CRF_PLUGIN_FILES_TTY_H
#define CRF_PLUGIN_FILES_TTY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/types.h>
#include <termios.h>

#include "files.h"

struct Crf__Files__Fd;
struct Crf__Files__Tty;

/* One terminal the tree has fds on (tty.c and tty-restore.c share it). */
struct files_term {
	uint32_t index;	    /* the pts number at the dump */
	uint64_t rdev;	    /* the terminal's device at the dump (the slave's) */
	bool pts;	    /* a pty slave, not a console or serial line */
	bool master;	    /* dump: the tree holds its master */
	int pid, fd;	    /* dump: its first fd, for messages */
	char *path;	    /* dump: that fd's path */
	struct termios tio; /* dump: its settings, through the first fd met */
	struct winsize ws;
	bool settings; /* tio and ws are read */
	int packet, locked;
	pid_t sid, fg;
	/* dump: bytes buffered for a slave to read, and for the master */
	unsigned int in_queued, out_queued;
	bool slave_seen; /* dump: the tree holds its slave: in_queued is known */
	bool owner_seen; /* dump: ... at /dev/pts/N (not /dev/tty): uid, gid, perm */
	uid_t uid;
	gid_t gid;
	mode_t perm;
	struct Crf__Files__Tty *rec; /* restore: its record */
	int master_fd;		     /* restore: crf's fd on the new pty's master, or -1 */
	char slave[32];		     /* restore: the new pty's slave */
};

/* What a dump-task saw of a task: its group, session and terminal. */
struct files_tty_task {
	pid_t pid, pgrp, sid, tpgid;
	uint64_t tty; /* its controlling terminal's device, 0: none */
};

struct files_ttys {
	struct files_term *v;
	size_t n;
	struct files_tty_task *tasks;
	size_t n_tasks;
	int term_fd; /* restore: crf restore's own terminal, or -1 */
	char term_path[64];
};

/* The tree's terminals, created on first use; NULL after logging ENOMEM. */
struct files_ttys *files_ttys_get(struct crf_ctx *ctx);

/*
 * The "tty" kind: pty masters (/dev/ptmx), pty slaves (/dev/pts/N), virtual
 * consoles and serial lines, /dev/tty and /dev/console, at any fd number
 * (fds 0-2 too: it is listed before "stdio").
 */
bool files_is_tty(const struct crf_object *obj);
int files_tty_dump(struct crf_ctx *ctx, const struct crf_object *obj);

/* dump-task: note the task's group, session and its terminal's foreground. */
int files_tty_note_task(const struct files_dump *d);

/*
 * dump-finish: tell the tree's ptys from external terminals (a slave whose
 * master the tree does not hold), refuse those without --shell-job, and
 * write ttys.img.
 */
int files_ttys_dump_finish(struct crf_ctx *ctx);

/*
 * restore-prepare, in crf's top process: create each pty of the tree anew
 * with its settings, and find crf restore's own terminal for the external
 * ones.
 */
int files_ttys_restore_prepare(struct crf_ctx *ctx);

/* A new fd (O_CLOEXEC) on the terminal of record @e; -errno (logged). */
int files_tty_open(struct crf_ctx *ctx, const struct Crf__Files__Fd *e);

/*
 * restore-session: a session leader whose pty was its controlling terminal
 * takes it again, before it forks its session's members.  restore-task,
 * once every group exists: it gives the foreground back to its group.
 * 0 or -errno (logged).
 */
int files_tty_restore_session(struct crf_ctx *ctx);
int files_tty_restore_task(struct crf_ctx *ctx);

/*
 * restore-finish, in crf's top process: lock again the ptys that were
 * locked, give the external terminal the job's termios and window size,
 * and its foreground back to the group that had it.
 */
int files_ttys_restore_finish(struct crf_ctx *ctx);

void files_ttys_free(struct files_ttys *ttys);

/* The files plugin's "shell-job" key: 1, 0, or -EINVAL (logged). */
int files_shell_job(struct crf_ctx *ctx);

#endif
