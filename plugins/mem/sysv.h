/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sysv.h - System V shared memory segments attached by the tree.  Each is
 * saved once (shmem-sysv-SHMID.img), recreated with the same id, key, mode
 * and owner by restore-prepare, and attached again by every task that had
 * it with shmat() (the restorer), so shm_nattch and shmdt() work as before.
 */
#ifndef CRF_PLUGIN_MEM_SYSV_H
#define CRF_PLUGIN_MEM_SYSV_H

#include <stdint.h>
#include <stdio.h>

#include <crf/plugin.h>

#include "shmem.h"
#include "smaps.h"

/* One line of /proc/sysvipc/shm, the columns crf uses. */
struct mem_sysv_seg {
	int32_t key, id;
	uint32_t mode; /* permissions, with SHM_DEST (01000) once removed */
	uint64_t size;
	uint64_t nattch;
	uint32_t uid, gid;
};

/* Parse one line of /proc/sysvipc/shm: 0, or -EINVAL (the header, or not a segment). */
int mem_sysv_parse(const char *line, struct mem_sysv_seg *s);

/* Segment @id in the table read from @f: 0, or -ENOENT (not logged). */
int mem_sysv_find(FILE *f, int id, struct mem_sysv_seg *s);

/*
 * dump-task: the segment attached at @v (MEM_SYSV).  Saves it unless an
 * earlier task of this dump did; sets *@shmid.  A segment of the task's IPC
 * namespace when that is not crf's is the ns plugin's to save: *@ipc_ns is
 * then that namespace's inode (else 0).  0 or -errno (logged).
 */
int mem_sysv_dump(struct crf_ctx *ctx, pid_t pid, const struct smaps_vma *v, int *shmid,
		  uint64_t *ipc_ns);

/* restore-prepare: recreate segment @id from its image (@name). 0 or -errno (logged). */
int mem_sysv_create(struct crf_ctx *ctx, struct mem_shm *m, int id, const char *name);

/* restore-finish: remove the segments that had been removed at the dump. */
int mem_sysv_finish(struct mem_shm *m);

/* restore-cleanup: after a failed restore, remove the segments made for it. */
void mem_sysv_cleanup(struct mem_shm *m);

#endif
