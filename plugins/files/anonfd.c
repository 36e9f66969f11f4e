// SPDX-License-Identifier: GPL-2.0-only
/*
 * Dump of eventfd, timerfd, signalfd, memfd and pidfd fds: one Fd record
 * of files-PID.img each, with the state of the object in the field of its
 * kind.  The object is read from its fdinfo and, where fdinfo does not
 * tell, from a copy of the fd taken with pidfd_getfd.
 *
 * A dup, within the task or in another task of the tree, is recorded as
 * "same as fd M" (of pid P), like a regular file's (shared.c).  A pidfd
 * shared between tasks is saved once per task (files_anon_dump() says why).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <linux/magic.h>

#include "anonfd.h"
#include "fdinfo.h"
#include "files.h"
#include "files.pb-c.h"

/* A memfd's content goes into its record; larger ones are refused. */
#define MEMFD_MAX (32u << 20)

static uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

/*
 * A periodic timer that expired is re-armed by the kernel only when it is
 * read or asked (timerfd_gettime), and until then fdinfo shows it_value 0.
 * So ask first, through a copy: that re-arms it and adds the missed
 * intervals to ticks, as the program's next read would; then read ticks.
 */
static int dump_timerfd(const struct files_dump *d, int fd, int copy, Crf__Files__TimerFd *t)
{
	struct files_anon_info ai;
	struct itimerspec its;
	char text[4096];
	int r;

	if (timerfd_gettime(copy, &its) < 0)
		return crf_error_errno(errno, "pid %d: timerfd_gettime of fd %d", d->pid, fd);
	r = files_fdinfo_read_text(d->pid, fd, text, sizeof(text));
	if (r == 0)
		r = files_anon_parse("timerfd", text, &ai);
	if (r < 0)
		return crf_error_errno(-r, "pid %d: fdinfo of timerfd %d", d->pid, fd);
	t->clockid = ai.clockid;
	t->settime_flags = ai.settime_flags;
	t->ticks = ai.ticks;
	t->value_ns = ts_ns(&its.it_value);
	t->interval_ns = ts_ns(&its.it_interval);
	return 0;
}

/* The whole content of a memfd, read through the copy (no offset moved). */
static int dump_memfd(const struct files_dump *d, const struct crf_object *obj, int copy,
		      Crf__Files__MemFd *m, char *name, size_t name_size)
{
	int fd = obj->id, seals = fcntl(copy, F_GET_SEALS);
	struct statfs fs;
	struct stat st;
	size_t done = 0;

	if (!files_memfd_name(obj->desc, name, name_size))
		return crf_error_errno(ENOTSUP, "pid %d: fd %d: %s is not a memfd crf can name",
				       d->pid, fd, obj->desc);
	if (seals < 0 || fstat(copy, &st) < 0 || fstatfs(copy, &fs) < 0)
		return crf_error_errno(errno, "pid %d: memfd %d (%s)", d->pid, fd, obj->desc);
	/* Its pages are huge pages of a pool: a shmem memfd would not be it. */
	if (fs.f_type == HUGETLBFS_MAGIC)
		return crf_error_errno(ENOTSUP,
				       "pid %d: fd %d (%s) is a hugetlbfs memfd (MFD_HUGETLB), "
				       "which crf does not restore",
				       d->pid, fd, obj->desc);
	if ((uint64_t)st.st_size > MEMFD_MAX)
		return crf_error_errno(
			EFBIG, "pid %d: memfd %d (%s) holds %lld bytes, over the %u crf saves",
			d->pid, fd, obj->desc, (long long)st.st_size, MEMFD_MAX);
	m->name = name;
	m->has_dev = m->has_inode = true;
	m->dev = (uint64_t)st.st_dev;
	m->inode = (uint64_t)st.st_ino;
	m->seals = (uint32_t)seals;
	m->has_mode = true;
	m->mode = (uint32_t)st.st_mode & 07777;
	m->size = (uint64_t)st.st_size;
	m->data.data = malloc(m->size ? m->size : 1);
	if (!m->data.data)
		return crf_error_errno(ENOMEM, "pid %d: memfd %d", d->pid, fd);
	while (done < m->size) {
		ssize_t n = pread(copy, m->data.data + done, m->size - done, (off_t)done);

		if (n <= 0)
			return crf_error_errno(n < 0 ? errno : EIO, "pid %d: read memfd %d (%s)",
					       d->pid, fd, obj->desc);
		done += (size_t)n;
	}
	m->data.len = m->size;
	return 0;
}

/* The pid of a pidfd's process as the task itself numbers it. */
static int dump_pidfd(const struct files_dump *d, int fd, const char *text, Crf__Files__PidFd *p)
{
	int own[32], its[32], n_own, n_its, r;
	struct files_anon_info ai;
	char path[64], status[4096];

	r = files_anon_parse("pidfd", text, &ai);
	if (r < 0)
		return crf_error_errno(-r, "pid %d: fdinfo of pidfd %d", d->pid, fd);
	if (ai.pid < 0)
		return crf_error_errno(ESRCH,
				       "pid %d: fd %d is a pidfd of a process that has exited, "
				       "which crf cannot restore",
				       d->pid, fd);
	snprintf(path, sizeof(path), "/proc/%d/status", d->pid);
	r = files_proc_read(path, status, sizeof(status));
	n_own = r < 0 ? r : files_anon_parse_nspid(status, own, 32);
	n_its = files_anon_parse_nspid(text, its, 32);
	if (n_own < 0 || n_its < 0)
		return crf_error_errno(EBADMSG, "pid %d: NSpid of itself or of pidfd %d", d->pid,
				       fd);
	if (n_its < n_own)
		return crf_error_errno(
			ENOTSUP,
			"pid %d: fd %d is a pidfd of pid %d, outside the task's pid namespace",
			d->pid, fd, ai.pid);
	p->pid = its[n_own - 1];
	return 0;
}

/* One message of each kind, for the record of one fd. */
struct anon_kinds {
	Crf__Files__EventFd ev;
	Crf__Files__TimerFd tm;
	Crf__Files__SignalFd sig;
	Crf__Files__MemFd mem;
	Crf__Files__PidFd pid;
};

#define ANON_KINDS_INIT                                                                            \
	{                                                                                          \
		CRF__FILES__EVENT_FD__INIT, CRF__FILES__TIMER_FD__INIT,                            \
			CRF__FILES__SIGNAL_FD__INIT, CRF__FILES__MEM_FD__INIT,                     \
			CRF__FILES__PID_FD__INIT                                                   \
	}

/* Fill the field of @obj's kind in @e. */
static int dump_kind(struct files_dump *d, const struct crf_object *obj, Crf__Files__Fd *e,
		     char *name, size_t name_size)
{
	const char *k = obj->kind, *text;
	struct files_anon_info ai;
	int copy, r;

	/* Read already by files_fd_begin(). */
	files_cur_fdinfo(d, &text);
	if (!strcmp(k, "pidfd"))
		return dump_pidfd(d, obj->id, text, e->pidfd);
	if (!strcmp(k, "eventfd") || !strcmp(k, "signalfd")) {
		r = files_anon_parse(k, text, &ai);
		if (r < 0)
			return crf_error_errno(-r, "pid %d: fdinfo of %s %d", d->pid, k, obj->id);
		if (e->eventfd) {
			e->eventfd->count = ai.count;
			e->eventfd->semaphore = ai.semaphore;
		} else {
			e->signalfd->sigmask = ai.sigmask;
		}
		return 0;
	}
	copy = files_cur_copy(d);
	if (copy < 0)
		return copy;
	if (!strcmp(k, "timerfd"))
		return dump_timerfd(d, obj->id, copy, e->timerfd);
	return dump_memfd(d, obj, copy, e->memfd, name, name_size);
}

/* Point @e at the kind's message among @k's, by the kind's name. */
static void pick_kind(Crf__Files__Fd *e, const char *kind, struct anon_kinds *k)
{
	if (!strcmp(kind, "eventfd"))
		e->eventfd = &k->ev;
	else if (!strcmp(kind, "timerfd"))
		e->timerfd = &k->tm;
	else if (!strcmp(kind, "signalfd"))
		e->signalfd = &k->sig;
	else if (!strcmp(kind, "memfd"))
		e->memfd = &k->mem;
	else
		e->pidfd = &k->pid;
}

int files_anon_dump(struct crf_ctx *ctx, const struct crf_object *obj)
{
	Crf__Files__Fd e = CRF__FILES__FD__INIT;
	struct anon_kinds k = ANON_KINDS_INIT;
	struct files_dump *d;
	char name[256];
	int fd = obj->id, same, r;
	bool own = false;

	r = files_fd_begin(ctx, obj, &e, &d);
	if (r < 0)
		return r;
	same = files_desc_find(d, fd, &e);
	if (same < 0)
		return same;
	/*
	 * A description shared between tasks is made once, in crf's top
	 * process before it forks the tree; a pidfd can only be opened once
	 * its process exists.  So each task that shares one gets one of its
	 * own, with the same flags: all a pidfd's description holds (only a
	 * later F_SETFL by one is not seen by the other).
	 */
	if (same && e.has_same_pid && !strcmp(obj->kind, "pidfd")) {
		crf_debug("pid %d: pidfd %d shares fd %d of pid %d: restored as its own", d->pid,
			  fd, e.same_as, e.same_pid);
		files_desc_unshare(d, &e);
		same = 0;
		own = true;
	}
	if (!same) {
		pick_kind(&e, obj->kind, &k);
		r = dump_kind(d, obj, &e, name, sizeof(name));
		if (r == 0 && !own)
			r = files_desc_remember(d, fd);
	}
	if (r == 0)
		r = files_fd_write(d, &e);
	free(k.mem.data.data);
	if (r == 0)
		crf_debug("pid %d: fd %d: %s, flags %#o%s", d->pid, fd, obj->kind, e.flags,
			  same ? " (shared)" : "");
	return r;
}
