// SPDX-License-Identifier: GPL-2.0-only
/*
 * restore-task: reopen the fds of files-PID.img inside the forked task and
 * hand them to the core (crf_rst_keep_fd), which installs them at their
 * numbers once crf's own fds are out of the way.  The plugin keeps no fd
 * of its own on them: a task with 10 000 fds costs 10 000 fds here.
 *
 * A file is reopened by its path with its saved flags (O_PATH ones with
 * O_PATH), never created, and must be the file of the dump: a regular
 * file with another device or inode, or that changed in a way the
 * --file-validation rule does not allow (policy.c), is refused, naming
 * the path and the change.  fds 0-2 are restored like the others.  A
 * dup is a copy of the fd it shares its description with, so one offset
 * moves for both; a description shared with other tasks is a copy of the
 * one crf's top process made for the tree in restore-prepare (shared.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/image.h>
#include <crf/restore.h>

#include "anonfd.h"
#include "epoll.h"
#include "files.h"
#include "files.pb-c.h"
#include "tty.h"
#include "unlinked.h"

/* The flags only open() itself looks at, or that must not apply again. */
#define OPEN_ONLY (O_CREAT | O_EXCL | O_TRUNC | O_NOCTTY | O_CLOEXEC)

/*
 * The fds opened so far, by saved fd number (dups too, for epoll's
 * targets), and the epoll records, registered once all are open.  The fds
 * are the ones handed to the core with crf_rst_keep_fd(), which owns them
 * and keeps them open until rst_exec(), after this hook: one fd per
 * program fd, so that a task may have as many as RLIMIT_NOFILE allows.
 * @sorted: the numbers came in ascending order (the dump writes them so),
 * and a dup's original is found by binary search.
 */
struct opened {
	struct files_opened_fd *v;
	size_t n, cap;
	bool sorted;
	const Crf__Files__Fd **eps;
	size_t n_eps;
};

static void opened_free(struct opened *o)
{
	free(o->v);
	for (size_t i = 0; i < o->n_eps; i++)
		crf__files__fd__free_unpacked((Crf__Files__Fd *)o->eps[i], NULL);
	free(o->eps);
}

static int opened_find(const struct opened *o, int number)
{
	size_t lo = 0, hi = o->n;

	if (!o->sorted) {
		for (size_t i = 0; i < o->n; i++)
			if (o->v[i].number == number)
				return o->v[i].fd;
		return -1;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (o->v[mid].number == number)
			return o->v[mid].fd;
		if (o->v[mid].number < number)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/*
 * A refusal of check_same(): it names the fd, the path and what changed
 * (not as ESTALE, whose text would blame a file handle).
 */
static int changed(const Crf__Files__Fd *e, const char *what)
{
	crf_error("fd %d: %s changed since the dump: %s", e->fd, e->path, what);
	return -ENOTRECOVERABLE;
}

/*
 * The file reopened for @e must be the dump's: a regular file the same
 * inode, changed only as the --file-validation rule allows (policy.c).
 */
static int check_same(struct crf_ctx *ctx, const Crf__Files__Fd *e, int fd)
{
	const struct files_tree *tree = crf_ctx_priv(ctx);
	struct files_file_id was, is;
	const char *why;
	char buf[160];
	struct stat st;

	if (fstat(fd, &st) < 0)
		return crf_error_errno(errno, "fd %d: %s", e->fd, e->path);
	if ((st.st_mode & S_IFMT) != (e->mode & S_IFMT) || (e->has_rdev && st.st_rdev != e->rdev))
		return changed(e, "it is another kind of file, or another device");
	if (!S_ISREG(st.st_mode))
		return 0;
	if (!e->has_dev || !e->has_inode || !e->has_size)
		return crf_error_errno(EBADMSG, "fd %d: %s: the image lacks its identity", e->fd,
				       e->path);
	was = (struct files_file_id){e->dev, e->inode, e->size, e->mtime_sec, e->mtime_nsec};
	is = (struct files_file_id){st.st_dev, st.st_ino, (uint64_t)st.st_size, st.st_mtim.tv_sec,
				    (uint32_t)st.st_mtim.tv_nsec};
	/* Images without an mtime are compared by size alone. */
	if (!e->has_mtime_sec || !e->has_mtime_nsec) {
		is.mtime_sec = was.mtime_sec;
		is.mtime_nsec = was.mtime_nsec;
	}
	why = files_change_refusal(&was, &is, e->flags,
				   files_ext_validation(tree ? tree->ext : NULL), buf, sizeof(buf));
	return why ? changed(e, why) : 0;
}

/*
 * The flags to reopen @e's path with.  O_PATH honours only O_NOFOLLOW and
 * O_DIRECTORY.  A file made with O_TMPFILE and linked since keeps
 * O_TMPFILE's bits in its flags, which open() would take for a new
 * O_TMPFILE file in a directory: it is reopened as the file it is.
 */
static int reopen_flags(const Crf__Files__Fd *e)
{
	unsigned int fl = e->flags & ~(unsigned int)OPEN_ONLY;

	if (fl & O_PATH)
		fl &= O_PATH | O_NOFOLLOW | O_DIRECTORY;
	if (fl & FILES_O_TMPFILE_BIT)
		fl &= ~(unsigned int)(FILES_O_TMPFILE_BIT | O_DIRECTORY);
	if (S_ISDIR(e->mode))
		fl |= O_DIRECTORY;
	return (int)fl | O_CLOEXEC | O_NOCTTY;
}

int files_regfile_reopen(struct crf_ctx *ctx, const Crf__Files__Fd *e)
{
	_cleanup_close_ int fd = -1;
	int r;

	if (e->unlinked)
		return crf_error_errno(EBADMSG, "fd %d: %s: an unlinked file has no path to reopen",
				       e->fd, e->path);
	fd = open(e->path, reopen_flags(e));
	if (fd < 0)
		return crf_error_errno(errno, "fd %d: open %s", e->fd, e->path);
	r = check_same(ctx, e, fd);
	if (r == 0 && e->pos && !(e->flags & O_PATH) && lseek(fd, (off_t)e->pos, SEEK_SET) < 0)
		r = crf_error_errno(errno, "fd %d: %s: seek to %" PRIu64, e->fd, e->path, e->pos);
	if (r < 0)
		return r;
	return TAKE_FD(fd);
}

/* A new fd (O_CLOEXEC) on the description of @e, which no earlier fd of the task has. */
static int open_desc(struct crf_ctx *ctx, const Crf__Files__Fd *e)
{
	int fd;

	if (e->has_same_pid) {
		fd = files_shared_dup(ctx, e->same_pid, e->same_as);
		if (fd == -ENOENT)
			return crf_error_errno(EBADMSG,
					       "fd %d: shares fd %d of pid %d, which is "
					       "not in shared-fds.img",
					       e->fd, e->same_as, e->same_pid);
		return fd;
	}
	fd = files_shared_dup(ctx, (int)crf_ctx_pid(ctx), e->fd);
	if (fd != -ENOENT)
		return fd;
	/* A description of its own: made by the handler of the kind it was dumped as. */
	return files_open_by_kind(ctx, e, (int)crf_ctx_pid(ctx));
}

int files_stdio_reopen(const Crf__Files__Fd *e)
{
	int fd;

	if (e->fd < 0 || e->fd > 2)
		return crf_error_errno(EBADMSG, "fd %d: --inherit-stdio for an fd above 2", e->fd);
	/* The task's fds 0-2 are still crf restore's, inherited when it was forked. */
	fd = fcntl(e->fd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return crf_error_errno(errno,
				       "fd %d (%s at the dump): --inherit-stdio: crf restore "
				       "has no fd %d",
				       e->fd, e->path, e->fd);
	return fd;
}

static int restore_one(struct crf_ctx *ctx, struct opened *o, const Crf__Files__Fd *e)
{
	size_t cap = o->cap ? 2 * o->cap : 64;
	void *v;
	int fd, r;

	if (o->n == o->cap) {
		v = reallocarray(o->v, cap, sizeof(*o->v));
		if (!v)
			return crf_error_errno(ENOMEM, "fd %d", e->fd);
		o->v = v;
		o->cap = cap;
	}
	if (e->fd < 0 || !e->path || !e->path[0])
		return crf_error_errno(EBADMSG, "files image: bad record for fd %d", e->fd);
	if (e->has_same_as && !e->has_same_pid) {
		fd = opened_find(o, e->same_as);
		if (fd < 0)
			return crf_error_errno(EBADMSG,
					       "fd %d: shares fd %d, which is not saved before",
					       e->fd, e->same_as);
		fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0)
			return crf_error_errno(errno, "fd %d: %s", e->fd, e->path);
	} else {
		fd = open_desc(ctx, e);
		if (fd < 0)
			return fd;
	}
	/* The core owns @fd from here on, even when it refuses it. */
	r = crf_rst_keep_fd(ctx, fd, e->fd, e->cloexec);
	if (r < 0)
		return r;
	if (o->n && o->v[o->n - 1].number >= (int)e->fd)
		o->sorted = false;
	o->v[o->n].number = e->fd;
	o->v[o->n++].fd = fd;
	return 0;
}

/* Keep epoll record @e for files_epoll_register(); 0, or -ENOMEM (not logged). */
static int keep_epoll(struct opened *o, const Crf__Files__Fd *e)
{
	void *v = reallocarray(o->eps, o->n_eps + 1, sizeof(*o->eps));

	if (!v)
		return -ENOMEM;
	o->eps = v;
	o->eps[o->n_eps++] = e;
	return 0;
}

/*
 * A dump without external.img saved fds 0-2 only when they were terminals:
 * with --inherit-stdio the others are crf restore's own, as they were then
 * (one crf restore lacks stays closed in the program too).
 */
static int old_stdio(struct crf_ctx *ctx, const struct opened *o)
{
	const struct files_tree *tree = crf_ctx_priv(ctx);
	int r = 0;

	if (!tree || !files_ext_old_dump(tree->ext))
		return 0;
	for (int n = 0; r == 0 && n <= 2; n++) {
		int fd = opened_find(o, n) < 0 ? fcntl(n, F_DUPFD_CLOEXEC, 3) : -1;

		if (fd >= 0)
			r = crf_rst_keep_fd(ctx, fd, n, false);
	}
	return r;
}

int files_restore_task(struct crf_ctx *ctx)
{
	struct opened o = {.sorted = true};
	struct crf_img *img;
	Crf__Files__Fd *e;
	char name[64];
	int r;

	snprintf(name, sizeof(name), "files-%d.img", (int)crf_ctx_pid(ctx));
	r = crf_img_open(crf_ctx_images(ctx), name, &crf__files__fd__descriptor, &img);
	if (r < 0)
		return r;
	while ((r = crf_img_read(img, (ProtobufCMessage **)&e)) > 0) {
		r = restore_one(ctx, &o, e);
		if (r >= 0 && e->epoll) {
			if (keep_epoll(&o, e) == 0)
				continue;
			r = crf_error_errno(ENOMEM, "fd %d: epoll", e->fd);
		}
		crf__files__fd__free_unpacked(e, NULL);
		if (r < 0)
			break;
	}
	if (r == 0)
		r = old_stdio(ctx, &o);
	if (r == 0)
		r = files_epoll_register(o.eps, o.n_eps, o.v, o.n);
	if (r == 0)
		r = files_tty_restore_task(ctx);
	opened_free(&o);
	crf_img_close(img);
	return r < 0 ? r : files_fdattr_restore_task(ctx);
}
