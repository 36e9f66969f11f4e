// SPDX-License-Identifier: GPL-2.0-only
/*
 * SysV shared memory segments of an IPC namespace not crf's (the "ipc"
 * handler's; those of crf's own namespace are the mem plugin's, sysv.c).
 *
 * The dump: the child of crf that reads the namespace (ipc.c) saves each
 * segment's id, key, owner, creator, mode, size and SHM_LOCKED in
 * ipc-ID.img, and refuses what crf does not restore (ns_ipc_shm_check).
 * crf itself then joins the namespace for as long as it takes to attach
 * every segment read-only (the attachments stay valid once it is back in
 * its own), and saves the contents to ipcshm-NSID-SHMID.img, one record per
 * run of pages.  Pages that are holes of the segment or all zeros are not
 * saved.  Where the host has no swap crf asks mincore() which pages the
 * segment holds, and does not read the others (reading a hole would give
 * the segment a page); with swap a page can be out of memory without being
 * a hole, so every page is read.
 *
 * The restore, in the new namespace (ipc-restore.c): each segment at its
 * id (kernel/shm_next_id), made as its creator, its saved pages written
 * through an attachment of crf's, then its owner and mode, then SHM_LOCK.
 * The tasks attach it later, in the restorer (mem's sysv mappings, which
 * shmat() by id in the task's namespace, this one).
 *
 * Not restorable, so not restored: the times and pids of the last
 * operations (shm_atime, shm_lpid...) and, when kernel.shm_rmid_forced is
 * set, which task counts as the creator (the first restored process of
 * the namespace does).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/image.h>
#include <crf/log.h>
#include <crf/plugin.h>

#include "ipc.h"

#ifndef SHM_DEST
#define SHM_DEST 01000
#endif
#ifndef SHM_LOCKED
#define SHM_LOCKED 02000
#endif

static void shm_image(char *buf, size_t len, uint64_t nsid, int id)
{
	snprintf(buf, len, "ipcshm-%llu-%d.img", (unsigned long long)nsid, id);
}

int ns_ipc_shm_check(const struct crf_object *obj, int id, const struct shmid_ds *ds,
		     bool rmid_forced)
{
	if (ds->shm_perm.mode & SHM_DEST)
		return crf_error_errno(ENOTSUP,
				       "pid %d: namespace %s: SysV shared memory segment %d was "
				       "removed (IPC_RMID) while attached, which crf does not "
				       "restore inside an IPC namespace yet",
				       (int)obj->pid, obj->desc, id);
	if (rmid_forced && !ds->shm_nattch)
		return crf_error_errno(ENOTSUP,
				       "pid %d: namespace %s: SysV shared memory segment %d (key "
				       "0x%x) is attached by no task while kernel.shm_rmid_forced "
				       "is 1: the kernel destroys it when its creator exits, and "
				       "crf cannot restore which task that is",
				       (int)obj->pid, obj->desc, id, (unsigned)ds->shm_perm.__key);
	return 0;
}

/* ---- dump --------------------------------------------------------------- */

/* True when the host has no swap area: a page a segment does not hold is a hole. */
static bool no_swap(void)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/swaps", "re");
	char line[256];
	int n = 0;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		n++;
	return n == 1;
}

static int write_run(struct crf_img *img, const char *p, uint64_t off, uint64_t len)
{
	Crf__Ns__IpcShmData d = CRF__NS__IPC_SHM_DATA__INIT;

	d.offset = off;
	d.data.data = (uint8_t *)(uintptr_t)(p + off);
	d.data.len = len;
	return crf_img_write(img, &d.base);
}

static bool zero_page(const char *p, size_t len)
{
	static const char zero[4096];

	for (size_t i = 0; i < len; i += sizeof(zero))
		if (memcmp(p + i, zero, len - i < sizeof(zero) ? len - i : sizeof(zero)))
			return false;
	return true;
}

static int save_pages(struct crf_img *img, const char *p, uint64_t size, const unsigned char *vec)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), run = 0, len = 0;
	int r = 0;

	for (uint64_t off = 0; r >= 0 && off < size; off += page) {
		uint64_t n = size - off < page ? size - off : page;
		bool keep = (!vec || (vec[off / page] & 1)) && !zero_page(p + off, n);

		if (keep && len && (run + len != off || len + n > NS_IPC_SHM_CHUNK)) {
			r = write_run(img, p, run, len);
			len = 0;
		}
		if (keep && !len)
			run = off;
		if (keep)
			len += n;
	}
	return r >= 0 && len ? write_run(img, p, run, len) : r;
}

static int save_one(struct crf_ctx *ctx, uint64_t nsid, const Crf__Ns__IpcShm *s, const char *p,
		    bool holes)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	_cleanup_free_ unsigned char *vec = NULL;
	struct crf_img *img;
	char name[64];
	int r;

	if (holes) {
		vec = malloc((s->size + page - 1) / page);
		if (!vec)
			return -ENOMEM;
		if (mincore((void *)p, s->size, vec) < 0)
			return crf_error_errno(errno, "mincore of SysV shared memory segment %d",
					       s->perm->id);
	}
	shm_image(name, sizeof(name), nsid, s->perm->id);
	r = crf_img_create(crf_ctx_images(ctx), name, &crf__ns__ipc_shm_data__descriptor, &img);
	if (r < 0)
		return r;
	return crf_img_finish(img, save_pages(img, p, s->size, vec));
}

int ns_ipc_shm_save(struct crf_ctx *ctx, const struct crf_object *obj, int nsfd, uint64_t nsid,
		    const Crf__Ns__IpcNs *ns)
{
	_cleanup_free_ const char **at = NULL;
	_cleanup_close_ int self = -1;
	size_t n = 0;
	int r = 0, e = 0;

	if (!ns->n_shms)
		return 0;
	at = calloc(ns->n_shms, sizeof(*at));
	self = open("/proc/thread-self/ns/ipc", O_RDONLY | O_CLOEXEC);
	if (!at || self < 0)
		return crf_error_errno(at ? errno : ENOMEM, "crf's own IPC namespace");
	if (setns(nsfd, CLONE_NEWIPC) < 0)
		return crf_error_errno(errno, "pid %d: namespace %s: join it", (int)obj->pid,
				       obj->desc);
	for (; n < ns->n_shms; n++) {
		void *p = shmat(ns->shms[n]->perm->id, NULL, SHM_RDONLY);

		if (p == (void *)-1) {
			e = errno;
			break;
		}
		at[n] = p;
	}
	if (setns(self, CLONE_NEWIPC) < 0)
		r = crf_error_errno(errno, "back to crf's own IPC namespace");
	if (r >= 0 && n < ns->n_shms)
		r = crf_error_errno(e, "pid %d: namespace %s: attach SysV shared memory segment %d",
				    (int)obj->pid, obj->desc, ns->shms[n]->perm->id);
	for (size_t i = 0; r >= 0 && i < n; i++)
		r = save_one(ctx, nsid, ns->shms[i], at[i], no_swap());
	for (size_t i = 0; i < n; i++)
		shmdt(at[i]);
	return r;
}

/* ---- restore ------------------------------------------------------------ */

static int get_shm(const Crf__Ns__IpcPerm *p, void *arg)
{
	return shmget(p->key, *(size_t *)arg, IPC_CREAT | IPC_EXCL | 0600);
}

/* The saved pages, checked: inside the segment, in order, none over a chunk. */
static int fill(struct crf_ctx *ctx, uint64_t nsid, const Crf__Ns__IpcShm *s, char *p)
{
	_cleanup_img_ struct crf_img *img = NULL;
	ProtobufCMessage *m = NULL;
	uint64_t end = 0;
	char name[64];
	int r;

	shm_image(name, sizeof(name), nsid, s->perm->id);
	r = crf_img_open(crf_ctx_images(ctx), name, &crf__ns__ipc_shm_data__descriptor, &img);
	while (r >= 0 && (r = crf_img_read(img, &m)) == 1) {
		const Crf__Ns__IpcShmData *d = (const Crf__Ns__IpcShmData *)m;

		if (d->offset < end || d->offset > s->size || d->data.len > s->size - d->offset ||
		    d->data.len > NS_IPC_SHM_CHUNK)
			r = crf_error_errno(EBADMSG,
					    "%s: IpcShmData at %llu, %zu bytes: outside the "
					    "segment's %llu bytes or out of order",
					    name, (unsigned long long)d->offset, d->data.len,
					    (unsigned long long)s->size);
		else if (d->data.len)
			memcpy(p + d->offset, d->data.data, d->data.len);
		end = d->offset + d->data.len;
		protobuf_c_message_free_unpacked(m, NULL);
	}
	return r < 0 ? r : crf_img_close(TAKE_PTR(img));
}

int ns_ipc_shm_restore(struct crf_ctx *ctx, const struct crf_object *obj, uint64_t nsid,
		       const Crf__Ns__IpcShm *s)
{
	size_t size = (size_t)s->size;
	struct shmid_ds ds;
	int id, r = ns_ipc_next_id("shm", s->perm->id);
	char *p;

	if (r < 0)
		return r;
	id = ns_ipc_as_creator(s->perm, get_shm, &size);
	if (id != s->perm->id)
		return crf_error_errno(id < 0 ? errno : EEXIST,
				       "pid %d: namespace %s: SysV shared memory segment %d (key "
				       "0x%x, %zu bytes) came back as %d",
				       (int)obj->pid, obj->desc, s->perm->id,
				       (unsigned)s->perm->key, size, id);
	p = shmat(id, NULL, 0);
	if (p == (void *)-1)
		return crf_error_errno(errno, "shmat SysV shared memory segment %d", id);
	r = fill(ctx, nsid, s, p);
	if (shmdt(p) < 0 && r >= 0)
		r = crf_error_errno(errno, "shmdt SysV shared memory segment %d", id);
	if (r < 0)
		return r;
	if (shmctl(id, IPC_STAT, &ds) < 0)
		return crf_error_errno(errno, "SysV shared memory segment %d: IPC_STAT", id);
	ds.shm_perm.uid = s->perm->uid;
	ds.shm_perm.gid = s->perm->gid;
	ds.shm_perm.mode = (unsigned short)(s->perm->mode & 0777);
	if (shmctl(id, IPC_SET, &ds) < 0)
		return crf_error_errno(errno,
				       "pid %d: namespace %s: SysV shared memory segment %d: owner "
				       "%u:%u, mode %o",
				       (int)obj->pid, obj->desc, id, s->perm->uid, s->perm->gid,
				       s->perm->mode);
	if (s->locked && shmctl(id, SHM_LOCK, NULL) < 0)
		return crf_error_errno(errno, "SysV shared memory segment %d: SHM_LOCK", id);
	return 0;
}
