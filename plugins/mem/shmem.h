/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * shmem.h - shared memory objects (shared anonymous memory, memfds) mapped
 * by the tasks of a tree: saved once per object, created once at restore and
 * mapped by every task that had it, so that the tasks still share it.
 *
 * An object is named by the st_dev and st_ino of its file at the dump
 * (stat of /proc/PID/map_files/START-END); its image is shmem-DEV-INODE.img.
 */
#ifndef CRF_PLUGIN_MEM_SHMEM_H
#define CRF_PLUGIN_MEM_SHMEM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <crf/image.h>

#include <crf/plugin.h>

#include "mm.pb-c.h"
#include "premap.h"
#include "smaps.h"

struct mem_shm_obj {
	uint64_t dev, inode;
	int fd; /* restore: the object, open read-write; -1 at dump */
};

/* A System V segment made by restore-prepare. */
struct mem_sysv_obj {
	int id;
	bool dest;    /* removed at the dump: removed again once attached */
	bool created; /* made now, not one that outlived its tree */
};

/* The plugin's private state across stages (crf_ctx_priv). */
struct mem_shm {
	struct mem_shm_obj *v;
	size_t n, cap;
	struct mem_sysv_obj *sysv;
	size_t n_sysv, cap_sysv;
	bool finished; /* restore-finish ran: the segments are the tree's */
	/* the mappings made before forks (premap.h), or NULL */
	struct mem_premap *premap;
};

/*
 * dump-task: the object mapped by @v (of kind MEM_ANON_SHARED or MEM_MEMFD)
 * of task @pid.  Saves it to its image unless an earlier task of this dump
 * did; sets *@dev and *@inode.  0 or -errno (logged).
 */
int mem_shm_dump(struct crf_ctx *ctx, pid_t pid, const struct smaps_vma *v, enum mem_kind kind,
		 uint64_t *dev, uint64_t *inode);

/* restore-prepare: create every saved object, before the tree is forked. */
int mem_shm_restore_prepare(struct crf_ctx *ctx);

/*
 * restore-task: an fd of object (@dev, @inode), to hand to the core.  The
 * object made by restore-prepare, or, without it (a task restored alone,
 * the unit tests), one made now for this task.  The fd or -errno (logged).
 */
int mem_shm_restore_fd(struct crf_ctx *ctx, uint64_t dev, uint64_t inode);

/* restore-finish: close the objects (every task maps its own), then mem_sysv_finish(). */
int mem_shm_restore_finish(struct crf_ctx *ctx);

/* restore-cleanup (success or not): close the objects; the tasks have their own mappings. */
int mem_shm_restore_cleanup(struct crf_ctx *ctx);

/* Shared with sysv.c */

/* Write the non-zero pages of @len bytes @buf, object offset @off, to @img. */
int mem_shm_save_data(struct crf_img *img, size_t page_size, uint64_t off, const char *buf,
		      size_t len);
/* Read the first record of @img, the object, into *@out (free it). 0 or -errno (logged). */
int mem_shm_read_object(struct crf_img *img, const char *name, Crf__Mem__ShmemObject **out);
/* Write the data records of @img into @fd, or into memory at @mem when @fd < 0. */
int mem_shm_fill(struct crf_img *img, const char *name, int fd, char *mem, uint64_t size);

#endif
