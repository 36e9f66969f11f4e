// SPDX-License-Identifier: GPL-2.0-only
/*
 * Restore of unlinked and O_TMPFILE files (unlinked.c saves them).  Each
 * file of unlinked.img is made once, in restore-prepare, as the core's
 * object "unlinked:ID" (crf_rst_object), which every task inherits: a new
 * file without a name (O_TMPFILE) in the directory the file was in, with
 * its holes (ftruncate), the bytes of its data extents, then its owner,
 * mode and, last, its atime and mtime (the writes and chown set them).
 * So fds that had one file through several descriptions, or through two
 * former names (hard links), in one task or several, have one file again.
 *
 * Each description is then a new open of that file through /proc/self/fd
 * (which, unlike a path, still reaches an inode with no links), with its
 * own flags and offset.  A file with a description opened with O_TMPFILE
 * is made through that very description, with its flags: it is the only
 * way to a description whose flags keep O_TMPFILE's bits, and the file
 * stays linkable (linkat through /proc/self/fd).  Whether the program
 * passed O_EXCL (which forbids that) cannot be seen: open() drops it from
 * the flags and the inode's "linkable" state is not shown, so such a file
 * comes back linkable.  Any other file is made with O_TMPFILE | O_EXCL:
 * nothing can link it again, as nothing could.
 *
 * Older images (no unlinked.img) have one blob per description, all data,
 * and get one new file per description.
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

#include "files.pb-c.h"
#include "unlinked.h"

#define COPY_CHUNK   (1 << 20)
#define UNLINKED_IMG "unlinked.img"
/* The flags only open() itself looks at, or that must not apply again. */
#define OPEN_ONLY (O_CREAT | O_EXCL | O_TRUNC | O_NOCTTY | O_CLOEXEC)
/* The status flags fcntl(F_SETFL) sets, which would get in the way of writing the bytes. */
#define SETFL_FLAGS (O_APPEND | O_NONBLOCK | O_NOATIME | O_DIRECT)

/* What to make: a file of unlinked.img (@rec), or an older image's record (@rec NULL). */
struct unl_spec {
	const char *blob, *dir, *what;
	uint64_t size;
	uint32_t mode;
	const Crf__Files__UnlinkedFile *rec;
};

/* The extents are in order, inside the file, and the blob holds exactly their bytes. */
static int check_extents(const struct unl_spec *s, uint64_t blob_size)
{
	const Crf__Files__UnlinkedFile *rec = s->rec;
	uint64_t end = 0, sum = 0;

	for (size_t k = 0; rec && k < rec->n_extents; k++) {
		const Crf__Files__UnlinkedExtent *x = rec->extents[k];

		if (x->offset < end || x->length > s->size || x->offset > s->size - x->length)
			return crf_error_errno(EBADMSG,
					       "%s: extent %zu (%" PRIu64 "+%" PRIu64
					       ") out of order or past %" PRIu64 " bytes",
					       UNLINKED_IMG, k, x->offset, x->length, s->size);
		end = x->offset + x->length;
		sum += x->length;
	}
	if (!rec)
		sum = s->size;
	if (blob_size != sum)
		return crf_error_errno(EBADMSG, "%s: %" PRIu64 " bytes, the record says %" PRIu64,
				       s->blob, blob_size, sum);
	return 0;
}

/* Copy @len bytes at data offset @from of @blob to @off of @fd. */
static int copy_in(struct crf_img *blob, int fd, char *buf, uint64_t from, uint64_t off,
		   uint64_t len, const struct unl_spec *s)
{
	while (len) {
		size_t n = len < COPY_CHUNK ? (size_t)len : COPY_CHUNK;
		ssize_t w;
		int r = crf_blob_pread(blob, buf, n, from);

		if (r < 0)
			return r;
		w = pwrite(fd, buf, n, (off_t)off);
		if (w != (ssize_t)n)
			return crf_error_errno(w < 0 ? errno : EIO, "%s: writing at %" PRIu64,
					       s->what, off);
		from += n;
		off += n;
		len -= n;
	}
	return 0;
}

/* The size first (everything a hole), then the bytes of each extent. */
static int fill(struct crf_ctx *ctx, const struct unl_spec *s, int fd)
{
	_cleanup_free_ char *buf = malloc(COPY_CHUNK);
	const Crf__Files__UnlinkedFile *rec = s->rec;
	struct crf_img *blob;
	uint64_t from = 0;
	int r;

	if (!buf)
		return crf_error_errno(ENOMEM, "%s", s->what);
	if (ftruncate(fd, (off_t)s->size) < 0)
		return crf_error_errno(errno, "%s: size %" PRIu64, s->what, s->size);
	r = crf_blob_open(crf_ctx_images(ctx), s->blob, &blob);
	if (r < 0)
		return r;
	r = check_extents(s, crf_blob_size(blob));
	if (r == 0 && !rec)
		r = copy_in(blob, fd, buf, 0, 0, s->size, s);
	for (size_t k = 0; r == 0 && rec && k < rec->n_extents; k++) {
		r = copy_in(blob, fd, buf, from, rec->extents[k]->offset, rec->extents[k]->length,
			    s);
		from += rec->extents[k]->length;
	}
	crf_img_close(blob);
	return r;
}

/*
 * Owner, mode, extended attributes, atime and mtime, inode flags, in that
 * order: chown clears the set-user-ID and set-group-ID bits and a file
 * capability, an ACL sets the mode's group bits as it had them, every
 * change before sets the times, and an inode flag like noatime (chattr +A)
 * is the last.  The ctime is the restore's: nothing can set it.
 */
static int set_attrs(const struct unl_spec *s, int fd)
{
	const Crf__Files__UnlinkedFile *rec = s->rec;
	struct timespec t[2];
	int r;

	if (rec && fchown(fd, rec->uid, rec->gid) < 0)
		return crf_error_errno(errno, "%s: chown %u:%u", s->what, rec->uid, rec->gid);
	if (fchmod(fd, s->mode & 07777) < 0)
		return crf_error_errno(errno, "%s: chmod %#o", s->what, s->mode & 07777);
	if (!rec)
		return 0;
	r = files_unlinked_xattrs_set(fd, s->what, rec);
	if (r < 0)
		return r;
	t[0] = (struct timespec){rec->atime_sec, rec->atime_nsec};
	t[1] = (struct timespec){rec->mtime_sec, rec->mtime_nsec};
	if (futimens(fd, t) < 0)
		return crf_error_errno(errno, "%s: setting its times", s->what);
	return files_unlinked_iflags_set(fd, s->what, rec);
}

/*
 * A new file without a name in @s's directory, opened with O_TMPFILE and
 * @flags (which must allow writing), with @s's content and attributes; the
 * status flags in @setfl are set once it is written.
 */
static int make_file(struct crf_ctx *ctx, const struct unl_spec *s, int flags, int setfl)
{
	_cleanup_close_ int fd = -1;
	int r;

	fd = open(s->dir, O_TMPFILE | flags | O_CLOEXEC, s->mode & 07777);
	if (fd < 0)
		return crf_error_errno(errno, "%s: cannot create the unlinked file again in %s",
				       s->what, s->dir);
	r = fill(ctx, s, fd);
	if (r == 0 && setfl && fcntl(fd, F_SETFL, setfl) < 0)
		r = crf_error_errno(errno, "%s: flags %#o", s->what, setfl);
	if (r == 0)
		r = set_attrs(s, fd);
	if (r < 0)
		return r;
	return TAKE_FD(fd);
}

/* The O_TMPFILE open flags for a description's @flags, and the ones set after the bytes. */
static int tmpfile_open_flags(unsigned int flags)
{
	return (int)(flags &
		     ~(unsigned int)(OPEN_ONLY | FILES_O_TMPFILE_BIT | O_DIRECTORY | SETFL_FLAGS));
}

/* crf_rst_object's @create for "unlinked:ID". */
struct unl_make {
	struct crf_ctx *ctx;
	struct unl_spec spec;
};

static int make_object(void *arg)
{
	const struct unl_make *m = arg;
	const Crf__Files__UnlinkedFile *rec = m->spec.rec;

	if (rec->has_tmpfile_flags)
		return make_file(m->ctx, &m->spec, tmpfile_open_flags(rec->tmpfile_flags),
				 (int)(rec->tmpfile_flags & SETFL_FLAGS));
	return make_file(m->ctx, &m->spec, O_RDWR | O_EXCL, 0);
}

static void object_key(char *key, size_t len, uint32_t id)
{
	snprintf(key, len, "unlinked:%u", id);
}

static int make_one(struct crf_ctx *ctx, const Crf__Files__UnlinkedFile *rec)
{
	struct unl_make m = {ctx, {rec->blob, rec->dir, NULL, rec->size, rec->mode, rec}};
	char key[32], what[64];
	int fd;

	snprintf(what, sizeof(what), "unlinked file %u (%s)", rec->id, rec->dir);
	m.spec.what = what;
	if (!S_ISREG(rec->mode) || !rec->dir[0] || rec->dir[0] != '/')
		return crf_error_errno(EBADMSG, "%s: record %u: mode %#o, directory %s",
				       UNLINKED_IMG, rec->id, rec->mode, rec->dir);
	object_key(key, sizeof(key), rec->id);
	fd = crf_rst_object(ctx, key, make_object, &m, NULL);
	if (fd < 0)
		return fd;
	close(fd);
	crf_debug("%s: %zu data extent(s) of %" PRIu64 " bytes, made once", what, rec->n_extents,
		  rec->size);
	return 0;
}

int files_unlinked_restore_prepare(struct crf_ctx *ctx)
{
	struct crf_imgdir *dir = crf_ctx_images(ctx);
	Crf__Files__UnlinkedFile *rec;
	struct crf_img *img;
	uint32_t id = 0;
	int r;

	/* Older images: a file per description, made in restore-task. */
	if (faccessat(crf_imgdir_fd(dir), UNLINKED_IMG, F_OK, 0) < 0)
		return 0;
	r = crf_img_open(dir, UNLINKED_IMG, &crf__files__unlinked_file__descriptor, &img);
	if (r < 0)
		return r;
	while ((r = crf_img_read(img, (ProtobufCMessage **)&rec)) > 0) {
		r = rec->id == id++ ? make_one(ctx, rec)
				    : crf_error_errno(EBADMSG, "%s: file %u out of order",
						      UNLINKED_IMG, rec->id);
		crf__files__unlinked_file__free_unpacked(rec, NULL);
		if (r < 0)
			break;
	}
	crf_img_close(img);
	return r;
}

static int not_made(void *arg)
{
	const Crf__Files__Fd *e = arg;

	return crf_error_errno(EBADMSG, "fd %d (%s): unlinked file %u is not in %s", e->fd, e->path,
			       e->unlinked->file, UNLINKED_IMG);
}

/* An older image's record: a file of its own for the description, all of it data. */
static int create_own(struct crf_ctx *ctx, const Crf__Files__Fd *e)
{
	_cleanup_free_ char *dir = files_unlinked_dir(e->path);
	struct unl_spec s = {e->unlinked->blob, dir, e->path, e->unlinked->size, e->mode, NULL};
	int flags = (int)(e->flags & ~(unsigned int)OPEN_ONLY) | O_CLOEXEC | O_NOCTTY;
	_cleanup_close_ int tmp = -1;
	char proc[64];
	int fd;

	if (!dir)
		return crf_error_errno(ENOMEM, "fd %d", e->fd);
	if (e->flags & FILES_O_TMPFILE_BIT)
		return make_file(ctx, &s, tmpfile_open_flags(e->flags),
				 (int)(e->flags & SETFL_FLAGS));
	tmp = make_file(ctx, &s, O_RDWR | O_EXCL, 0);
	if (tmp < 0)
		return tmp;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", tmp);
	fd = open(proc, flags);
	if (fd < 0)
		fd = crf_error_errno(errno, "fd %d: reopening the new %s", e->fd, e->path);
	return fd;
}

/*
 * The description of @e on the file made in restore-prepare: the one the
 * file was made through, or a new open of it with @e's flags.
 */
static int open_made(struct crf_ctx *ctx, const Crf__Files__Fd *e)
{
	int flags = (int)(e->flags & ~(unsigned int)OPEN_ONLY) | O_CLOEXEC | O_NOCTTY;
	char key[32], proc[64];
	_cleanup_close_ int obj = -1;
	int fd;

	object_key(key, sizeof(key), e->unlinked->file);
	obj = crf_rst_object(ctx, key, not_made, (void *)e, NULL);
	if (obj < 0 || (e->flags & FILES_O_TMPFILE_BIT))
		return TAKE_FD(obj);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", obj);
	fd = open(proc, flags);
	if (fd < 0)
		fd = crf_error_errno(errno, "fd %d: opening the new %s again", e->fd, e->path);
	return fd;
}

int files_unlinked_create(struct crf_ctx *ctx, const Crf__Files__Fd *e)
{
	_cleanup_close_ int fd = -1;

	if (!files_unlinked_path(e->path) || !e->unlinked->blob)
		return crf_error_errno(EBADMSG, "fd %d: bad record of an unlinked file", e->fd);
	fd = e->unlinked->has_file ? open_made(ctx, e) : create_own(ctx, e);
	if (fd >= 0 && e->pos && lseek(fd, (off_t)e->pos, SEEK_SET) < 0)
		return crf_error_errno(errno, "fd %d: %s: seek to %" PRIu64, e->fd, e->path,
				       e->pos);
	return TAKE_FD(fd);
}
