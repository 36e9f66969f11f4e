// SPDX-License-Identifier: GPL-2.0-only
/*
 * Restore of eventfd, timerfd, signalfd, memfd and pidfd fds: each object
 * is created anew with the state saved in its record, inside the restored
 * task (so that a signalfd, a pidfd or a timer belongs to it), and handed
 * to restore.c, which puts it at its number like a reopened file.  A
 * memfd is the exception: it may be mapped too, so it is made once for the
 * restore through crf_rst_object and each fd opens it again.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/restore.h>

#include "../common/memfd.h"
#include "anonfd.h"
#include "files.h"
#include "files.pb-c.h"

/* <linux/timerfd.h> has it, but clashes with <fcntl.h>. */
#ifndef TFD_IOC_SET_TICKS
#define TFD_IOC_SET_TICKS _IOW('T', 0, uint64_t)
#endif

/* The status flags fcntl(F_SETFL) can give back. */
#define SETFL_MASK (O_APPEND | O_NONBLOCK | O_NOATIME)

bool files_anon_is(const Crf__Files__Fd *e)
{
	return e->eventfd || e->timerfd || e->signalfd || e->memfd || e->pidfd;
}

static int create_eventfd(const Crf__Files__Fd *e)
{
	uint64_t count = e->eventfd->count;
	_cleanup_close_ int fd =
		eventfd(0, EFD_CLOEXEC | (e->eventfd->semaphore ? EFD_SEMAPHORE : 0));

	if (fd < 0)
		return crf_error_errno(errno, "fd %d: eventfd", e->fd);
	/* eventfd() takes an int; a write adds any 64-bit count. */
	if (count && write(fd, &count, sizeof(count)) != sizeof(count))
		return crf_error_errno(errno, "fd %d: eventfd count %llu", e->fd,
				       (unsigned long long)count);
	return TAKE_FD(fd);
}

static struct timespec ns_ts(uint64_t ns)
{
	return (struct timespec){.tv_sec = (time_t)(ns / 1000000000u),
				 .tv_nsec = (long)(ns % 1000000000u)};
}

/*
 * The saved time left is relative; an absolute timer gets it back as an
 * absolute time again, so that TFD_TIMER_CANCEL_ON_SET still applies.
 * The unread ticks go back with TFD_IOC_SET_TICKS (settime zeroes them).
 */
static int arm_timerfd(const Crf__Files__Fd *e, int fd)
{
	const Crf__Files__TimerFd *t = e->timerfd;
	struct itimerspec its = {.it_interval = ns_ts(t->interval_ns)};
	uint64_t value = t->value_ns, ticks = t->ticks;
	int flags = 0;

	/* Due right at the dump: 0 would disarm it. */
	if (!value && t->interval_ns)
		value = 1;
	if (value && (t->settime_flags & TFD_TIMER_ABSTIME)) {
		struct timespec now;

		if (clock_gettime(t->clockid, &now) < 0)
			return crf_error_errno(errno, "fd %d: clock %d", e->fd, t->clockid);
		value += (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
		flags = (int)(t->settime_flags & (TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET));
	}
	its.it_value = ns_ts(value);
	if (timerfd_settime(fd, flags, &its, NULL) < 0)
		return crf_error_errno(errno, "fd %d: timerfd_settime", e->fd);
	if (ticks && ioctl(fd, TFD_IOC_SET_TICKS, &ticks) < 0)
		return crf_error_errno(errno, "fd %d: TFD_IOC_SET_TICKS %llu", e->fd,
				       (unsigned long long)ticks);
	return 0;
}

static int create_timerfd(const Crf__Files__Fd *e)
{
	_cleanup_close_ int fd = timerfd_create(e->timerfd->clockid, TFD_CLOEXEC);
	int r;

	if (fd < 0)
		return crf_error_errno(errno, "fd %d: timerfd_create clock %d", e->fd,
				       e->timerfd->clockid);
	r = arm_timerfd(e, fd);
	if (r < 0)
		return r;
	return TAKE_FD(fd);
}

static int create_signalfd(const Crf__Files__Fd *e)
{
	sigset_t mask;
	int fd;

	sigemptyset(&mask);
	for (int sig = 1; sig <= 64; sig++)
		if (e->signalfd->sigmask & (1ull << (sig - 1)))
			sigaddset(&mask, sig);
	fd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (fd < 0)
		return crf_error_errno(errno, "fd %d: signalfd", e->fd);
	return fd;
}

static int fill_memfd(const Crf__Files__Fd *e, int fd)
{
	const Crf__Files__MemFd *m = e->memfd;
	size_t done = 0;

	if (m->data.len != m->size)
		return crf_error_errno(EBADMSG, "fd %d: memfd %s: %zu bytes for size %llu", e->fd,
				       m->name, m->data.len, (unsigned long long)m->size);
	while (done < m->data.len) {
		ssize_t n = pwrite(fd, m->data.data + done, m->data.len - done, (off_t)done);

		if (n <= 0)
			return crf_error_errno(n < 0 ? errno : EIO, "fd %d: write memfd %s", e->fd,
					       m->name);
		done += (size_t)n;
	}
	if (ftruncate(fd, (off_t)m->size) < 0)
		return crf_error_errno(errno, "fd %d: memfd %s: size %llu", e->fd, m->name,
				       (unsigned long long)m->size);
	/* Seals last: F_SEAL_WRITE or F_SEAL_GROW would stop the filling. */
	if (m->seals && fcntl(fd, F_ADD_SEALS, (int)m->seals) < 0)
		return crf_error_errno(errno, "fd %d: memfd %s: seals %#x", e->fd, m->name,
				       m->seals);
	return 0;
}

/*
 * The memfd of record @arg, with its mode, exec rights, content and seals
 * (crf_rst_object's create): as the mem plugin makes one it maps.
 */
static int make_memfd(void *arg)
{
	const Crf__Files__Fd *e = arg;
	const Crf__Files__MemFd *m = e->memfd;
	_cleanup_close_ int fd = common_memfd_create(m->name, m->has_mode, m->mode, m->seals);
	int r;

	if (fd < 0)
		return fd;
	r = fill_memfd(e, fd);
	if (r < 0)
		return r;
	return TAKE_FD(fd);
}

/*
 * The fd's own description on memfd @fd (which it closes), with the
 * record's access mode: a new open of it through /proc/self/fd.  One made
 * here and held by nobody else serves as it is when it is O_RDWR; one of
 * crf_rst_object shares its description with the core's copy and with
 * every other user of the object, so it is always opened again.
 */
static int reopen_memfd(const Crf__Files__Fd *e, int fd, bool shared)
{
	char path[64];
	int copy;

	if (!shared && (e->flags & O_ACCMODE) == O_RDWR)
		return fd;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	copy = open(path, (int)(e->flags & O_ACCMODE) | O_CLOEXEC);
	if (copy < 0)
		copy = crf_error_errno(errno, "fd %d: reopen memfd %s", e->fd, e->memfd->name);
	close(fd);
	return copy;
}

/* @fd (closed on failure) with the record's mode, where its maker did not give it. */
static int fix_mode(const Crf__Files__Fd *e, int fd)
{
	const Crf__Files__MemFd *m = e->memfd;
	struct stat st;
	int r;

	if (fstat(fd, &st) == 0 && (st.st_mode & 07777) == m->mode)
		return fd;
	if (fchmod(fd, m->mode & 07777) == 0)
		return fd;
	r = crf_error_errno(errno, "fd %d: memfd %s: mode %04o", e->fd, m->name, m->mode & 07777);
	close(fd);
	return r;
}

/*
 * A memfd saved with its dev and inode may also be mapped by the tree, and
 * the mem plugin restores the mapping: both go through crf_rst_object under
 * one key, so that a write through the fd is seen in the mapping.  The one
 * who comes first fills and seals it (the files plugin's restore-prepare for
 * a description shared between tasks; else the mem plugin's restore-prepare,
 * when the memfd is mapped; else this task), with its mode.  One made from
 * an older image of the other plugin, without it, gets it here.
 */
static int create_memfd(struct crf_ctx *ctx, const Crf__Files__Fd *e)
{
	const Crf__Files__MemFd *m = e->memfd;
	bool keyed = m->has_dev && m->has_inode, created = true;
	char key[64];
	int fd;

	if (keyed) {
		snprintf(key, sizeof(key), "memfd:%llu:%llu", (unsigned long long)m->dev,
			 (unsigned long long)m->inode);
		fd = crf_rst_object(ctx, key, make_memfd, (void *)e, &created);
	} else {
		fd = make_memfd((void *)e);
	}
	if (fd < 0)
		return fd;
	if (keyed)
		crf_debug("fd %d: memfd %s (%s): %s", e->fd, m->name, key,
			  created ? "made" : "one made before");
	fd = reopen_memfd(e, fd, keyed);
	if (fd >= 0 && m->has_mode)
		fd = fix_mode(e, fd);
	return fd;
}

/*
 * The pid is that of a task of the restored tree, or of a process that was
 * alive at the dump and still is; nothing tells a reused pid apart.
 */
static int create_pidfd(const Crf__Files__Fd *e)
{
	int fd = (int)syscall(SYS_pidfd_open, e->pidfd->pid, e->flags & (O_NONBLOCK | O_EXCL));

	if (fd < 0)
		return crf_error_errno(errno,
				       "fd %d: pidfd_open %d: not in the restored tree nor alive",
				       e->fd, e->pidfd->pid);
	return fd;
}

int files_anon_create(struct crf_ctx *ctx, const Crf__Files__Fd *e)
{
	_cleanup_close_ int fd = -1;

	if (e->eventfd)
		fd = create_eventfd(e);
	else if (e->timerfd)
		fd = create_timerfd(e);
	else if (e->signalfd)
		fd = create_signalfd(e);
	else if (e->memfd)
		fd = create_memfd(ctx, e);
	else
		fd = create_pidfd(e);
	if (fd < 0)
		return fd;
	if (e->memfd && e->pos && lseek(fd, (off_t)e->pos, SEEK_SET) < 0)
		return crf_error_errno(errno, "fd %d: memfd seek", e->fd);
	if (!e->pidfd && fcntl(fd, F_SETFL, (int)(e->flags & SETFL_MASK)) < 0)
		return crf_error_errno(errno, "fd %d: flags %#o", e->fd, e->flags);
	return TAKE_FD(fd);
}
