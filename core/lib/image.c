// SPDX-License-Identifier: GPL-2.0-only
/*
 * Image directories, image handles and the common header: what both kinds
 * of image share.  The layout is documented byte by byte in
 * docs/image-format.md; record.c has the record images, blob.c the chunked
 * raw-data images.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "crf-private.h"
#include "image-internal.h"

static void imgdir_closep(struct crf_imgdir **dir)
{
	crf_imgdir_close(*dir);
}

/* Directories */

bool crf__img_is_image_name(const char *name)
{
	size_t n = strlen(name);

	return name[0] != '.' && n > 4 && !strcmp(name + n - 4, ".img");
}

/* A new dump must not mix with an earlier one in the same directory. */
static int imgdir_check_empty(struct crf_imgdir *dir)
{
	int fd = openat(dir->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *de;
	DIR *d;
	int r = 0;

	if (fd < 0)
		return crf_error_errno(errno, "cannot list image directory %s", dir->path);
	d = fdopendir(fd);
	if (!d) {
		r = crf_error_errno(errno, "cannot list image directory %s", dir->path);
		close(fd);
		return r;
	}
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno)
				r = crf_error_errno(errno, "cannot list image directory %s",
						    dir->path);
			break;
		}
		if (crf__img_is_image_name(de->d_name)) {
			crf_error("image directory %s already holds images (%s); "
				  "refusing to write a dump over another one",
				  dir->path, de->d_name);
			r = -EEXIST;
			break;
		}
	}
	closedir(d);
	return r;
}

int crf_imgdir_open(const char *path, enum crf_imgdir_mode mode, struct crf_imgdir **out)
{
	__attribute__((cleanup(imgdir_closep))) struct crf_imgdir *dir = NULL;
	int r;

	*out = NULL;
	if (mode == CRF_IMGDIR_WRITE && mkdir(path, 0700) < 0 && errno != EEXIST)
		return crf_error_errno(errno, "cannot create image directory %s", path);
	dir = calloc(1, sizeof(*dir));
	if (!dir)
		return crf_error_errno(ENOMEM, "image directory %s", path);
	dir->fd = -1;
	dir->mode = CRF_IMGDIR_READ; /* until it is ours to write */
	dir->path = strdup(path);
	if (!dir->path)
		return crf_error_errno(ENOMEM, "image directory %s", path);
	dir->fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir->fd < 0)
		return crf_error_errno(errno, "cannot open image directory %s", path);
	if (mode == CRF_IMGDIR_WRITE) {
		r = imgdir_check_empty(dir);
		if (r < 0)
			return r;
	}
	dir->mode = mode;
	*out = dir;
	dir = NULL;
	return 0;
}

void crf_imgdir_close(struct crf_imgdir *dir)
{
	if (!dir)
		return;
	if (dir->fd >= 0)
		close(dir->fd);
	free(dir->path);
	free(dir);
}

int crf_imgdir_sync(struct crf_imgdir *dir)
{
	/* One syncfs for every image's data, then the directory for the renames. */
	if (syncfs(dir->fd) < 0)
		return crf_error_errno(errno, "cannot sync the filesystem of %s", dir->path);
	if (fsync(dir->fd) < 0)
		return crf_error_errno(errno, "cannot sync image directory %s", dir->path);
	return 0;
}

const char *crf_imgdir_path(const struct crf_imgdir *dir)
{
	return dir->path;
}

int crf_imgdir_fd(const struct crf_imgdir *dir)
{
	return dir->fd;
}

/* Handles and checked I/O */

int img_fail(struct crf_img *img, int err, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	crf_error("%s: %s", img->path, msg);
	img->err = err;
	return err;
}

int img_pread(struct crf_img *img, void *buf, size_t n, uint64_t off)
{
	uint8_t *p = buf;
	int r = crf__fault_fine("image read", img->path, false);

	if (r < 0)
		return img->err = r;
	while (n) {
		ssize_t k = pread(img->fd, p, n, off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			img->err = crf_error_errno(errno, "%s: read at offset %" PRIu64, img->path,
						   off);
			return img->err;
		}
		if (k == 0)
			return img_fail(img, -ENODATA,
					"truncated at offset %" PRIu64
					" (the file shrank while being read)",
					off);
		p += k;
		n -= k;
		off += r;
	}
	return 0;
}

int img_write(struct crf_img *img, const void *buf, size_t n)
{
	const uint8_t *p = buf;
	int e = crf__fault_fine("image write", img->path, false);

	if (e < 0)
		return img->err = e;

	while (n) {
		ssize_t r = pwrite(img->fd, p, n, img->off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			img->err =
				crf_error_errno(r < 0 ? errno : EIO, "%s: write at offset %" PRIu64,
						img->path, img->off);
			return img->err;
		}
		p += r;
		n -= r;
		img->off += r;
	}
	return 0;
}

int img_writev(struct crf_img *img, struct iovec *iov, int n)
{
	int e = crf__fault_fine("image write", img->path, false);

	if (e < 0)
		return img->err = e;
	while (n) {
		ssize_t r = pwritev(img->fd, iov, n > IOV_MAX ? IOV_MAX : n, img->off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			img->err =
				crf_error_errno(r < 0 ? errno : EIO, "%s: write at offset %" PRIu64,
						img->path, img->off);
			return img->err;
		}
		img->off += r;
		/* A short write: skip what went out, resume inside an iovec. */
		for (; n && (size_t)r >= iov->iov_len; iov++, n--)
			r -= iov->iov_len;
		if (n) {
			iov->iov_base = (uint8_t *)iov->iov_base + r;
			iov->iov_len -= r;
		}
	}
	return 0;
}

static void img_free(struct crf_img *img)
{
	if (img->fd >= 0)
		close(img->fd);
	free(img->name);
	free(img->path);
	free(img->tmp);
	free(img->buf);
	free(img);
}

/* Leading dots are reserved for the writers' temporary files. */
static bool name_ok(const char *name)
{
	return name && name[0] && name[0] != '.' && !strchr(name, '/') &&
	       strlen(name) < NAME_MAX - 8;
}

static int img_new(struct crf_imgdir *dir, const char *name, struct crf_img **out)
{
	struct crf_img *img;

	if (!name_ok(name)) {
		crf_error("%s: invalid image name \"%s\"", dir->path, name ? name : "(null)");
		return -EINVAL;
	}
	img = calloc(1, sizeof(*img));
	if (!img)
		return crf_error_errno(ENOMEM, "%s/%s", dir->path, name);
	img->fd = -1;
	img->dir = dir;
	img->cached = UINT64_MAX;
	img->name = strdup(name);
	if (!img->name || asprintf(&img->path, "%s/%s", dir->path, name) < 0) {
		img->path = NULL;
		img_free(img);
		return crf_error_errno(ENOMEM, "%s/%s", dir->path, name);
	}
	*out = img;
	return 0;
}

/* Header */

static size_t header_encode(uint8_t *h, enum crf_img_kind kind, const char *type, uint32_t chunk)
{
	size_t n = strlen(type), at = IMG_FIXED_HDR + n;

	memcpy(h, IMG_MAGIC, 4);
	put_le16(h + 4, CRF_IMG_FORMAT_MAJOR);
	put_le16(h + 6, CRF_IMG_FORMAT_MINOR);
	put_le16(h + 8, kind);
	put_le16(h + 10, n);
	memcpy(h + IMG_FIXED_HDR, type, n);
	if (kind == CRF_IMG_BLOB) {
		put_le32(h + at, chunk);
		at += 4;
	}
	put_le32(h + at, crf_crc32c(0, h, at));
	return at + 4;
}

/* The parts of a header its checksum vouches for but that must still make sense. */
static int header_check_body(struct crf_img *img, const uint8_t *h, unsigned int n)
{
	if (img->kind == CRF_IMG_BLOB) {
		if (n)
			return img_fail(img, -EBADMSG, "blob image with a type name at offset %u",
					IMG_FIXED_HDR);
		img->chunk = get_le32(h + IMG_FIXED_HDR);
		if (img->chunk < IMG_MIN_CHUNK || img->chunk > CRF_IMG_MAX_RECORD)
			return img_fail(img, -EBADMSG, "chunk size %u at offset %u out of range",
					img->chunk, IMG_FIXED_HDR);
		return 0;
	}
	if (!n)
		return img_fail(img, -EBADMSG, "record image without a type name at offset %u",
				IMG_FIXED_HDR);
	for (unsigned int i = 0; i < n; i++)
		if (h[IMG_FIXED_HDR + i] <= ' ' || h[IMG_FIXED_HDR + i] > '~')
			return img_fail(img, -EBADMSG, "bad character in type name at offset %u",
					IMG_FIXED_HDR + i);
	memcpy(img->type, h + IMG_FIXED_HDR, n);
	img->type[n] = '\0';
	return 0;
}

static int header_read(struct crf_img *img)
{
	uint8_t h[IMG_MAX_HDR];
	size_t avail = img->size < sizeof(h) ? img->size : sizeof(h);
	unsigned int major, kind, n, crc_at;
	int r;

	r = img_pread(img, h, avail, 0);
	if (r < 0)
		return r;
	if (memcmp(h, IMG_MAGIC, avail < 4 ? avail : 4))
		return img_fail(img, -EBADMSG, "not a crf image (bad magic at offset 0)");
	if (avail < IMG_FIXED_HDR)
		return img_fail(img, -ENODATA, "truncated header (file ends at offset %zu)", avail);
	major = get_le16(h + 4);
	kind = get_le16(h + 8);
	n = get_le16(h + 10);
	/* The layout after the fixed part belongs to the major version. */
	if (major != CRF_IMG_FORMAT_MAJOR)
		return img_fail(
			img, -EPROTONOSUPPORT,
			"format version %u.%u at offset 4 is not supported (this crf reads %u.x)",
			major, get_le16(h + 6), CRF_IMG_FORMAT_MAJOR);
	if (kind != CRF_IMG_RECORDS && kind != CRF_IMG_BLOB)
		return img_fail(img, -EPROTONOSUPPORT, "unknown image kind %u at offset 8", kind);
	if (n > IMG_MAX_TYPE)
		return img_fail(img, -EBADMSG, "type name length %u at offset 10 exceeds %u", n,
				IMG_MAX_TYPE);
	crc_at = IMG_FIXED_HDR + n + (kind == CRF_IMG_BLOB ? 4 : 0);
	if (avail < crc_at + 4)
		return img_fail(img, -ENODATA,
				"truncated header (file ends at offset %zu, header needs %u bytes)",
				avail, crc_at + 4);
	if (get_le32(h + crc_at) != crf_crc32c(0, h, crc_at))
		return img_fail(img, -EBADMSG, "header checksum mismatch at offset %u", crc_at);
	img->kind = kind;
	img->hdr_len = crc_at + 4;
	return header_check_body(img, h, n);
}

void img_end_marker(uint8_t out[IMG_END_SIZE], uint64_t count)
{
	put_le32(out, IMG_END_TAG);
	put_le64(out + 4, count);
	put_le32(out + 12, crf_crc32c(0, out, 12));
}

int img_check_end_marker(struct crf_img *img, const uint8_t m[IMG_END_SIZE], uint64_t at,
			 uint64_t *count)
{
	if (get_le32(m) != IMG_END_TAG)
		return img_fail(img, -EBADMSG, "bad end marker at offset %" PRIu64, at);
	if (get_le32(m + 12) != crf_crc32c(0, m, 12))
		return img_fail(img, -EBADMSG, "end marker checksum mismatch at offset %" PRIu64,
				at);
	*count = get_le64(m + 4);
	return 0;
}

/* Opening and creating */

int img_open(struct crf_imgdir *dir, const char *name, enum crf_img_kind kind, struct crf_img **out)
{
	_cleanup_img_ struct crf_img *img = NULL;
	struct stat st;
	int r;

	*out = NULL;
	r = img_new(dir, name, &img);
	if (r < 0)
		return r;
	r = crf__fault_fine("image open", img->path, false);
	if (r < 0)
		return r;
	img->fd = openat(dir->fd, name, O_RDONLY | O_CLOEXEC);
	if (img->fd < 0)
		return crf_error_errno(errno, "cannot open image %s", img->path);
	if (fstat(img->fd, &st) < 0)
		return crf_error_errno(errno, "cannot stat image %s", img->path);
	if (!S_ISREG(st.st_mode))
		return img_fail(img, -EBADMSG, "not a regular file");
	img->size = st.st_size;
	r = header_read(img);
	if (r < 0)
		return r;
	if (kind && img->kind != kind)
		return img_fail(img, -EMEDIUMTYPE, "is a %s image, expected a %s image",
				img_kind_name(img->kind), img_kind_name(kind));
	img->off = img->hdr_len;
	if (img->kind == CRF_IMG_BLOB) {
		r = blob_open_body(img);
		if (r < 0)
			return r;
	} else {
		/* Small images need no more buffer than their own size. */
		img->cap = img->size - img->off < IMG_BUF_SIZE ? img->size - img->off + 1
							       : IMG_BUF_SIZE;
		img->buf = malloc(img->cap);
		if (!img->buf)
			return crf_error_errno(ENOMEM, "%s", img->path);
	}
	*out = img;
	img = NULL;
	return 0;
}

int img_create(struct crf_imgdir *dir, const char *name, enum crf_img_kind kind, const char *type,
	       uint32_t chunk, struct crf_img **out)
{
	_cleanup_img_ struct crf_img *img = NULL;
	_cleanup_free_ char *tmp = NULL;
	uint8_t h[IMG_MAX_HDR];
	struct stat st;
	int r;

	*out = NULL;
	if (dir->mode != CRF_IMGDIR_WRITE) {
		crf_error("%s: cannot create %s: the image directory is open for reading",
			  dir->path, name);
		return -EBADF;
	}
	r = img_new(dir, name, &img);
	if (r < 0)
		return r;
	/* Checked here so that a duplicate fails before any data is written. */
	if (fstatat(dir->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		crf_error("%s: image already exists", img->path);
		return -EEXIST;
	}
	r = crf__fault_fine("image create", img->path, false);
	if (r < 0)
		return r;
	img->writer = true;
	img->kind = kind;
	img->chunk = chunk;
	snprintf(img->type, sizeof(img->type), "%s", type);
	img->cap = kind == CRF_IMG_BLOB ? chunk : IMG_BUF_SIZE;
	img->buf = malloc(img->cap + (kind == CRF_IMG_BLOB ? IMG_FRAME : 0));
	if (!img->buf || asprintf(&tmp, ".%s.tmp", name) < 0) {
		tmp = NULL;
		return crf_error_errno(ENOMEM, "%s", img->path);
	}
	img->fd = openat(dir->fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (img->fd < 0 && errno == EEXIST) {
		crf_error("%s/%s exists: another writer of %s, or left over by a crashed dump",
			  dir->path, tmp, name);
		return -EEXIST;
	}
	if (img->fd < 0)
		return crf_error_errno(errno, "cannot create %s/%s", dir->path, tmp);
	img->tmp = tmp;
	tmp = NULL;
	r = img_write(img, h, header_encode(h, kind, type, chunk));
	if (r < 0)
		return r;
	*out = img;
	img = NULL;
	return 0;
}

int crf_img_create(struct crf_imgdir *dir, const char *name, const ProtobufCMessageDescriptor *type,
		   struct crf_img **out)
{
	int r;

	if (!type || !type->name[0] || strlen(type->name) > IMG_MAX_TYPE) {
		crf_error("%s: cannot create %s: bad message type", dir->path, name);
		return -EINVAL;
	}
	r = img_create(dir, name, CRF_IMG_RECORDS, type->name, 0, out);
	if (r == 0)
		(*out)->desc = type;
	return r;
}

int crf_img_open(struct crf_imgdir *dir, const char *name, const ProtobufCMessageDescriptor *type,
		 struct crf_img **out)
{
	struct crf_img *img;
	int r;

	*out = NULL;
	r = img_open(dir, name, CRF_IMG_RECORDS, &img);
	if (r < 0)
		return r;
	if (strcmp(img->type, type->name)) {
		r = img_fail(img, -EMEDIUMTYPE, "holds %s records, expected %s", img->type,
			     type->name);
		crf_img_close(img);
		return r;
	}
	img->desc = type;
	*out = img;
	return 0;
}

int crf_img_open_any(struct crf_imgdir *dir, const char *name, struct crf_img **out)
{
	return img_open(dir, name, 0, out);
}

/* Finishing */

static int writer_finish(struct crf_img *img)
{
	struct crf_imgdir *dir = img->dir;
	int r;

	r = img->kind == CRF_IMG_BLOB ? blob_finish(img) : record_finish(img);
	if (r < 0)
		return r;
	/*
	 * No fsync per image: `crf dump --sync` syncs the whole directory once
	 * with crf_imgdir_sync() before it kills the tree, and a torn image is
	 * caught by its checksums and end marker anyway.
	 */
	r = close(img->fd);
	img->fd = -1;
	if (r < 0 && errno != EINTR)
		return crf_error_errno(errno, "%s: cannot close", img->path);
	r = crf__fault_fine("image rename", img->path, false);
	if (r < 0)
		return r;
	/* Never replace an image; fall back where the filesystem cannot tell. */
	r = renameat2(dir->fd, img->tmp, dir->fd, img->name, RENAME_NOREPLACE);
	if (r < 0 && errno == EINVAL)
		r = renameat(dir->fd, img->tmp, dir->fd, img->name);
	if (r < 0)
		return crf_error_errno(errno, "%s: cannot rename %s/%s into place", img->path,
				       dir->path, img->tmp);
	free(img->tmp);
	img->tmp = NULL;
	return 0;
}

int crf_img_close(struct crf_img *img)
{
	int r;

	if (!img)
		return 0;
	if (!img->writer) {
		img_free(img);
		return 0;
	}
	r = img->err ? img->err : writer_finish(img);
	if (r < 0) {
		crf_img_abort(img);
		return r;
	}
	img_free(img);
	return 0;
}

void crf_img_abort(struct crf_img *img)
{
	if (!img)
		return;
	if (img->tmp && unlinkat(img->dir->fd, img->tmp, 0) < 0 && errno != ENOENT)
		crf_error_errno(errno, "cannot remove %s/%s", img->dir->path, img->tmp);
	img_free(img);
}

int crf_img_finish(struct crf_img *img, int r)
{
	if (r >= 0)
		return crf_img_close(img);
	crf_img_abort(img);
	return r;
}

const char *crf_img_name(const struct crf_img *img)
{
	return img->name;
}

const char *crf_img_type(const struct crf_img *img)
{
	return img->type;
}

enum crf_img_kind crf_img_kind(const struct crf_img *img)
{
	return img->kind;
}
