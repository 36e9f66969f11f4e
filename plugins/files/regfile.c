// SPDX-License-Identifier: GPL-2.0-only
/*
 * Dump of the fd kinds reopened by path: regular files, directories and
 * the character devices that hold no state (/dev/null, /dev/zero,
 * /dev/random, /dev/urandom).  Each fd is one Fd record of files-PID.img:
 * its number and close-on-exec flag, and its open file description's
 * flags, position and path; "same as fd M" (of pid P) when kcmp says the
 * description is that of an fd saved before (shared.c).
 *
 * O_PATH fds are saved the same way (their flags say O_PATH; they have no
 * offset), symlinks included when held with O_PATH|O_NOFOLLOW, and so are
 * O_TMPFILE files: one never linked has a "/dir/#INODE (deleted)" link and
 * no name, so its content is saved like an unlinked file's (unlinked.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "files.pb-c.h"
#include "unlinked.h"

bool files_is_plain_chr(const struct crf_object *obj)
{
	static const char *const devs[] = {"chr:1:3", "chr:1:5", "chr:1:8", "chr:1:9"};

	if (obj->cls != CRF_OBJ_FD || !obj->kind)
		return false;
	for (size_t i = 0; i < sizeof(devs) / sizeof(devs[0]); i++)
		if (!strcmp(obj->kind, devs[i]))
			return true;
	return false;
}

/*
 * What cannot be reopened by its path yet.  An O_PATH fd is reopened with
 * O_PATH, but one of an unlinked file has no path, and its content cannot
 * be read through it.  A symlink is only ever held with O_PATH|O_NOFOLLOW.
 */
static int refuse(const struct files_dump *d, int fd, const char *path, unsigned int flags,
		  const char *kind)
{
	bool deleted = files_unlinked_path(path);
	const char *why = NULL;

	if (deleted && (flags & O_PATH))
		why = "an O_PATH fd of an unlinked file";
	else if (deleted && strcmp(kind, "file"))
		why = "an unlinked file, not a regular one";
	else if (!strcmp(kind, "symlink") && !(flags & O_PATH))
		why = "a symlink not opened with O_PATH";
	else if (path[0] != '/')
		why = "not reachable by a path";
	if (!why)
		return 0;
	return crf_error_errno(ENOTSUP, "pid %d: fd %d (%s) is %s, which crf cannot save yet",
			       d->pid, fd, path, why);
}

/*
 * Facts about the file itself, from the walk's stat; the writes the
 * program made must be on disk, since the image keeps only the offset: its
 * filesystem is noted for dump-finish's syncfs (sync.c).
 */
static int describe(struct files_dump *d, int fd, Crf__Files__Fd *e, bool same)
{
	const struct stat *st;
	int copy, r;

	r = files_cur_stat(d, &st);
	if (r < 0)
		return r;
	if (S_ISREG(st->st_mode) && !same && (e->flags & O_ACCMODE) != O_RDONLY) {
		copy = files_cur_copy(d);
		if (copy < 0)
			return copy;
		r = files_sync_note(d, copy, st->st_dev, e->path);
		if (r < 0)
			return r;
	}
	e->mode = st->st_mode;
	if (S_ISCHR(st->st_mode)) {
		e->has_rdev = true;
		e->rdev = st->st_rdev;
	}
	if (!S_ISREG(st->st_mode))
		return 0;
	e->has_dev = e->has_inode = e->has_size = e->has_mtime_sec = e->has_mtime_nsec = true;
	e->dev = st->st_dev;
	e->inode = st->st_ino;
	e->size = (uint64_t)st->st_size;
	e->mtime_sec = st->st_mtim.tv_sec;
	e->mtime_nsec = (uint32_t)st->st_mtim.tv_nsec;
	return 0;
}

int files_regfile_dump(struct crf_ctx *ctx, const struct crf_object *obj)
{
	Crf__Files__Fd e = CRF__FILES__FD__INIT;
	struct files_dump *d;
	int fd = obj->id, same, r;

	r = files_fd_begin(ctx, obj, &e, &d);
	if (r == 0)
		r = refuse(d, fd, e.path, e.flags, obj->kind ? obj->kind : "?");
	same = r < 0 ? r : files_desc_find(d, fd, &e);
	if (same < 0)
		return same;
	r = describe(d, fd, &e, same);
	if (r == 0 && !same && S_ISREG(e.mode) && files_unlinked_path(e.path))
		r = files_unlinked_save(ctx, d, fd, &e);
	if (r == 0 && !same)
		r = files_desc_remember(d, fd);
	if (r == 0)
		r = files_fd_write(d, &e);
	files_unlinked_release(&e);
	if (r == 0)
		crf_debug("pid %d: fd %d: %s, flags %#o, pos %llu%s", d->pid, fd, e.path, e.flags,
			  (unsigned long long)e.pos, same ? " (shared)" : "");
	return r;
}
