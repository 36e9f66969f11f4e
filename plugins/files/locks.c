// SPDX-License-Identifier: GPL-2.0-only
/*
 * File locks held by the tree: flock(2), OFD locks (F_OFD_SETLK) and POSIX
 * record locks (F_SETLK).
 *
 * fdinfo lists on each fd the locks of its file that its process (POSIX)
 * or its description (OFD, flock) owns, and only those taken through that
 * description: the kernel keeps the struct file a lock came through and
 * shows the lock there, on every fd of that description in every process
 * that holds one.  So a lock is saved once: an OFD lock or flock on the
 * record that holds the description's state, a POSIX lock on the first fd
 * of its task that shows it (a dup shows it too).  Blocked waiters are not
 * listed; their fcntl or flock restarts after the restore.  Leases,
 * delegations and mandatory locks are refused by name.
 *
 * At restore the locks are taken again in the task, once its fds are at
 * their numbers (fdattr.c): a POSIX lock belongs to the process and goes
 * away as soon as the process closes any fd of the file, which crf does
 * while it moves fds around.  An OFD lock or flock taken there through one
 * fd is the description's, as before, however many tasks share it.  A
 * file the task maps is not allowed a POSIX lock: the restorer closes the
 * fd it maps the file from, after the locks are taken.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>

#include <crf/cleanup.h>

#include "fdinfo.h"
#include "files.h"
#include "files.pb-c.h"

/* The POSIX locks saved so far for the task being dumped (a dup shows them again). */
struct files_locks {
	int pid;
	struct files_lock *v;
	size_t n;
};

void files_locks_free(struct files_locks *seen)
{
	if (!seen)
		return;
	free(seen->v);
	free(seen);
}

static bool same_lock(const struct files_lock *a, const struct files_lock *b)
{
	return a->major == b->major && a->minor == b->minor && a->ino == b->ino &&
	       a->start == b->start;
}

/* 1 when @l was saved for this task already, else 0 after noting it; or -ENOMEM. */
static int posix_seen(struct files_dump *d, const struct files_lock *l)
{
	struct files_locks *s = d->tree->locks;
	struct files_lock *v;

	if (!s && !(s = d->tree->locks = calloc(1, sizeof(*s))))
		return -ENOMEM;
	if (s->pid != d->pid)
		s->n = 0, s->pid = d->pid;
	for (size_t i = 0; i < s->n; i++)
		if (same_lock(&s->v[i], l))
			return 1;
	v = reallocarray(s->v, s->n + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	s->v = v;
	s->v[s->n++] = *l;
	return 0;
}

/* Whether the task maps the file of @l (then the restorer would drop a POSIX lock). */
static bool mapped(int pid, const struct files_lock *l)
{
	char path[64], line[512];
	_cleanup_fclose_ FILE *f = NULL;
	bool found = false;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned int major, minor;
		uint64_t ino;

		found = sscanf(line, "%*x-%*x %*s %*x %x:%x %" SCNu64, &major, &minor, &ino) == 3 &&
			ino == l->ino && major == l->major && minor == l->minor;
	}
	return found;
}

static const char *kind_name(enum files_lock_kind k)
{
	return k == FILES_LOCK_POSIX ? "POSIX" : k == FILES_LOCK_OFD ? "OFD" : "flock";
}

/* Whether the record @e is where lock @l is to be saved, or -errno (logged). */
static int save_here(struct files_dump *d, const Crf__Files__Fd *e, const struct files_lock *l)
{
	int r;

	if (l->kind != FILES_LOCK_POSIX)
		return !e->has_same_as;
	if (e->has_same_as && !e->has_same_pid)
		return 0;
	r = posix_seen(d, l);
	if (r < 0)
		return crf_error_errno(-r, "pid %d: fd %d: locks", d->pid, e->fd);
	if (r == 0 && mapped(d->pid, l))
		return crf_error_errno(ENOTSUP,
				       "pid %d: fd %d (%s): a POSIX lock on a file the process "
				       "also maps, which crf cannot restore yet",
				       d->pid, e->fd, e->path);
	return !r;
}

static int add(Crf__Files__Fd *e, const struct files_lock *l)
{
	_cleanup_free_ Crf__Files__FileLock *m = malloc(sizeof(*m));
	void *v = reallocarray(e->locks, e->n_locks + 1, sizeof(*e->locks));

	if (v)
		e->locks = v;
	if (!m || !v)
		return crf_error_errno(ENOMEM, "fd %d: locks", e->fd);
	crf__files__file_lock__init(m);
	m->kind = l->kind == FILES_LOCK_POSIX ? CRF__FILES__FILE_LOCK__KIND__POSIX
		  : l->kind == FILES_LOCK_OFD ? CRF__FILES__FILE_LOCK__KIND__OFD
					      : CRF__FILES__FILE_LOCK__KIND__FLOCK;
	m->write = l->write;
	if (l->kind != FILES_LOCK_FLOCK) {
		m->has_start = m->has_len = true;
		m->start = l->start;
		m->len = l->to_eof ? 0 : l->end - l->start + 1;
	}
	e->locks[e->n_locks++] = TAKE_PTR(m);
	return 0;
}

int files_locks_dump(struct files_dump *d, const char *text, Crf__Files__Fd *e)
{
	const char *cursor = text, *v, *what;
	struct files_lock l;
	char end[24];
	int r = 0;

	while (r >= 0 && (v = files_fdinfo_next(&cursor, "lock"))) {
		r = files_fdinfo_lock(v, &l, &what);
		if (r == -ENOTSUP)
			return crf_error_errno(ENOTSUP,
					       "pid %d: fd %d (%s) holds %s, which crf "
					       "cannot restore",
					       d->pid, e->fd, e->path, what);
		if (r < 0)
			return crf_error_errno(EBADMSG,
					       "pid %d: fdinfo of fd %d: bad lock line '%.*s'",
					       d->pid, e->fd, (int)strcspn(v, "\n"), v);
		if (r == 1)
			continue;
		r = save_here(d, e, &l);
		if (r <= 0)
			continue;
		r = add(e, &l);
		snprintf(end, sizeof(end), "%" PRIu64, l.end);
		crf_debug("pid %d: fd %d: %s %s lock, bytes %" PRIu64 " to %s", d->pid, e->fd,
			  l.write ? "write" : "read", kind_name(l.kind), l.start,
			  l.to_eof ? "EOF" : end);
	}
	return r < 0 ? r : 0;
}

void files_locks_release(Crf__Files__Fd *e)
{
	for (size_t i = 0; i < e->n_locks; i++)
		free(e->locks[i]);
	free(e->locks);
	e->locks = NULL;
	e->n_locks = 0;
}

/* "write POSIX lock on bytes 0-99", "read flock"... for messages. */
static void describe(const Crf__Files__FileLock *m, char *buf, size_t size)
{
	const char *type = m->write ? "write" : "read";

	if (m->kind == CRF__FILES__FILE_LOCK__KIND__FLOCK)
		snprintf(buf, size, "%s flock", type);
	else if (!m->len)
		snprintf(buf, size, "%s %s lock from byte %" PRIu64 " to the end", type,
			 m->kind == CRF__FILES__FILE_LOCK__KIND__OFD ? "OFD" : "POSIX", m->start);
	else
		snprintf(buf, size, "%s %s lock on bytes %" PRIu64 "-%" PRIu64, type,
			 m->kind == CRF__FILES__FILE_LOCK__KIND__OFD ? "OFD" : "POSIX", m->start,
			 m->start + m->len - 1);
}

static int take(int pid, const Crf__Files__Fd *e, const Crf__Files__FileLock *m)
{
	struct flock fl = {
		.l_type = m->write ? F_WRLCK : F_RDLCK,
		.l_whence = SEEK_SET,
		.l_start = (off_t)m->start,
		.l_len = (off_t)m->len,
	};
	char what[96];
	int r;

	if (m->start > INT64_MAX || m->len > INT64_MAX - m->start)
		return crf_error_errno(EBADMSG,
				       "pid %d: fd %d: a lock of %" PRIu64 " bytes at %" PRIu64,
				       pid, e->fd, m->len, m->start);
	describe(m, what, sizeof(what));
	if (m->kind == CRF__FILES__FILE_LOCK__KIND__FLOCK)
		r = flock(e->fd, (m->write ? LOCK_EX : LOCK_SH) | LOCK_NB);
	else
		r = fcntl(e->fd,
			  m->kind == CRF__FILES__FILE_LOCK__KIND__OFD ? F_OFD_SETLK : F_SETLK, &fl);
	if (r == 0)
		return 0;
	if (errno == EAGAIN || errno == EACCES)
		return crf_error_errno(errno,
				       "pid %d: fd %d (%s): its %s conflicts with a lock "
				       "another process holds now",
				       pid, e->fd, e->path, what);
	return crf_error_errno(errno, "pid %d: fd %d (%s): taking its %s", pid, e->fd, e->path,
			       what);
}

int files_locks_take(int pid, const Crf__Files__Fd *e)
{
	int r = 0;

	for (size_t i = 0; r == 0 && i < e->n_locks; i++)
		r = take(pid, e, e->locks[i]);
	return r;
}
