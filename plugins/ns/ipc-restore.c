// SPDX-License-Identifier: GPL-2.0-only
/*
 * IPC namespaces, the restore (ipc.c says what is saved): in the first
 * restored process that has the namespace, right after its fork.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/image.h>
#include <crf/log.h>
#include <crf/plugin.h>

#include "ipc.h"
#include "ipc.pb-c.h"
#include "ns.h"

#define VALUE_MAX    256
#define MSG_MAX_SIZE 65536
#define SEMVAL_MAX   32767

/* Must match ipc.c's tables: a hostile image names no other file. */
static const char *const sysctl_names[] = {
	"kernel/shmmax",	 "kernel/shmall",
	"kernel/shmmni",	 "kernel/shm_rmid_forced",
	"kernel/msgmax",	 "kernel/msgmnb",
	"kernel/msgmni",	 "kernel/sem",
	"kernel/auto_msgmni",	 "fs/mqueue/queues_max",
	"fs/mqueue/msg_max",	 "fs/mqueue/msgsize_max",
	"fs/mqueue/msg_default", "fs/mqueue/msgsize_default",
};
static const char *const next_id_names[] = {"kernel/shm_next_id", "kernel/msg_next_id",
					    "kernel/sem_next_id"};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static int write_sysctl(const char *name, const char *value)
{
	char path[96];
	_cleanup_close_ int fd = -1;
	size_t len = strlen(value);

	snprintf(path, sizeof(path), "/proc/sys/%s", name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, value, len) != (ssize_t)len)
		return crf_error_errno(errno, "write '%s' to %s", value, path);
	return 0;
}

int ns_ipc_next_id(const char *what, int id)
{
	char path[48], text[16];

	snprintf(path, sizeof(path), "kernel/%s_next_id", what);
	snprintf(text, sizeof(text), "%d", id);
	return write_sysctl(path, text);
}

static bool in_table(const char *name, const char *const *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(name, t[i]))
			return true;
	return false;
}

static int check_sysctls(const char *img, Crf__Ns__IpcSysctl **s, size_t n, const char *const *t,
			 size_t tn, const char *field)
{
	for (size_t i = 0; i < n; i++)
		if (!in_table(s[i]->name, t, tn) || strlen(s[i]->value) >= VALUE_MAX)
			return crf_error_errno(EBADMSG,
					       "%s: IpcNs.%s[%zu]: '%.64s' is not an ipc "
					       "sysctl crf restores, or its value is too long",
					       img, field, i, s[i]->name);
	return 0;
}

/* Validate what the restore trusts: names of files, sizes, ids. */
static int check_ns(const char *img, const Crf__Ns__IpcNs *ns)
{
	int r = check_sysctls(img, ns->sysctls, ns->n_sysctls, sysctl_names, N(sysctl_names),
			      "sysctls");

	if (r >= 0)
		r = check_sysctls(img, ns->next_ids, ns->n_next_ids, next_id_names,
				  N(next_id_names), "next_ids");
	for (size_t i = 0; r >= 0 && i < ns->n_queues; i++) {
		if (ns->queues[i]->perm->id < 0)
			return crf_error_errno(EBADMSG, "%s: IpcNs.queues[%zu].perm.id < 0", img,
					       i);
		for (size_t k = 0; k < ns->queues[i]->n_msgs; k++)
			if (ns->queues[i]->msgs[k]->mtext.len > MSG_MAX_SIZE ||
			    ns->queues[i]->msgs[k]->mtype <= 0)
				return crf_error_errno(EBADMSG,
						       "%s: IpcNs.queues[%zu].msgs[%zu]: "
						       "type <= 0 or text over %d bytes",
						       img, i, k, MSG_MAX_SIZE);
	}
	for (size_t i = 0; r >= 0 && i < ns->n_mqueues; i++)
		r = ns_ipc_mq_check(img, i, ns->mqueues[i]);
	for (size_t i = 0; r >= 0 && i < ns->n_shms; i++)
		if (ns->shms[i]->perm->id < 0 || !ns->shms[i]->size ||
		    ns->shms[i]->size > NS_IPC_SHM_MAX)
			return crf_error_errno(
				EBADMSG,
				"%s: IpcNs.shms[%zu]: id < 0, or a size of 0 or over "
				"%llu",
				img, i, (unsigned long long)NS_IPC_SHM_MAX);
	for (size_t i = 0; r >= 0 && i < ns->n_sems; i++) {
		if (ns->sems[i]->perm->id < 0 || !ns->sems[i]->n_values)
			return crf_error_errno(EBADMSG, "%s: IpcNs.sems[%zu]: id < 0 or no value",
					       img, i);
		for (size_t k = 0; k < ns->sems[i]->n_values; k++)
			if (ns->sems[i]->values[k] > SEMVAL_MAX)
				return crf_error_errno(EBADMSG,
						       "%s: IpcNs.sems[%zu].values[%zu] "
						       "over %d",
						       img, i, k, SEMVAL_MAX);
	}
	return r;
}

static int read_image(struct crf_ctx *ctx, uint64_t id, Crf__Ns__IpcNs **out)
{
	_cleanup_img_ struct crf_img *img = NULL;
	char name[64];
	int r;

	snprintf(name, sizeof(name), "ipc-%llu.img", (unsigned long long)id);
	r = crf_img_open(crf_ctx_images(ctx), name, &crf__ns__ipc_ns__descriptor, &img);
	if (r >= 0)
		r = crf_img_read(img, (ProtobufCMessage **)out);
	if (r == 0)
		return crf_error_errno(EBADMSG, "%s: no record", name);
	if (r < 0)
		return r;
	r = check_ns(name, *out);
	if (r < 0) {
		crf__ns__ipc_ns__free_unpacked(*out, NULL);
		return r;
	}
	return crf_img_close(TAKE_PTR(img));
}

/* Create with euid/egid the creator's, so that the kernel records them as cuid/cgid. */
int ns_ipc_as_creator(const Crf__Ns__IpcPerm *p, int (*get)(const Crf__Ns__IpcPerm *p, void *a),
		      void *arg)
{
	uid_t euid = geteuid();
	gid_t egid = getegid();
	int r, e;

	if (setegid(p->cgid) < 0 || seteuid(p->cuid) < 0) {
		e = errno;
		if (setegid(egid) < 0)
			return -errno;
		return -e;
	}
	r = get(p, arg);
	e = errno;
	if (seteuid(euid) < 0 || setegid(egid) < 0)
		return -errno;
	errno = e;
	return r;
}

static int get_queue(const Crf__Ns__IpcPerm *p, void *arg)
{
	(void)arg;
	return msgget(p->key, IPC_CREAT | IPC_EXCL | 0600);
}

static int get_sems(const Crf__Ns__IpcPerm *p, void *arg)
{
	return semget(p->key, (int)*(size_t *)arg, IPC_CREAT | IPC_EXCL | 0600);
}

static void set_perm(struct ipc_perm *to, const Crf__Ns__IpcPerm *p)
{
	to->uid = p->uid;
	to->gid = p->gid;
	to->mode = (unsigned short)(p->mode & 0777);
}

static int restore_queue(const struct crf_object *obj, const Crf__Ns__IpcMsgQueue *q)
{
	struct msqid_ds ds;
	int id, r = ns_ipc_next_id("msg", q->perm->id);
	struct {
		long mtype;
		char mtext[MSG_MAX_SIZE];
	} *buf = NULL;

	if (r < 0)
		return r;
	id = ns_ipc_as_creator(q->perm, get_queue, NULL);
	if (id != q->perm->id)
		return crf_error_errno(
			id < 0 ? errno : EEXIST,
			"pid %d: namespace %s: message queue %d (key 0x%x) came back "
			"as %d",
			(int)obj->pid, obj->desc, q->perm->id, (unsigned)q->perm->key, id);
	if (msgctl(id, IPC_STAT, &ds) < 0)
		return crf_error_errno(errno, "message queue %d: IPC_STAT", id);
	set_perm(&ds.msg_perm, q->perm);
	ds.msg_qbytes = q->qbytes;
	if (msgctl(id, IPC_SET, &ds) < 0)
		return crf_error_errno(errno,
				       "pid %d: namespace %s: message queue %d: owner %u:%u, "
				       "mode %o, %llu bytes",
				       (int)obj->pid, obj->desc, id, q->perm->uid, q->perm->gid,
				       q->perm->mode, (unsigned long long)q->qbytes);
	buf = q->n_msgs ? malloc(sizeof(*buf)) : NULL;
	if (q->n_msgs && !buf)
		return -ENOMEM;
	for (size_t i = 0; r >= 0 && i < q->n_msgs; i++) {
		buf->mtype = q->msgs[i]->mtype;
		if (q->msgs[i]->mtext.len)
			memcpy(buf->mtext, q->msgs[i]->mtext.data, q->msgs[i]->mtext.len);
		if (msgsnd(id, buf, q->msgs[i]->mtext.len, IPC_NOWAIT) < 0)
			r = crf_error_errno(errno, "pid %d: namespace %s: message %zu of queue %d",
					    (int)obj->pid, obj->desc, i, id);
	}
	free(buf);
	return r;
}

static int restore_sems(const struct crf_object *obj, const Crf__Ns__IpcSemSet *s)
{
	_cleanup_free_ unsigned short *v = calloc(s->n_values, sizeof(*v));
	size_t nsems = s->n_values;
	struct semid_ds ds;
	int id, r = ns_ipc_next_id("sem", s->perm->id);

	if (r < 0)
		return r;
	if (!v)
		return -ENOMEM;
	id = ns_ipc_as_creator(s->perm, get_sems, &nsems);
	if (id != s->perm->id)
		return crf_error_errno(
			id < 0 ? errno : EEXIST,
			"pid %d: namespace %s: semaphore set %d (key 0x%x) came back "
			"as %d",
			(int)obj->pid, obj->desc, s->perm->id, (unsigned)s->perm->key, id);
	for (size_t i = 0; i < nsems; i++)
		v[i] = (unsigned short)s->values[i];
	if (semctl(id, 0, SETALL, v) < 0 || semctl(id, 0, IPC_STAT, &ds) < 0)
		return crf_error_errno(errno, "semaphore set %d: SETALL", id);
	set_perm(&ds.sem_perm, s->perm);
	if (semctl(id, 0, IPC_SET, &ds) < 0)
		return crf_error_errno(errno, "semaphore set %d: owner and mode", id);
	return 0;
}

/* kernel/shm*: written once the segments are made (a lowered limit would refuse one). */
static bool shm_sysctl(const char *name)
{
	return !strncmp(name, "kernel/shm", 10);
}

static int restore_ns(struct crf_ctx *ctx, const struct crf_object *obj, uint64_t nsid,
		      const Crf__Ns__IpcNs *ns)
{
	int r = 0;

	if (unshare(CLONE_NEWIPC) < 0)
		return crf_error_errno(errno, "pid %d: namespace %s: unshare(CLONE_NEWIPC)",
				       (int)obj->pid, obj->desc);
	for (size_t i = 0; r >= 0 && i < ns->n_sysctls; i++)
		if (!shm_sysctl(ns->sysctls[i]->name))
			r = write_sysctl(ns->sysctls[i]->name, ns->sysctls[i]->value);
	for (size_t i = 0; r >= 0 && i < ns->n_queues; i++)
		r = restore_queue(obj, ns->queues[i]);
	for (size_t i = 0; r >= 0 && i < ns->n_sems; i++)
		r = restore_sems(obj, ns->sems[i]);
	for (size_t i = 0; r >= 0 && i < ns->n_shms; i++)
		r = ns_ipc_shm_restore(ctx, obj, nsid, ns->shms[i]);
	for (size_t i = 0; r >= 0 && i < ns->n_mqueues; i++)
		r = ns_ipc_mq_restore(obj, ns->mqueues[i]);
	for (size_t i = 0; r >= 0 && i < ns->n_sysctls; i++)
		if (shm_sysctl(ns->sysctls[i]->name))
			r = write_sysctl(ns->sysctls[i]->name, ns->sysctls[i]->value);
	/* -1 (none asked for) is what each reads after an object took it, and is not writable. */
	for (size_t i = 0; r >= 0 && i < ns->n_next_ids; i++)
		if (strcmp(ns->next_ids[i]->value, "-1"))
			r = write_sysctl(ns->next_ids[i]->name, ns->next_ids[i]->value);
	return r;
}

int ns_ipc_restore(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_ns_info *ni = obj->data;
	Crf__Ns__IpcNs *ns = NULL;
	int r;

	if (ni->inherited)
		return 0;
	r = read_image(ctx, ni->id, &ns);
	if (r < 0)
		return r;
	r = restore_ns(ctx, obj, ni->id, ns);
	crf__ns__ipc_ns__free_unpacked(ns, NULL);
	return r;
}
