// SPDX-License-Identifier: GPL-2.0-only
/*
 * Dump of regular files opened and then unlinked, and of files made with
 * O_TMPFILE and never linked.  No path leads to them, so each is saved
 * once per file (device and inode), however many fds, descriptions and
 * tasks hold it and however many names (hard links) it had: its data
 * extents in a blob image, and in unlinked.img its size, holes, owner,
 * mode and times (unlinked-restore.c makes it again).
 *
 * Only the data extents are read (SEEK_DATA/SEEK_HOLE): a sparse file of
 * 1 GiB with a few blocks written costs those blocks, and its holes come
 * back as holes.  The file is read through a new description with
 * O_NOATIME: reading it through the task's own would move nothing (pread)
 * but would set its atime, which the program would see.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/image.h>

#include "files.pb-c.h"
#include "unlinked.h"

#define DELETED	     " (deleted)"
#define COPY_CHUNK   (1 << 20)
#define UNLINKED_IMG "unlinked.img"

/* One unlinked file of the tree, as saved. */
struct unl_file {
	uint64_t dev, ino;
	char *blob, *dir;
	struct stat st;
	Crf__Files__UnlinkedExtent *extents;
	size_t n_extents;
	bool tmpfile; /* a description of it was opened with O_TMPFILE */
	unsigned int tmpfile_flags;
	Crf__Files__UnlinkedFile attrs; /* its xattrs and inode flags only */
};

/* @index: the files by (dev, inode), struct unl_key, for tsearch(3). */
struct files_unlinked {
	struct unl_file *v;
	size_t n, cap;
	void *index;
};

struct unl_key {
	uint64_t dev, ino;
	size_t i;
};

bool files_unlinked_path(const char *path)
{
	size_t len = strlen(path), n = strlen(DELETED);

	return path[0] == '/' && len > n && !strcmp(path + len - n, DELETED);
}

void files_unlinked_free(struct files_unlinked *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->n; i++) {
		free(u->v[i].blob);
		free(u->v[i].dir);
		free(u->v[i].extents);
		files_unlinked_attrs_free(u->v[i].attrs.xattrs, u->v[i].attrs.n_xattrs);
	}
	tdestroy(u->index, free);
	free(u->v);
	free(u);
}

static int key_cmp(const void *a, const void *b)
{
	const struct unl_key *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* The file of @st among those saved so far, or NULL. */
static struct unl_file *unl_find(const struct files_unlinked *u, const struct stat *st, size_t *id)
{
	struct unl_key key = {.dev = st->st_dev, .ino = st->st_ino};
	struct unl_key **k = u ? tfind(&key, &u->index, key_cmp) : NULL;

	if (!k)
		return NULL;
	*id = (*k)->i;
	return &u->v[(*k)->i];
}

/* A new file of @st, indexed; NULL (not logged) on ENOMEM. */
static struct unl_file *unl_add(struct files_tree *tree, const struct stat *st)
{
	struct files_unlinked *u = tree->unlinked;
	struct unl_key *key;
	struct unl_file *f;

	if (!u && !(u = tree->unlinked = calloc(1, sizeof(*u))))
		return NULL;
	if (u->n == u->cap) {
		size_t cap = u->cap ? 2 * u->cap : 16;

		f = reallocarray(u->v, cap, sizeof(*f));
		if (!f)
			return NULL;
		u->v = f;
		u->cap = cap;
	}
	key = malloc(sizeof(*key));
	if (!key)
		return NULL;
	*key = (struct unl_key){st->st_dev, st->st_ino, u->n};
	if (!tsearch(key, &u->index, key_cmp)) {
		free(key);
		return NULL;
	}
	f = &u->v[u->n++];
	*f = (struct unl_file){.dev = st->st_dev, .ino = st->st_ino, .st = *st};
	crf__files__unlinked_file__init(&f->attrs);
	return f;
}

/* Copy @len bytes at @off of @fd to @blob. */
static int copy_range(struct crf_img *blob, int fd, char *buf, off_t off, uint64_t len)
{
	while (len) {
		size_t want = len < COPY_CHUNK ? (size_t)len : COPY_CHUNK;
		ssize_t n = pread(fd, buf, want, off);
		int r;

		if (n <= 0)
			return crf_error_errno(n < 0 ? errno : ENODATA, "%s: read at %lld",
					       crf_img_name(blob), (long long)off);
		r = crf_blob_write(blob, buf, (size_t)n);
		if (r < 0)
			return r;
		off += n;
		len -= (uint64_t)n;
	}
	return 0;
}

static int add_extent(struct unl_file *f, uint64_t off, uint64_t len)
{
	Crf__Files__UnlinkedExtent *v = reallocarray(f->extents, f->n_extents + 1, sizeof(*v));

	if (!v)
		return crf_error_errno(ENOMEM, "%s", f->blob);
	f->extents = v;
	crf__files__unlinked_extent__init(&v[f->n_extents]);
	v[f->n_extents].offset = off;
	v[f->n_extents++].length = len;
	return 0;
}

/*
 * The data extents of @fd (a file of @size bytes), each copied to @blob.
 * A file system without SEEK_DATA makes the whole file one extent.
 */
static int save_extents(struct unl_file *f, struct crf_img *blob, int fd, uint64_t size)
{
	_cleanup_free_ char *buf = malloc(COPY_CHUNK);
	off_t off = 0, data, hole;
	int r = 0;

	if (!buf)
		return crf_error_errno(ENOMEM, "%s", f->blob);
	while (r == 0 && (uint64_t)off < size) {
		data = lseek(fd, off, SEEK_DATA);
		if (data < 0 && errno == ENXIO)
			break;
		hole = data < 0 ? -1 : lseek(fd, data, SEEK_HOLE);
		if (data < 0 && errno == EINVAL && off == 0)
			data = 0, hole = (off_t)size;
		if (data < 0 || hole < 0)
			return crf_error_errno(errno, "%s: SEEK_DATA/SEEK_HOLE at %lld", f->blob,
					       (long long)off);
		if ((uint64_t)hole > size)
			hole = (off_t)size;
		if (hole <= data)
			break;
		r = add_extent(f, (uint64_t)data, (uint64_t)(hole - data));
		if (r == 0)
			r = copy_range(blob, fd, buf, data, (uint64_t)(hole - data));
		off = hole;
	}
	return r;
}

/* Read the file behind @copy, through a description of crf's own. */
static int save_content(struct crf_ctx *ctx, struct unl_file *f, int copy)
{
	_cleanup_close_ int fd = -1;
	struct crf_img *blob;
	char proc[64];
	int r;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", copy);
	fd = open(proc, O_RDONLY | O_NOATIME | O_CLOEXEC);
	if (fd < 0)
		return crf_error_errno(errno, "reopening it to read it");
	r = files_unlinked_attrs_read(fd, f->blob, &f->attrs);
	if (r < 0)
		return r;
	r = crf_blob_create(crf_ctx_images(ctx), f->blob, &blob);
	if (r < 0)
		return r;
	r = save_extents(f, blob, fd, (uint64_t)f->st.st_size);
	return crf_img_finish(blob, r);
}

char *files_unlinked_dir(const char *path)
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

/* The file of @st, seen for the first time through fd @fd (@copy): saved. */
static int unl_new(struct crf_ctx *ctx, struct files_dump *d, int fd, int copy,
		   const struct stat *st, const Crf__Files__Fd *e, size_t *id)
{
	struct unl_file *f = unl_add(d->tree, st);
	char name[96];
	int r;

	if (!f)
		return crf_error_errno(ENOMEM, "pid %d: fd %d", d->pid, fd);
	*id = d->tree->unlinked->n - 1;
	snprintf(name, sizeof(name), "unlinked-%llu-%llu.img", (unsigned long long)st->st_dev,
		 (unsigned long long)st->st_ino);
	f->blob = strdup(name);
	f->dir = files_unlinked_dir(e->path);
	if (!f->blob || !f->dir)
		return crf_error_errno(ENOMEM, "pid %d: fd %d", d->pid, fd);
	r = save_content(ctx, f, copy);
	if (r < 0)
		return crf_error_errno(-r, "pid %d: fd %d (%s): saving its content", d->pid, fd,
				       e->path);
	crf_debug("pid %d: fd %d: %s: %zu data extent(s) of %lld bytes", d->pid, fd, e->path,
		  f->n_extents, (long long)st->st_size);
	return 0;
}

/*
 * A description opened with O_TMPFILE: the file is made again with its
 * flags.  A file has at most one (each such open makes a new file).
 */
static int note_tmpfile(const struct files_dump *d, int fd, struct unl_file *f,
			const Crf__Files__Fd *e)
{
	if (!(e->flags & FILES_O_TMPFILE_BIT))
		return 0;
	if (f->tmpfile)
		return crf_error_errno(ENOTSUP,
				       "pid %d: fd %d (%s): a second description "
				       "opened with O_TMPFILE on one file",
				       d->pid, fd, e->path);
	f->tmpfile = true;
	f->tmpfile_flags = e->flags;
	return 0;
}

int files_unlinked_save(struct crf_ctx *ctx, struct files_dump *d, int fd, Crf__Files__Fd *e)
{
	_cleanup_close_ int copy = (int)syscall(SYS_pidfd_getfd, d->pidfd, fd, 0);
	Crf__Files__Unlinked *u;
	struct unl_file *f;
	struct stat st;
	size_t id = 0;
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
	f = unl_find(d->tree->unlinked, &st, &id);
	r = f ? 0 : unl_new(ctx, d, fd, copy, &st, e, &id);
	if (r == 0)
		r = note_tmpfile(d, fd, &d->tree->unlinked->v[id], e);
	if (r < 0)
		return r;
	f = &d->tree->unlinked->v[id];
	u = malloc(sizeof(*u));
	if (!u)
		return crf_error_errno(ENOMEM, "pid %d: fd %d", d->pid, fd);
	crf__files__unlinked__init(u);
	u->size = (uint64_t)st.st_size;
	u->has_file = true;
	u->file = (uint32_t)id;
	u->blob = strdup(f->blob);
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

static void fill_record(const struct unl_file *f, uint32_t id, Crf__Files__UnlinkedFile *m,
			Crf__Files__UnlinkedExtent **ext)
{
	m->id = id;
	m->dev = f->dev;
	m->inode = f->ino;
	m->blob = f->blob;
	m->size = (uint64_t)f->st.st_size;
	m->dir = f->dir;
	m->mode = f->st.st_mode;
	m->uid = f->st.st_uid;
	m->gid = f->st.st_gid;
	m->atime_sec = f->st.st_atim.tv_sec;
	m->atime_nsec = (uint32_t)f->st.st_atim.tv_nsec;
	m->mtime_sec = f->st.st_mtim.tv_sec;
	m->mtime_nsec = (uint32_t)f->st.st_mtim.tv_nsec;
	for (size_t k = 0; k < f->n_extents; k++)
		ext[k] = &f->extents[k];
	m->n_extents = f->n_extents;
	m->extents = ext;
	m->has_tmpfile_flags = f->tmpfile;
	m->tmpfile_flags = f->tmpfile_flags;
	m->n_xattrs = f->attrs.n_xattrs;
	m->xattrs = f->attrs.xattrs;
	m->has_inode_flags = f->attrs.has_inode_flags;
	m->inode_flags = f->attrs.inode_flags;
}

int files_unlinked_dump_finish(struct crf_ctx *ctx)
{
	struct files_tree *tree = crf_ctx_priv(ctx);
	const struct files_unlinked *u = tree ? tree->unlinked : NULL;
	struct crf_img *img = NULL;
	int r;

	r = crf_img_create(crf_ctx_images(ctx), UNLINKED_IMG,
			   &crf__files__unlinked_file__descriptor, &img);
	for (size_t i = 0; r == 0 && u && i < u->n; i++) {
		Crf__Files__UnlinkedFile m = CRF__FILES__UNLINKED_FILE__INIT;
		_cleanup_free_ Crf__Files__UnlinkedExtent **ext =
			calloc(u->v[i].n_extents + 1, sizeof(*ext));

		if (!ext) {
			r = crf_error_errno(ENOMEM, "%s", UNLINKED_IMG);
			break;
		}
		fill_record(&u->v[i], (uint32_t)i, &m, ext);
		r = crf_img_write(img, &m.base);
	}
	return crf_img_finish(img, r);
}
