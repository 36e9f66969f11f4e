// SPDX-License-Identifier: GPL-2.0-only
/*
 * Shared memory objects mapped by the tree: shared anonymous memory and
 * memfds.  Each is saved once, by the first task found mapping it, from a
 * file of its own opened through /proc/PID/map_files (reading the object
 * rather than a task's mapping sees every page, mapped by this task or not).
 *
 * At restore the top crf process creates every object before the tree is
 * forked, so that every task inherits the same one and maps it again.
 * Shared anonymous memory is made with mmap(MAP_SHARED | MAP_ANONYMOUS) and
 * kept through its /proc/self/map_files entry, so that the tasks map a file
 * named "/dev/zero (deleted)" as before; a memfd gets its name back from
 * memfd_create().  A memfd is made through crf_rst_object, so that the
 * files plugin's fds on the same memfd get the same object.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/image.h>
#include <crf/log.h>
#include <crf/plugin.h>
#include <crf/restore.h>

#include "../common/memfd.h"
#include "mem.h"
#include "mm.pb-c.h"
#include "pagemap.h"
#include "shmem.h"
#include "sysv.h"

#define CHUNK (1u << 20)

static void image_name(char *buf, size_t len, uint64_t dev, uint64_t inode)
{
	snprintf(buf, len, "shmem-%llu-%llu.img", (unsigned long long)dev,
		 (unsigned long long)inode);
}

/* ---- dump ------------------------------------------------------------- */

struct saver {
	int fd;
	struct crf_img *img;
	char *buf;
	size_t page_size;
};

static int write_data(struct crf_img *img, uint64_t off, const char *p, size_t len)
{
	Crf__Mem__ShmemEntry e = CRF__MEM__SHMEM_ENTRY__INIT;
	Crf__Mem__ShmemData d = CRF__MEM__SHMEM_DATA__INIT;

	d.off = off;
	d.data.data = (uint8_t *)p;
	d.data.len = len;
	e.entry_case = CRF__MEM__SHMEM_ENTRY__ENTRY_DATA;
	e.data = &d;
	return crf_img_write(img, &e.base);
}

int mem_shm_save_data(struct crf_img *img, size_t page_size, uint64_t off, const char *buf,
		      size_t len)
{
	size_t run = 0, i, n;
	int r;

	for (i = 0; i < len; i += n) {
		n = len - i < page_size ? len - i : page_size;
		if (!mem_is_zero(buf + i, n))
			continue;
		if (i > run && (r = write_data(img, off + run, buf + run, i - run)) < 0)
			return r;
		run = i + n;
	}
	return i > run ? write_data(img, off + run, buf + run, i - run) : 0;
}

/* A mem_range_fn over object offsets: read the range and save it. */
static int save_range(void *arg, uint64_t start, uint64_t end, bool zero)
{
	struct saver *s = arg;
	ssize_t got;
	int r;

	(void)zero;
	while (start < end) {
		size_t len = end - start < CHUNK ? end - start : CHUNK;

		got = pread(s->fd, s->buf, len, (off_t)start);
		if (got < 0)
			return crf_error_errno(errno, "read shared memory at offset %#llx",
					       (unsigned long long)start);
		if (got == 0)
			return 0; /* the object ends inside its last page */
		r = mem_shm_save_data(s->img, s->page_size, start, s->buf, (size_t)got);
		if (r < 0)
			return r;
		start += (uint64_t)got;
	}
	return 0;
}

/* "/memfd:NAME (deleted)" -> "NAME" */
static char *memfd_name(const char *path)
{
	const char *suffix = " (deleted)";
	size_t n, k = strlen(suffix);

	path += strlen("/memfd:");
	n = strlen(path);
	if (n >= k && !strcmp(path + n - k, suffix))
		n -= k;
	return strndup(path, n);
}

static int write_object(struct saver *s, const struct smaps_vma *v, enum mem_kind kind,
			const struct stat *st)
{
	Crf__Mem__ShmemEntry e = CRF__MEM__SHMEM_ENTRY__INIT;
	Crf__Mem__ShmemObject o = CRF__MEM__SHMEM_OBJECT__INIT;
	int seals, r;

	o.kind = kind == MEM_MEMFD ? CRF__MEM__SHMEM_KIND__SHMEM_MEMFD
				   : CRF__MEM__SHMEM_KIND__SHMEM_ANON;
	o.dev = st->st_dev;
	o.inode = st->st_ino;
	o.size = st->st_size;
	if (kind == MEM_MEMFD) {
		seals = fcntl(s->fd, F_GET_SEALS);
		if (seals < 0)
			return crf_error_errno(errno, "F_GET_SEALS of %s", v->name);
		o.has_seals = true;
		o.seals = seals;
		o.has_memfd_mode = true;
		o.memfd_mode = st->st_mode & 07777;
		o.name = memfd_name(v->name);
		if (!o.name)
			return crf_error_errno(ENOMEM, "memfd name");
	}
	e.entry_case = CRF__MEM__SHMEM_ENTRY__ENTRY_OBJECT;
	e.object = &o;
	r = crf_img_write(s->img, &e.base);
	free(o.name);
	return r;
}

static int save_object(struct crf_ctx *ctx, struct saver *s, const struct smaps_vma *v,
		       enum mem_kind kind, const struct stat *st, const char *name)
{
	struct mem_pagemap pm = {.fd = -1, .page_size = s->page_size};
	uint64_t end = ((uint64_t)st->st_size + s->page_size - 1) & ~(uint64_t)(s->page_size - 1);
	int r;

	s->buf = malloc(CHUNK);
	if (!s->buf)
		return crf_error_errno(ENOMEM, "shared memory buffer");
	r = crf_img_create(crf_ctx_images(ctx), name, &crf__mem__shmem_entry__descriptor, &s->img);
	if (r < 0)
		return r;
	r = write_object(s, v, kind, st);
	if (r >= 0)
		r = mem_pagemap_walk_shmem(&pm, s->fd, 0, 0, end, save_range, s);
	return crf_img_finish(s->img, r);
}

int mem_shm_dump(struct crf_ctx *ctx, pid_t pid, const struct smaps_vma *v, enum mem_kind kind,
		 uint64_t *dev, uint64_t *inode)
{
	struct saver s = {.fd = -1, .page_size = mem_page_size()};
	char link[96], name[96];
	struct stat st;
	int r;

	snprintf(link, sizeof(link), "/proc/%d/map_files/%llx-%llx", (int)pid,
		 (unsigned long long)v->start, (unsigned long long)v->end);
	s.fd = open(link, O_RDONLY | O_CLOEXEC);
	if (s.fd < 0)
		return crf_error_errno(errno, "open %s", link);
	if (fstat(s.fd, &st) < 0) {
		r = crf_error_errno(errno, "stat %s", link);
		goto out;
	}
	*dev = st.st_dev;
	*inode = st.st_ino;
	image_name(name, sizeof(name), st.st_dev, st.st_ino);
	/* The image directory starts empty: an image there is this dump's. */
	r = 0;
	if (faccessat(crf_imgdir_fd(crf_ctx_images(ctx)), name, F_OK, 0) < 0)
		r = save_object(ctx, &s, v, kind, &st, name);
out:
	free(s.buf);
	close(s.fd);
	return r;
}

/* ---- restore ---------------------------------------------------------- */

/*
 * A new shared anonymous object of @size bytes, kept by an fd of its
 * /proc/self/map_files entry: mapping that fd gives "/dev/zero (deleted)" as
 * the original did (a memfd would be "/memfd:...").
 */
static int create_anon(uint64_t size)
{
	size_t len = (size + mem_page_size() - 1) & ~(mem_page_size() - 1);
	char link[96];
	void *p;
	int fd;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return crf_error_errno(errno, "mmap %zu bytes of shared memory", len);
	snprintf(link, sizeof(link), "/proc/self/map_files/%lx-%lx", (unsigned long)p,
		 (unsigned long)p + len);
	fd = open(link, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		fd = crf_error_errno(errno, "open %s", link);
	munmap(p, len);
	return fd;
}

/* A memfd with its mode and exec rights, as the files plugin makes one it holds. */
static int create_memfd(const Crf__Mem__ShmemObject *o)
{
	_cleanup_close_ int fd = -1;

	if (!o->name)
		return crf_error_errno(EBADMSG, "memfd without a name");
	fd = common_memfd_create(o->name, o->has_memfd_mode, o->memfd_mode, o->seals);
	if (fd < 0)
		return fd;
	if (ftruncate(fd, (off_t)o->size) < 0)
		return crf_error_errno(errno, "size memfd %s", o->name);
	return TAKE_FD(fd);
}

int mem_shm_fill(struct crf_img *img, const char *name, int fd, char *mem, uint64_t size)
{
	Crf__Mem__ShmemEntry *e;
	ssize_t n;
	int r;

	while ((r = crf_img_read(img, (ProtobufCMessage **)&e)) > 0) {
		const Crf__Mem__ShmemData *d = e->data;

		if (e->entry_case != CRF__MEM__SHMEM_ENTRY__ENTRY_DATA || d->off > size ||
		    d->data.len > size - d->off)
			r = crf_error_errno(EBADMSG, "%s: a record outside the object", name);
		if (r > 0 && fd < 0)
			memcpy(mem + d->off, d->data.data, d->data.len);
		for (size_t done = 0; fd >= 0 && r > 0 && done < d->data.len; done += (size_t)n) {
			n = pwrite(fd, d->data.data + done, d->data.len - done,
				   (off_t)(d->off + done));
			if (n <= 0)
				r = crf_error_errno(n < 0 ? errno : EIO, "%s: write at %#llx", name,
						    (unsigned long long)(d->off + done));
		}
		protobuf_c_message_free_unpacked(&e->base, NULL);
		if (r < 0)
			return r;
	}
	return r;
}

int mem_shm_read_object(struct crf_img *img, const char *name, Crf__Mem__ShmemObject **out)
{
	Crf__Mem__ShmemEntry *e;
	int r;

	r = crf_img_read(img, (ProtobufCMessage **)&e);
	if (r == 0)
		return crf_error_errno(ENODATA, "%s: no records", name);
	if (r < 0)
		return r;
	if (e->entry_case != CRF__MEM__SHMEM_ENTRY__ENTRY_OBJECT) {
		protobuf_c_message_free_unpacked(&e->base, NULL);
		return crf_error_errno(EBADMSG, "%s: the first record is not the object", name);
	}
	*out = e->object;
	e->object = NULL;
	e->entry_case = CRF__MEM__SHMEM_ENTRY__ENTRY__NOT_SET;
	protobuf_c_message_free_unpacked(&e->base, NULL);
	return 0;
}

static int make_object(struct crf_img *img, const char *name, Crf__Mem__ShmemObject *o)
{
	_cleanup_close_ int fd = -1;
	int r;

	if (!o->size)
		return crf_error_errno(EBADMSG, "%s: an empty object", name);
	if (o->kind == CRF__MEM__SHMEM_KIND__SHMEM_MEMFD)
		fd = create_memfd(o);
	else
		fd = create_anon(o->size);
	if (fd < 0)
		return fd;
	r = mem_shm_fill(img, name, fd, NULL, o->size);
	/* Seals last: F_SEAL_WRITE or F_SEAL_GROW would stop the filling. */
	if (r >= 0 && o->has_seals && o->seals && fcntl(fd, F_ADD_SEALS, (int)o->seals) < 0)
		r = crf_error_errno(errno, "%s: add seals %#x", name, o->seals);
	if (r < 0)
		return r;
	return TAKE_FD(fd);
}

/* A memfd to make for crf_rst_object: from its image, opened and past its object record. */
struct memfd_making {
	struct crf_img *img;
	const char *name;
	Crf__Mem__ShmemObject *o;
};

static int make_memfd(void *arg)
{
	struct memfd_making *mk = arg;

	return make_object(mk->img, mk->name, mk->o);
}

/*
 * A memfd the tree also holds as an fd is the object "memfd:DEV:INODE" of
 * crf_rst_object, which the files plugin asks for too: whoever comes first
 * makes it, with its contents and seals (the files plugin's record holds
 * the same bytes), and the other gets the same memfd.
 */
static int share_memfd(struct crf_ctx *ctx, struct crf_img *img, const char *name,
		       Crf__Mem__ShmemObject *o)
{
	struct memfd_making mk = {.img = img, .name = name, .o = o};
	bool created = false;
	char key[64];
	int fd;

	snprintf(key, sizeof(key), "memfd:%llu:%llu", (unsigned long long)o->dev,
		 (unsigned long long)o->inode);
	fd = crf_rst_object(ctx, key, make_memfd, &mk, &created);
	if (fd >= 0)
		crf_debug("%s: memfd %s (%s): %s", name, o->name ? o->name : "", key,
			  created ? "made" : "one made before");
	return fd;
}

/* Create object (@dev, @inode) from its image; the fd or -errno (logged). */
static int create_object(struct crf_ctx *ctx, uint64_t dev, uint64_t inode)
{
	Crf__Mem__ShmemObject *o = NULL;
	struct crf_img *img;
	char name[96];
	int r;

	image_name(name, sizeof(name), dev, inode);
	r = crf_img_open(crf_ctx_images(ctx), name, &crf__mem__shmem_entry__descriptor, &img);
	if (r < 0)
		return r;
	r = mem_shm_read_object(img, name, &o);
	if (r >= 0 && (o->dev != dev || o->inode != inode))
		r = crf_error_errno(EBADMSG, "%s: the object of another name", name);
	if (r >= 0 && o->kind == CRF__MEM__SHMEM_KIND__SHMEM_MEMFD)
		r = share_memfd(ctx, img, name, o);
	else if (r >= 0)
		r = make_object(img, name, o);
	if (o)
		crf__mem__shmem_object__free_unpacked(o, NULL);
	crf_img_close(img);
	return r;
}

static int add_object(struct mem_shm *m, uint64_t dev, uint64_t inode, int fd)
{
	struct mem_shm_obj *v;

	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 8;

		v = realloc(m->v, cap * sizeof(*v));
		if (!v)
			return crf_error_errno(ENOMEM, "shared memory objects");
		m->v = v;
		m->cap = cap;
	}
	m->v[m->n++] = (struct mem_shm_obj){.dev = dev, .inode = inode, .fd = fd};
	return 0;
}

static void free_state(struct mem_shm *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		close(m->v[i].fd);
	mem_sysv_cleanup(m);
	mem_premap_free(m->premap);
	free(m->v);
	free(m->sysv);
	free(m);
}

/* "shmem-sysv-SHMID.img": a System V segment (sysv.c). */
static int create_sysv(struct crf_ctx *ctx, struct mem_shm *m, const char *file)
{
	char name[64];
	int id;

	if (sscanf(file, "shmem-sysv-%d.img", &id) != 1 || id < 0)
		return 0;
	snprintf(name, sizeof(name), "shmem-sysv-%d.img", id);
	if (strcmp(name, file))
		return 0;
	return mem_sysv_create(ctx, m, id, name);
}

static int create_all(struct crf_ctx *ctx, struct mem_shm *m, DIR *d)
{
	unsigned long long dev, inode;
	char name[96];
	struct dirent *de;
	int fd, r;

	while ((errno = 0, de = readdir(d))) {
		if (!strncmp(de->d_name, "shmem-sysv-", 11)) {
			r = create_sysv(ctx, m, de->d_name);
			if (r < 0)
				return r;
			continue;
		}
		if (sscanf(de->d_name, "shmem-%llu-%llu.img", &dev, &inode) != 2)
			continue;
		image_name(name, sizeof(name), dev, inode);
		if (strcmp(name, de->d_name))
			continue;
		fd = create_object(ctx, dev, inode);
		if (fd < 0)
			return fd;
		r = add_object(m, dev, inode, fd);
		if (r < 0) {
			close(fd);
			return r;
		}
	}
	if (errno)
		return crf_error_errno(errno, "read the image directory");
	crf_debug("%zu shared memory object%s created", m->n, m->n == 1 ? "" : "s");
	return 0;
}

int mem_shm_restore_prepare(struct crf_ctx *ctx)
{
	_cleanup_close_ int fd = -1;
	_cleanup_closedir_ DIR *d = NULL;
	struct mem_shm *m;
	int r;

	fd = openat(crf_imgdir_fd(crf_ctx_images(ctx)), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return crf_error_errno(errno, "open the image directory");
	d = fdopendir(fd);
	if (!d)
		return crf_error_errno(errno, "open the image directory");
	fd = -1; /* closedir() closes it */
	m = calloc(1, sizeof(*m));
	r = m ? create_all(ctx, m, d) : crf_error_errno(ENOMEM, "shared memory objects");
	if (r < 0) {
		free_state(m);
		return r;
	}
	crf_ctx_set_priv(ctx, m);
	return 0;
}

int mem_shm_restore_fd(struct crf_ctx *ctx, uint64_t dev, uint64_t inode)
{
	struct mem_shm *m = crf_ctx_priv(ctx);
	int fd;

	for (size_t i = 0; m && i < m->n; i++) {
		if (m->v[i].dev != dev || m->v[i].inode != inode)
			continue;
		fd = fcntl(m->v[i].fd, F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			return crf_error_errno(errno, "dup a shared memory object");
		return fd;
	}
	if (m)
		return crf_error_errno(ENOENT, "no shared memory object %llu-%llu",
				       (unsigned long long)dev, (unsigned long long)inode);
	return create_object(ctx, dev, inode);
}

int mem_shm_restore_finish(struct crf_ctx *ctx)
{
	struct mem_shm *m = crf_ctx_priv(ctx);

	if (!m)
		return 0;
	/* Every task maps its objects now; a writable memfd fd would stop its exec. */
	for (size_t i = 0; i < m->n; i++)
		close(m->v[i].fd);
	m->n = 0;
	return mem_sysv_finish(m);
}

int mem_shm_restore_cleanup(struct crf_ctx *ctx)
{
	free_state(crf_ctx_priv(ctx));
	crf_ctx_set_priv(ctx, NULL);
	return 0;
}
