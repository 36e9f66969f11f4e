/* SPDX-License-Identifier: GPL-2.0-only */
/* ipc.h - what ipc.c, ipc-restore.c and ipc-shm.c share (docs/ns-uts-ipc-time.md). */
#ifndef CRF_PLUGIN_NS_IPC_H
#define CRF_PLUGIN_NS_IPC_H

#include <stdint.h>

#include <crf/plugin.h>

#include "ipc.pb-c.h"

#define NS_IPC_SHM_CHUNK (1u << 20)   /* bytes of one IpcShmData record, at most */
#define NS_IPC_SHM_MAX	 (1ull << 40) /* the largest segment an image may name */

/* ipc-shm.c, the dump: what crf cannot restore of segment @ds (id @id): 0, or -ENOTSUP (logged). */
struct shmid_ds;
int ns_ipc_shm_check(const struct crf_object *obj, int id, const struct shmid_ds *ds,
		     bool rmid_forced);

/*
 * ipc-shm.c, the dump, in crf: the contents of the segments @ns lists, read
 * from attachments crf makes inside namespace @nsfd (inode @nsid), to one
 * ipcshm-NSID-SHMID.img each.  0 or -errno (logged).
 */
int ns_ipc_shm_save(struct crf_ctx *ctx, const struct crf_object *obj, int nsfd, uint64_t nsid,
		    const Crf__Ns__IpcNs *ns);

/* ipc-shm.c, the restore, inside the new namespace: segment @s with its contents. */
int ns_ipc_shm_restore(struct crf_ctx *ctx, const struct crf_object *obj, uint64_t nsid,
		       const Crf__Ns__IpcShm *s);

/*
 * ipc-mq.c, the dump, in the child inside the namespace: every POSIX
 * message queue of the mqueue filesystem at @dir, its messages read and put
 * back.  0 or -errno (logged).
 */
int ns_ipc_mq_read(const struct crf_object *obj, const char *dir, Crf__Ns__IpcNs *ns);
/* ipc-mq.c: check what the restore trusts in @q (@img, @i for messages). */
int ns_ipc_mq_check(const char *img, size_t i, const Crf__Ns__IpcMqueue *q);
/* ipc-mq.c, the restore, inside the new namespace: queue @q with its messages. */
int ns_ipc_mq_restore(const struct crf_object *obj, const Crf__Ns__IpcMqueue *q);

/* ipc-restore.c: @get(@p, @arg) with the effective uid and gid @p's creator's. */
int ns_ipc_as_creator(const Crf__Ns__IpcPerm *p, int (*get)(const Crf__Ns__IpcPerm *p, void *a),
		      void *arg);
/* ipc-restore.c: kernel/@what_next_id set to @id. */
int ns_ipc_next_id(const char *what, int id);

#endif
