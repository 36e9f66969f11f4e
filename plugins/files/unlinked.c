// SPDX-License-Identifier: GPL-2.0-only
/*
 * Regular files opened and then unlinked, and files made with O_TMPFILE
 * and never linked.  No path leads to them, so their content is saved in a
 * blob image at the dump, and the restore makes a new file without a name
 * (O_TMPFILE) in the directory the file was in, so that the program still
 * holds a file without a name: one that can be linked again if it was an
 * O_TMPFILE file, one that cannot (O_TMPFILE | O_EXCL) if it was unlinked.
 *
 * An unlinked file's description was not opened with O_TMPFILE, so the
 * new file is reopened through /proc/self/fd (which, unlike a path, still
 * reaches an inode with no links) with the program's access mode and flags.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <crf/image.h>

#include "files.pb-c.h"
#include "unlinked.h"

#define DELETED	   " (deleted)"
#define COPY_CHUNK (1 << 20)
/* The flags only open() itself looks at, or that must not apply again. */
#define OPEN_ONLY (O_CREAT | O_EXCL | O_TRUNC | O_NOCTTY | O_CLOEXEC)
/* The status flags fcntl(F_SETFL) sets. */
#define SETFL_FLAGS (O_APPEND | O_NONBLOCK | O_NOATIME | O_DIRECT)

bool files_unlinked_path(const char *path)
{
	size_t len = strlen(path), n = strlen(DELETED);

	return path[0] == '/' && len > n && !strcmp(path + len - n, DELETED);
}

static void closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}

static void freep(void *p)
{
	free(*(void **)p);
}

/* Copy @size bytes of @fd into the new blob @name. */
static int save_content(struct crf_imgdir *dir, const char *name, int fd, uint64_t size)
{
	__attribute__((cleanup(freep))) char *buf = malloc(COPY_CHUNK);
	struct crf_img *blob;
	uint64_t off = 0;
	int r;

	if (!buf)
		return crf_error_errno(ENOMEM, "%s", name);
	r = crf_blob_create(dir, name, &blob);
	if (r < 0)
		return r;
	while (off < size) {
		size_t want = size - off < COPY_CHUNK ? (size_t)(size - off) : COPY_CHUNK;
		ssize_t n = pread(fd, buf, want, (off_t)off);

		if (n <= 0) {
			r = crf_error_errno(n < 0 ? errno : ENODATA, "%s: read at %" PRIu64, name,
					    off);
			break;
		}
		r = crf_blob_write(blob, buf, (size_t)n);
		if (r < 0)
			break;
		off += (uint64_t)n;
	}
	if (r < 0) {
		crf_img_abort(blob);
		return r;
	}
	return crf_img_close(blob);
}

/*
 * A write-only description cannot be read: reopen the file read-only
 * through /proc/self/fd, which still reaches it without a name.
 */
static int readable(const struct files_dump *d, int fd, int *copy)
{
	int flags = fcntl(*copy, F_GETFL), ro;
	char proc[64];

	if (flags < 0)
		return crf_error_errno(errno, "pid %d: fd %d: F_GETFL", d->pid, fd);
	if ((flags & O_ACCMODE) != O_WRONLY)
		return 0;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", *copy);
	ro = open(proc, O_RDONLY | O_CLOEXEC);
	if (ro < 0)
		return crf_error_errno(errno, "pid %d: fd %d: reopening it to read it", d->pid, fd);
	close(*copy);
	*copy = ro;
	return 0;
}

int files_unlinked_save(struct crf_ctx *ctx, struct files_dump *d, int fd, Crf__Files__Fd *e)
{
	__attribute__((cleanup(closep))) int copy = (int)syscall(SYS_pidfd_getfd, d->pidfd, fd, 0);
	Crf__Files__Unlinked *u;
	struct stat st;
	char name[96];
	int r;

	if (copy < 0)
		return crf_error_errno(errno, "pid %d: pidfd_getfd of fd %d", d->pid, fd);
	if (fstat(copy, &st) < 0)
		return crf_error_errno(errno, "pid %d: fd %d (%s)", d->pid, fd, e->path);
	if (st.st_nlink > 0)
		return crf_error_errno(
			ENOTSUP, "pid %d: fd %d (%s) %s %lu name(s), which crf cannot find", d->pid,
			fd, e->path,
			e->flags & FILES_O_TMPFILE_BIT ? "is an O_TMPFILE file linked since: it has"
						       : "was unlinked but still has",
			(unsigned long)st.st_nlink);
	snprintf(name, sizeof(name), "unlinked-%llu-%llu.img", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	r = readable(d, fd, &copy);
	if (r == 0)
		r = save_content(crf_ctx_images(ctx), name, copy, (uint64_t)st.st_size);
	if (r < 0)
		return crf_error_errno(-r, "pid %d: fd %d (%s): saving its content", d->pid, fd,
				       e->path);
	u = malloc(sizeof(*u));
	if (!u)
		return crf_error_errno(ENOMEM, "pid %d: fd %d", d->pid, fd);
	crf__files__unlinked__init(u);
	u->size = (uint64_t)st.st_size;
	u->blob = strdup(name);
	e->unlinked = u;
	if (!u->blob)
		return crf_error_errno(ENOMEM, "pid %d: fd %d", d->pid, fd);
	return 0;
}

void files_unlinked_release(Crf__Files__Fd *e)
{
	if (!e->unlinked)
		return;
	free(e->unlinked->blob);
	free(e->unlinked);
	e->unlinked = NULL;
}

/* The directory of the dump's path ("/d/f (deleted)" -> "/d"); NULL on ENOMEM. */
static char *dir_of(const char *path)
{
	char *dir = strndup(path, strlen(path) - strlen(DELETED)), *slash;

	if (!dir)
		return NULL;
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	return dir;
}

static int fill(struct crf_ctx *ctx, const Crf__Files__Fd *e, int fd)
{
	__attribute__((cleanup(freep))) char *buf = malloc(COPY_CHUNK);
	const Crf__Files__Unlinked *u = e->unlinked;
	struct crf_img *blob;
	uint64_t off = 0;
	int r;

	if (!buf)
		return crf_error_errno(ENOMEM, "fd %d", e->fd);
	r = crf_blob_open(crf_ctx_images(ctx), u->blob, &blob);
	if (r < 0)
		return r;
	if (crf_blob_size(blob) != u->size)
		r = crf_error_errno(EBADMSG, "%s: %" PRIu64 " bytes, the record says %" PRIu64,
				    u->blob, crf_blob_size(blob), u->size);
	while (r == 0 && off < u->size) {
		size_t n = u->size - off < COPY_CHUNK ? (size_t)(u->size - off) : COPY_CHUNK;

		ssize_t w;

		r = crf_blob_pread(blob, buf, n, off);
		if (r < 0)
			break;
		w = pwrite(fd, buf, n, (off_t)off);
		if (w != (ssize_t)n)
			r = crf_error_errno(w < 0 ? errno : EIO, "fd %d: writing %s", e->fd,
					    e->path);
		off += n;
	}
	crf_img_close(blob);
	return r;
}

/*
 * A new file without a name in @e's directory, opened with O_TMPFILE and
 * @flags (which must allow writing), holding @e's content and mode.
 */
static int make_file(struct crf_ctx *ctx, const Crf__Files__Fd *e, int flags)
{
	__attribute__((cleanup(freep))) char *dir = dir_of(e->path);
	int fd, r;

	if (!dir)
		return crf_error_errno(ENOMEM, "fd %d", e->fd);
	fd = open(dir, O_TMPFILE | flags | O_CLOEXEC, e->mode & 07777);
	if (fd < 0)
		return crf_error_errno(errno,
				       "fd %d: %s: cannot create the unlinked file again in %s",
				       e->fd, e->path, dir);
	r = fchmod(fd, e->mode & 07777) < 0 ? crf_error_errno(errno, "fd %d: fchmod", e->fd)
					    : fill(ctx, e, fd);
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

/*
 * A file the program made with O_TMPFILE and never linked: its description
 * is one opened with O_TMPFILE, which the new one is too, so that it can
 * still be given a name with linkat() through /proc/self/fd.  Whether the
 * program passed O_EXCL (which forbids that) cannot be seen: open() drops
 * O_EXCL from the flags, and the inode's "linkable" state is not shown
 * anywhere, so the file comes back linkable.  The flags that would get in
 * the way of writing the content (O_APPEND makes pwrite() append, O_DIRECT
 * wants aligned buffers) are set once it is written.
 */
static int create_tmpfile(struct crf_ctx *ctx, const Crf__Files__Fd *e)
{
	unsigned int fl = e->flags & ~(unsigned int)(OPEN_ONLY | FILES_O_TMPFILE_BIT | O_DIRECTORY |
						     SETFL_FLAGS);
	int fd = make_file(ctx, e, (int)fl);

	if (fd < 0)
		return fd;
	if (fcntl(fd, F_SETFL, (int)(e->flags & SETFL_FLAGS)) < 0) {
		int r = crf_error_errno(errno, "fd %d: %s: flags %#o", e->fd, e->path, e->flags);

		close(fd);
		return r;
	}
	return fd;
}

/*
 * A file unlinked after it had a name, which nothing can link again: the
 * new one is made with O_EXCL, so it cannot be linked either, and reopened
 * through /proc/self/fd with the program's flags.
 */
static int create_unlinked(struct crf_ctx *ctx, const Crf__Files__Fd *e)
{
	int flags = (int)(e->flags & ~(unsigned int)OPEN_ONLY) | O_CLOEXEC | O_NOCTTY;
	__attribute__((cleanup(closep))) int tmp = make_file(ctx, e, O_RDWR | O_EXCL);
	char proc[64];
	int fd;

	if (tmp < 0)
		return tmp;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", tmp);
	fd = open(proc, flags);
	if (fd < 0)
		return crf_error_errno(errno, "fd %d: reopening the new %s", e->fd, e->path);
	return fd;
}

int files_unlinked_create(struct crf_ctx *ctx, const Crf__Files__Fd *e)
{
	int fd;

	if (!files_unlinked_path(e->path) || !e->unlinked->blob)
		return crf_error_errno(EBADMSG, "fd %d: bad record of an unlinked file", e->fd);
	fd = e->flags & FILES_O_TMPFILE_BIT ? create_tmpfile(ctx, e) : create_unlinked(ctx, e);
	if (fd >= 0 && e->pos && lseek(fd, (off_t)e->pos, SEEK_SET) < 0) {
		int r = crf_error_errno(errno, "fd %d: %s: seek to %" PRIu64, e->fd, e->path,
					e->pos);

		close(fd);
		return r;
	}
	return fd;
}
