// SPDX-License-Identifier: GPL-2.0-only
/*
 * Signal-driven I/O: the owner (F_GETOWN_EX), the signal (F_GETSIG) and
 * O_ASYNC of an open file description.
 *
 * They are read at the dump through a copy of the fd (pidfd_getfd), since
 * fdinfo shows neither owner nor signal.  The kernel names the owner in
 * the namespace of whoever asks, crf here; the record keeps it as the task
 * names it, for the task sets it again itself.
 *
 * At restore the task sets them once its fds are at their numbers
 * (fdattr.c): by then every process of the tree exists, so an owner that
 * is another process, or a group, can be named; and O_ASYNC must be
 * enabled through the program's own fd number, which the kernel puts in
 * si_fd of the signals it sends.  open() keeps O_ASYNC in the flags
 * without enabling anything, so the flag is cleared and set again, after
 * the owner, as a program does with fcntl(F_SETFL).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "anonfd.h"
#include "fdinfo.h"
#include "files.h"
#include "files.pb-c.h"

static int read_status(int pid, char *buf, size_t size)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	return files_proc_read(path, buf, size);
}

/* The levels of "NSpid:" of process @pid, outermost (crf's) first; their count or -errno. */
static int nspid(int pid, int *v, int max)
{
	char status[4096];
	int r = read_status(pid, status, sizeof(status));

	return r < 0 ? r : files_anon_parse_nspid(status, v, max);
}

/*
 * The restorer creates the threads other than the leader after the
 * functions that set owners have run: such a thread cannot be named yet.
 */
static int check_thread(const struct files_dump *d, const Crf__Files__Fd *e, int tid)
{
	char status[4096];
	uint64_t tgid;
	int r = read_status(tid, status, sizeof(status));

	if (r == 0)
		r = files_fdinfo_u64(status, "Tgid", 10, &tgid);
	if (r < 0)
		return crf_error_errno(-r, "pid %d: fd %d: Tgid of its owner thread %d", d->pid,
				       e->fd, tid);
	if (tgid == (uint64_t)tid)
		return 0;
	return crf_error_errno(ENOTSUP,
			       "pid %d: fd %d (%s): its signals go to thread %d of process %d, "
			       "which is not the main thread: crf cannot restore that yet",
			       d->pid, e->fd, e->path, tid, (int)tgid);
}

/* @own->pid, as crf names it, as the task of @d names it. */
static int local_pid(const struct files_dump *d, int fd, Crf__Files__FdOwner *own)
{
	int task[32], its[32], n_task, n_its;

	n_task = nspid(d->pid, task, 32);
	if (n_task < 0)
		return crf_error_errno(-n_task, "pid %d: NSpid", d->pid);
	if (n_task == 1)
		return 0;
	/* A group is named by its leader's PID, which must still be there to ask. */
	n_its = nspid(own->pid, its, 32);
	if (n_its == -ENOENT)
		return crf_error_errno(ENOTSUP,
				       "pid %d: fd %d: the owner %d of its signals is gone from "
				       "/proc, and crf cannot name it in the task's pid namespace",
				       d->pid, fd, own->pid);
	if (n_its < 0)
		return crf_error_errno(-n_its, "pid %d: fd %d: NSpid of its owner %d", d->pid, fd,
				       own->pid);
	if (n_its < n_task)
		return crf_error_errno(ENOTSUP,
				       "pid %d: fd %d: the owner %d of its signals is outside the "
				       "task's pid namespace",
				       d->pid, fd, own->pid);
	own->pid = its[n_task - 1];
	return 0;
}

int files_owner_dump(struct files_dump *d, Crf__Files__Fd *e, Crf__Files__FdOwner *own)
{
	struct f_owner_ex ex = {0};
	int copy, sig, r = 0;

	/* An O_PATH description has no owner (fcntl answers EBADF). */
	if (e->has_same_as || (e->flags & O_PATH))
		return 0;
	copy = files_cur_copy(d);
	if (copy < 0)
		return copy;
	sig = fcntl(copy, F_GETSIG);
	if (sig < 0 || fcntl(copy, F_GETOWN_EX, &ex) < 0)
		return crf_error_errno(errno, "pid %d: fd %d (%s): owner and signal", d->pid, e->fd,
				       e->path);
	if (sig) {
		e->has_signal = true;
		e->signal = sig;
	}
	/* 0: no owner, or one that has exited (the kernel then names none). */
	if (ex.pid <= 0)
		return 0;
	if (ex.type != F_OWNER_TID && ex.type != F_OWNER_PID && ex.type != F_OWNER_PGRP)
		return crf_error_errno(ENOTSUP, "pid %d: fd %d (%s): owner of unknown type %d",
				       d->pid, e->fd, e->path, ex.type);
	if (ex.type == F_OWNER_TID)
		r = check_thread(d, e, ex.pid);
	if (r < 0)
		return r;
	own->type = ex.type;
	own->pid = ex.pid;
	r = local_pid(d, e->fd, own);
	if (r < 0)
		return r;
	e->owner = own;
	crf_debug("pid %d: fd %d: signals (%d) to %s %d%s", d->pid, e->fd, sig,
		  ex.type == F_OWNER_TID   ? "thread"
		  : ex.type == F_OWNER_PID ? "process"
					   : "group",
		  own->pid, e->flags & O_ASYNC ? ", O_ASYNC" : "");
	return 0;
}

bool files_owner_wanted(const Crf__Files__Fd *e)
{
	return e->owner || e->has_signal || (!e->has_same_as && (e->flags & O_ASYNC));
}

int files_owner_set(int pid, const Crf__Files__Fd *e)
{
	struct f_owner_ex ex;
	int fl;

	if (e->owner) {
		ex.type = e->owner->type;
		ex.pid = e->owner->pid;
		if (ex.pid <= 0 || fcntl(e->fd, F_SETOWN_EX, &ex) < 0)
			return crf_error_errno(ex.pid <= 0 ? EBADMSG : errno,
					       "pid %d: fd %d (%s): F_SETOWN_EX to %d (type %d)",
					       pid, e->fd, e->path, ex.pid, ex.type);
	}
	if (e->has_signal && fcntl(e->fd, F_SETSIG, e->signal) < 0)
		return crf_error_errno(errno, "pid %d: fd %d (%s): F_SETSIG %d", pid, e->fd,
				       e->path, e->signal);
	if (e->has_same_as || !(e->flags & O_ASYNC))
		return 0;
	fl = fcntl(e->fd, F_GETFL);
	if (fl < 0 || fcntl(e->fd, F_SETFL, fl & ~O_ASYNC) < 0 ||
	    fcntl(e->fd, F_SETFL, fl | O_ASYNC) < 0)
		return crf_error_errno(errno, "pid %d: fd %d (%s): O_ASYNC", pid, e->fd, e->path);
	return 0;
}
