// SPDX-License-Identifier: GPL-2.0-only
/*
 * POSIX message queues of an IPC namespace not crf's (the "ipc" handler's),
 * saved in ipc-ID.img with the namespace.
 *
 * The dump, in the child of crf that joined the namespace (ipc.c): it
 * mounts the namespace's mqueue filesystem in a mount namespace of its own
 * and lists the queues there; for each, the owner and mode (stat), the
 * notification (the queue file's NOTIFY_PID: a registration is refused, as
 * the messages put back would fire it), mq_maxmsg and mq_msgsize.  No call
 * reads a message without taking it off the queue: the child takes them
 * all (mq_receive gives them highest priority first, in order of arrival
 * within one priority) and sends them back at once in that same order,
 * which rebuilds the queue as it was, every one of them whatever failed in
 * between; then it checks that the queue holds as many as before.  The tree
 * is frozen meanwhile: none of its tasks waits on the queue.
 *
 * The restore, in the new namespace (ipc-restore.c): mq_open(O_CREAT |
 * O_EXCL) with the saved sizes, every message sent in the saved order with
 * its priority, then the owner and mode (fchown, fchmod: exactly, whatever
 * the umask).
 *
 * Not restored: the queue's times, and whose RLIMIT_MSGQUEUE its size is
 * counted against (the restoring process's user, root).  Refused: a queue
 * with an mq_notify registration; more than 32 MiB of messages in one
 * namespace.  Open mqueue fds are refused by the files plugin, named.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mqueue.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/log.h>
#include <crf/plugin.h>

#include "ipc.h"

#define MQ_SAVE_MAX (32u << 20) /* bytes of messages one namespace may save */
#define MQ_MAXMSG   65536	/* HARD_MSGMAX */
#define MQ_MSGSIZE  (16 << 20)	/* HARD_MSGSIZEMAX */
#define MQ_PRIO	    32768	/* MQ_PRIO_MAX */

struct mq_reader {
	const struct crf_object *obj;
	const char *dir;
	size_t saved;
};

/* The queue file's NOTIFY_PID: who registered with mq_notify (0: nobody). */
static int notify_pid(struct mq_reader *rd, const char *name, int *pid)
{
	char path[PATH_MAX], text[256];
	_cleanup_close_ int fd = -1;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", rd->dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, text, sizeof(text) - 1);
	if (n < 0)
		return crf_error_errno(errno, "pid %d: namespace %s: POSIX message queue /%s",
				       (int)rd->obj->pid, rd->obj->desc, name);
	text[n] = '\0';
	if (!strstr(text, "NOTIFY_PID:") ||
	    sscanf(strstr(text, "NOTIFY_PID:"), "NOTIFY_PID:%d", pid) != 1)
		return crf_error_errno(EIO,
				       "pid %d: namespace %s: POSIX message queue /%s: '%.80s'",
				       (int)rd->obj->pid, rd->obj->desc, name, text);
	return 0;
}

static Crf__Ns__IpcMqMsg *new_msg(const char *buf, ssize_t len, unsigned prio)
{
	Crf__Ns__IpcMqMsg *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	crf__ns__ipc_mq_msg__init(m);
	m->prio = prio;
	m->data.len = (size_t)len;
	m->data.data = malloc(len ? (size_t)len : 1);
	if (!m->data.data) {
		free(m);
		return NULL;
	}
	memcpy(m->data.data, buf, (size_t)len);
	return m;
}

/* Every message off @mqd into @q, then all of them back in the same order. */
static int take_and_put_back(struct mq_reader *rd, const char *name, mqd_t mqd,
			     Crf__Ns__IpcMqueue *q, long cur)
{
	_cleanup_free_ char *buf = malloc((size_t)q->msgsize);
	struct mq_attr a;
	int r = 0, e = 0;

	q->msgs = calloc(cur ? (size_t)cur : 1, sizeof(*q->msgs));
	if (!buf || !q->msgs)
		return -ENOMEM;
	while (q->n_msgs < (size_t)cur) {
		unsigned prio;
		ssize_t n = mq_receive(mqd, buf, (size_t)q->msgsize, &prio);
		Crf__Ns__IpcMqMsg *m = n < 0 ? NULL : new_msg(buf, n, prio);

		if (!m) {
			e = n < 0 ? errno : ENOMEM;
			if (n >= 0 && mq_send(mqd, buf, (size_t)n, prio) < 0)
				r = crf_error_errno(errno,
						    "pid %d: namespace %s: POSIX message "
						    "queue /%s: a message lost",
						    (int)rd->obj->pid, rd->obj->desc, name);
			break;
		}
		q->msgs[q->n_msgs++] = m;
	}
	for (size_t i = 0; i < q->n_msgs; i++)
		if (mq_send(mqd, (const char *)q->msgs[i]->data.data, q->msgs[i]->data.len,
			    q->msgs[i]->prio) < 0)
			r = crf_error_errno(errno,
					    "pid %d: namespace %s: POSIX message queue /%s: "
					    "message %zu lost putting it back",
					    (int)rd->obj->pid, rd->obj->desc, name, i);
	if (r >= 0 && e)
		r = crf_error_errno(e, "pid %d: namespace %s: POSIX message queue /%s: message %zu",
				    (int)rd->obj->pid, rd->obj->desc, name, q->n_msgs);
	if (r >= 0 && (mq_getattr(mqd, &a) < 0 || a.mq_curmsgs != cur))
		r = crf_error_errno(EIO,
				    "pid %d: namespace %s: POSIX message queue /%s holds %ld "
				    "messages after the dump, not %ld",
				    (int)rd->obj->pid, rd->obj->desc, name, (long)a.mq_curmsgs,
				    cur);
	return r;
}

static int read_queue(struct mq_reader *rd, const char *name, Crf__Ns__IpcMqueue *q)
{
	char path[PATH_MAX], qname[NAME_MAX + 2];
	struct mq_attr a;
	struct stat st;
	mqd_t mqd;
	int pid, r;

	snprintf(path, sizeof(path), "%s/%s", rd->dir, name);
	snprintf(qname, sizeof(qname), "/%s", name);
	q->name = strdup(name);
	if (!q->name)
		return -ENOMEM;
	if (stat(path, &st) < 0)
		return crf_error_errno(errno, "pid %d: namespace %s: POSIX message queue /%s",
				       (int)rd->obj->pid, rd->obj->desc, name);
	q->mode = st.st_mode & 07777;
	q->uid = st.st_uid;
	q->gid = st.st_gid;
	r = notify_pid(rd, name, &pid);
	if (r >= 0 && pid)
		return crf_error_errno(ENOTSUP,
				       "pid %d: namespace %s: POSIX message queue /%s is "
				       "registered for mq_notify by pid %d, which crf does not "
				       "restore",
				       (int)rd->obj->pid, rd->obj->desc, name, pid);
	if (r < 0)
		return r;
	mqd = mq_open(qname, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (mqd == (mqd_t)-1 || mq_getattr(mqd, &a) < 0) {
		r = crf_error_errno(errno, "pid %d: namespace %s: POSIX message queue /%s: open",
				    (int)rd->obj->pid, rd->obj->desc, name);
		if (mqd != (mqd_t)-1)
			mq_close(mqd);
		return r;
	}
	q->maxmsg = a.mq_maxmsg;
	q->msgsize = a.mq_msgsize;
	rd->saved += (size_t)a.mq_curmsgs * (size_t)a.mq_msgsize;
	if (rd->saved > MQ_SAVE_MAX)
		r = crf_error_errno(E2BIG,
				    "pid %d: namespace %s: POSIX message queue /%s: over %u MiB "
				    "of messages in the namespace, which crf does not save",
				    (int)rd->obj->pid, rd->obj->desc, name, MQ_SAVE_MAX >> 20);
	else
		r = take_and_put_back(rd, name, mqd, q, a.mq_curmsgs);
	mq_close(mqd);
	return r;
}

int ns_ipc_mq_read(const struct crf_object *obj, const char *dir, Crf__Ns__IpcNs *ns)
{
	struct mq_reader rd = {.obj = obj, .dir = dir};
	_cleanup_closedir_ DIR *d = opendir(dir);
	struct dirent *e;
	int r = 0;

	if (!d)
		return crf_error_errno(errno, "pid %d: namespace %s: its mqueue filesystem",
				       (int)obj->pid, obj->desc);
	while (r >= 0 && (e = readdir(d))) {
		Crf__Ns__IpcMqueue *q, **v;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		q = calloc(1, sizeof(*q));
		v = realloc(ns->mqueues, (ns->n_mqueues + 1) * sizeof(*v));
		if (!q || !v) {
			free(q);
			return -ENOMEM;
		}
		crf__ns__ipc_mqueue__init(q);
		ns->mqueues = v;
		ns->mqueues[ns->n_mqueues++] = q;
		r = read_queue(&rd, e->d_name, q);
	}
	return r;
}

int ns_ipc_mq_check(const char *img, size_t i, const Crf__Ns__IpcMqueue *q)
{
	size_t len = strlen(q->name);

	if (!len || len > NAME_MAX || strchr(q->name, '/') || !strcmp(q->name, ".") ||
	    !strcmp(q->name, "..") || q->mode > 07777 || q->maxmsg < 1 || q->maxmsg > MQ_MAXMSG ||
	    q->msgsize < 1 || q->msgsize > MQ_MSGSIZE || q->n_msgs > (size_t)q->maxmsg)
		return crf_error_errno(EBADMSG,
				       "%s: IpcNs.mqueues[%zu]: a bad name, mode, size or number "
				       "of messages",
				       img, i);
	for (size_t k = 0; k < q->n_msgs; k++)
		if (q->msgs[k]->data.len > (size_t)q->msgsize || q->msgs[k]->prio >= MQ_PRIO)
			return crf_error_errno(EBADMSG,
					       "%s: IpcNs.mqueues[%zu].msgs[%zu]: over mq_msgsize "
					       "or priority %u",
					       img, i, k, q->msgs[k]->prio);
	return 0;
}

int ns_ipc_mq_restore(const struct crf_object *obj, const Crf__Ns__IpcMqueue *q)
{
	struct mq_attr a = {.mq_maxmsg = q->maxmsg, .mq_msgsize = q->msgsize};
	char name[NAME_MAX + 2];
	int r = 0;
	mqd_t mqd;

	snprintf(name, sizeof(name), "/%s", q->name);
	mqd = mq_open(name, O_CREAT | O_EXCL | O_WRONLY | O_NONBLOCK | O_CLOEXEC, 0600, &a);
	if (mqd == (mqd_t)-1)
		return crf_error_errno(errno,
				       "pid %d: namespace %s: POSIX message queue %s (%lld "
				       "messages of %lld bytes)",
				       (int)obj->pid, obj->desc, name, (long long)q->maxmsg,
				       (long long)q->msgsize);
	/* An empty message unpacks with no data pointer. */
	for (size_t i = 0; r >= 0 && i < q->n_msgs; i++)
		if (mq_send(mqd, q->msgs[i]->data.len ? (const char *)q->msgs[i]->data.data : "",
			    q->msgs[i]->data.len, q->msgs[i]->prio) < 0)
			r = crf_error_errno(errno, "pid %d: namespace %s: message %zu of %s",
					    (int)obj->pid, obj->desc, i, name);
	if (r >= 0 && (fchown(mqd, q->uid, q->gid) < 0 || fchmod(mqd, q->mode) < 0))
		r = crf_error_errno(errno, "pid %d: namespace %s: %s: owner %u:%u, mode %o",
				    (int)obj->pid, obj->desc, name, q->uid, q->gid, q->mode);
	mq_close(mqd);
	return r;
}
