// SPDX-License-Identifier: GPL-2.0-only
/*
 * System V shared memory segments attached by the tree.  A segment is an
 * IPC object with an id, a key and an owner, not only memory: it is saved
 * once with what /proc/sysvipc/shm shows of it, and recreated under the
 * same id (the inode of its mapping is that id) by restore-prepare, through
 * /proc/sys/kernel/shm_next_id.  The tasks attach it with shmat() in the
 * restorer.  A segment removed at the dump (IPC_RMID: SHM_DEST, key 0) is
 * removed again at restore-finish, once every task holds it.
 *
 * A segment of a task's IPC namespace that is not crf's is not in crf's
 * table: the ns plugin saves and makes it (plugins/ns/ipc-shm.c); mem
 * records the attachment and which namespace, and the restorer attaches
 * it by id in the restored namespace.
 *
 * A keyed segment outlives its tree: restored after the tree was killed it
 * is still there, unattached, under its id and key, and is taken over
 * (its contents replaced by the saved ones).  Any other segment holding the
 * id fails the restore.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/image.h>
#include <crf/log.h>
#include <crf/plugin.h>

#include "mem.h"
#include "mm.pb-c.h"
#include "sysv.h"

#define SHM_TABLE   "/proc/sysvipc/shm"
#define SHM_NEXT_ID "/proc/sys/kernel/shm_next_id"
#define CHUNK	    (1u << 20)

#ifndef SHM_DEST
#define SHM_DEST 01000
#endif

/* key shmid perms size cpid lpid nattch uid gid cuid cgid atime dtime ctime rss swap */
int mem_sysv_parse(const char *line, struct mem_sysv_seg *s)
{
	unsigned long long size, nattch;
	int key, id, cpid, lpid;
	unsigned int mode, uid, gid;

	if (sscanf(line, "%d %d %o %llu %d %d %llu %u %u", &key, &id, &mode, &size, &cpid, &lpid,
		   &nattch, &uid, &gid) != 9 ||
	    id < 0)
		return -EINVAL;
	*s = (struct mem_sysv_seg){.key = key,
				   .id = id,
				   .mode = mode,
				   .size = size,
				   .nattch = nattch,
				   .uid = uid,
				   .gid = gid};
	return 0;
}

int mem_sysv_find(FILE *f, int id, struct mem_sysv_seg *s)
{
	char line[512];

	while (fgets(line, sizeof(line), f))
		if (mem_sysv_parse(line, s) == 0 && s->id == id)
			return 0;
	return -ENOENT;
}

static int lookup(int id, struct mem_sysv_seg *s)
{
	_cleanup_fclose_ FILE *f = fopen(SHM_TABLE, "re");

	if (!f)
		return crf_error_errno(errno, "open %s", SHM_TABLE);
	return mem_sysv_find(f, id, s);
}

static void image_name(char *buf, size_t len, int id)
{
	snprintf(buf, len, "shmem-sysv-%d.img", id);
}

/* ---- dump ------------------------------------------------------------- */

static int write_object(struct crf_img *img, const struct mem_sysv_seg *s)
{
	Crf__Mem__ShmemEntry e = CRF__MEM__SHMEM_ENTRY__INIT;
	Crf__Mem__ShmemObject o = CRF__MEM__SHMEM_OBJECT__INIT;

	o.kind = CRF__MEM__SHMEM_KIND__SHMEM_SYSV;
	o.inode = (uint64_t)s->id;
	o.size = s->size;
	o.has_key = o.has_mode = o.has_uid = o.has_gid = true;
	o.key = s->key;
	o.mode = s->mode;
	o.uid = s->uid;
	o.gid = s->gid;
	e.entry_case = CRF__MEM__SHMEM_ENTRY__ENTRY_OBJECT;
	e.object = &o;
	return crf_img_write(img, &e.base);
}

/*
 * The segment's file cannot be read(): crf attaches it read-only itself
 * (root may attach a removed segment too) and saves what it sees.
 */
static int save_segment(struct crf_ctx *ctx, const struct mem_sysv_seg *s, const char *name)
{
	struct crf_img *img;
	const char *p;
	int r;

	p = shmat(s->id, NULL, SHM_RDONLY);
	if (p == (void *)-1)
		return crf_error_errno(errno, "shmat System V segment %d", s->id);
	r = crf_img_create(crf_ctx_images(ctx), name, &crf__mem__shmem_entry__descriptor, &img);
	if (r >= 0) {
		r = write_object(img, s);
		for (uint64_t off = 0; r >= 0 && off < s->size; off += CHUNK) {
			size_t len = s->size - off < CHUNK ? s->size - off : CHUNK;

			r = mem_shm_save_data(img, mem_page_size(), off, p + off, len);
		}
		r = crf_img_finish(img, r);
	}
	shmdt(p);
	return r;
}

/* The inode of @pid's IPC namespace when it is not crf's, else 0; -errno (logged). */
static int64_t other_ipc_ns(pid_t pid)
{
	struct stat self, task;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ns/ipc", (int)pid);
	if (stat("/proc/self/ns/ipc", &self) < 0 || stat(path, &task) < 0)
		return crf_error_errno(errno, "task %d: its IPC namespace", (int)pid);
	return self.st_ino == task.st_ino && self.st_dev == task.st_dev ? 0 : (int64_t)task.st_ino;
}

/*
 * A segment of the task's own IPC namespace (not in crf's table): its
 * size is that of the file the task maps.  The ns plugin saves the segment.
 */
static int ns_segment(pid_t pid, const struct smaps_vma *v, int *shmid)
{
	uint64_t page = mem_page_size(), len;
	struct stat st;
	char link[96];

	snprintf(link, sizeof(link), "/proc/%d/map_files/%llx-%llx", (int)pid,
		 (unsigned long long)v->start, (unsigned long long)v->end);
	if (stat(link, &st) < 0)
		return crf_error_errno(errno, "task %d: System V segment %llu: %s", (int)pid,
				       (unsigned long long)v->inode, link);
	len = ((uint64_t)st.st_size + page - 1) & ~(page - 1);
	if (v->pgoff || v->end - v->start != len)
		return crf_error_errno(ENOTSUP,
				       "task %d: %#llx-%#llx is part of System V segment %llu "
				       "(not supported: only whole attachments are)",
				       (int)pid, (unsigned long long)v->start,
				       (unsigned long long)v->end, (unsigned long long)v->inode);
	*shmid = (int)v->inode;
	return 0;
}

int mem_sysv_dump(struct crf_ctx *ctx, pid_t pid, const struct smaps_vma *v, int *shmid,
		  uint64_t *ipc_ns)
{
	int64_t ns = other_ipc_ns(pid);
	struct mem_sysv_seg s;
	uint64_t len;
	char name[64];
	int r;

	if (ns < 0)
		return (int)ns;
	*ipc_ns = (uint64_t)ns;
	if (ns)
		return ns_segment(pid, v, shmid);
	r = lookup((int)v->inode, &s);
	if (r == -ENOENT)
		return crf_error_errno(ENOENT, "task %d: System V segment %llu is not in %s",
				       (int)pid, (unsigned long long)v->inode, SHM_TABLE);
	if (r < 0)
		return r;
	len = (s.size + mem_page_size() - 1) & ~(uint64_t)(mem_page_size() - 1);
	/* shmat() attaches a whole segment: a part of one could not come back. */
	if (v->pgoff || v->end - v->start != len)
		return crf_error_errno(ENOTSUP,
				       "task %d: %#llx-%#llx is part of System V segment %d "
				       "(not supported: only whole attachments are)",
				       (int)pid, (unsigned long long)v->start,
				       (unsigned long long)v->end, s.id);
	*shmid = s.id;
	image_name(name, sizeof(name), s.id);
	/* The image directory starts empty: an image there is this dump's. */
	if (faccessat(crf_imgdir_fd(crf_ctx_images(ctx)), name, F_OK, 0) == 0)
		return 0;
	return save_segment(ctx, &s, name);
}

/* ---- restore ---------------------------------------------------------- */

static int set_next_id(int id)
{
	_cleanup_close_ int fd = -1;
	char buf[16];
	int n;

	fd = open(SHM_NEXT_ID, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return crf_error_errno(errno, "open %s", SHM_NEXT_ID);
	n = snprintf(buf, sizeof(buf), "%d", id);
	if (write(fd, buf, (size_t)n) != n)
		return crf_error_errno(errno, "write %d to %s", id, SHM_NEXT_ID);
	return 0;
}

/* A new segment with the saved id; -EEXIST (logged) where the id or key is taken. */
static int make_segment(const Crf__Mem__ShmemObject *o, int id)
{
	int got, r;

	r = set_next_id(id);
	if (r < 0)
		return r;
	got = shmget(o->key ? o->key : IPC_PRIVATE, o->size,
		     (int)(o->mode & 0777) | IPC_CREAT | IPC_EXCL);
	if (got < 0) {
		r = crf_error_errno(errno, "shmget System V segment %d (key %#x)", id, o->key);
		set_next_id(-1);
		return r;
	}
	if (got != id) {
		shmctl(got, IPC_RMID, NULL);
		return crf_error_errno(EEXIST, "System V segment id %d is taken (got %d)", id, got);
	}
	return 0;
}

/*
 * Segment @id as the image says.  One that is there already is taken over
 * only if it has the saved key and size and no task attached: the same
 * segment, left when its tree was killed.  *@created says which.
 */
static int get_segment(const Crf__Mem__ShmemObject *o, int id, bool *created)
{
	struct mem_sysv_seg s;
	int r;

	r = lookup(id, &s);
	if (r == -ENOENT) {
		*created = true;
		return make_segment(o, id);
	}
	if (r < 0)
		return r;
	if (s.key != o->key || s.size != o->size || s.nattch || (s.mode & SHM_DEST))
		return crf_error_errno(EEXIST,
				       "System V segment id %d is taken by another segment "
				       "(key %#x, %llu bytes, %llu attached)",
				       id, s.key, (unsigned long long)s.size,
				       (unsigned long long)s.nattch);
	*created = false;
	return 0;
}

/* The contents, then the owner and mode (which could keep crf out of it). */
static int fill_segment(struct crf_img *img, const char *name, const Crf__Mem__ShmemObject *o,
			int id)
{
	struct shmid_ds ds;
	char *p;
	int r;

	p = shmat(id, NULL, 0);
	if (p == (void *)-1)
		return crf_error_errno(errno, "shmat System V segment %d", id);
	memset(p, 0, o->size);
	r = mem_shm_fill(img, name, -1, p, o->size);
	shmdt(p);
	if (r < 0)
		return r;
	if (shmctl(id, IPC_STAT, &ds) < 0)
		return crf_error_errno(errno, "IPC_STAT System V segment %d", id);
	ds.shm_perm.uid = o->uid;
	ds.shm_perm.gid = o->gid;
	ds.shm_perm.mode = o->mode & 0777;
	if (shmctl(id, IPC_SET, &ds) < 0)
		return crf_error_errno(errno, "IPC_SET System V segment %d", id);
	return 0;
}

static int add_sysv(struct mem_shm *m, int id, bool dest, bool created)
{
	if (m->n_sysv == m->cap_sysv) {
		size_t cap = m->cap_sysv ? 2 * m->cap_sysv : 4;
		struct mem_sysv_obj *v = realloc(m->sysv, cap * sizeof(*v));

		if (!v)
			return crf_error_errno(ENOMEM, "System V segments");
		m->sysv = v;
		m->cap_sysv = cap;
	}
	m->sysv[m->n_sysv++] = (struct mem_sysv_obj){.id = id, .dest = dest, .created = created};
	return 0;
}

static int check_object(const Crf__Mem__ShmemObject *o, const char *name, int id)
{
	if (o->kind != CRF__MEM__SHMEM_KIND__SHMEM_SYSV || o->inode != (uint64_t)id ||
	    !o->has_key || !o->has_mode || !o->has_uid || !o->has_gid || !o->size)
		return crf_error_errno(EBADMSG, "%s: not System V segment %d", name, id);
	return 0;
}

int mem_sysv_create(struct crf_ctx *ctx, struct mem_shm *m, int id, const char *name)
{
	Crf__Mem__ShmemObject *o = NULL;
	struct crf_img *img;
	bool created = false;
	int r;

	r = crf_img_open(crf_ctx_images(ctx), name, &crf__mem__shmem_entry__descriptor, &img);
	if (r < 0)
		return r;
	r = mem_shm_read_object(img, name, &o);
	if (r >= 0)
		r = check_object(o, name, id);
	if (r >= 0)
		r = get_segment(o, id, &created);
	if (r >= 0 && (r = add_sysv(m, id, o->mode & SHM_DEST, created)) < 0 && created)
		shmctl(id, IPC_RMID, NULL);
	/* From here on a failure leaves it to restore-cleanup. */
	if (r >= 0)
		r = fill_segment(img, name, o, id);
	if (o)
		crf__mem__shmem_object__free_unpacked(o, NULL);
	crf_img_close(img);
	return r;
}

int mem_sysv_finish(struct mem_shm *m)
{
	for (size_t i = 0; i < m->n_sysv; i++)
		if (m->sysv[i].dest && shmctl(m->sysv[i].id, IPC_RMID, NULL) < 0)
			return crf_error_errno(errno, "IPC_RMID System V segment %d",
					       m->sysv[i].id);
	m->finished = true;
	return 0;
}

void mem_sysv_cleanup(struct mem_shm *m)
{
	if (m->finished)
		return;
	for (size_t i = 0; i < m->n_sysv; i++)
		if (m->sysv[i].created)
			shmctl(m->sysv[i].id, IPC_RMID, NULL);
}
