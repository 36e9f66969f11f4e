// SPDX-License-Identifier: GPL-2.0-only
/*
 * IPC namespaces (the ns plugin's own "ipc" handler): the namespace's ipc
 * sysctls, its SysV message queues with their messages and its SysV
 * semaphore sets, saved once per namespace in ipc-ID.img.
 *
 * A child of crf that joins the namespace reads them (ipc objects and
 * sysctls are those of the reader's namespace): /proc/sysvipc/ for the ids,
 * IPC_STAT for the rest, msgrcv(MSG_COPY | IPC_NOWAIT) for each message
 * without taking it off the queue, GETALL for the semaphores.  It refuses,
 * naming them, SysV shared memory segments and POSIX message queues (listed
 * from an mqueue filesystem it mounts in a mount namespace of its own),
 * which are not restored yet.
 *
 * Restore, in the first restored process that has it: unshare(CLONE_NEWIPC),
 * the sysctls, then each object at its id (kernel/msg_next_id and
 * sem_next_id name the id the next one gets), created as its creator
 * (effective uid and gid set to cuid and cgid, for the kernel to record),
 * then its owner, mode, queue size, messages in order, semaphore values;
 * the *_next_id sysctls last.  Not restorable, so not restored: the times
 * and pids of the last operations (stime, lspid...), the sequence counter
 * of ids the kernel hands out next, and semaphores' undo values (SEM_UNDO:
 * a task's adjustments live in the task, where no interface reads them: a
 * restored task that exits does not undo its operations).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mount.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/image.h>
#include <crf/log.h>
#include <crf/plugin.h>

#include "ipc.h"
#include "ipc.pb-c.h"
#include "ns.h"

#ifndef SHM_LOCKED
#define SHM_LOCKED 02000
#endif
#ifndef MSG_COPY
#define MSG_COPY 040000
#endif
#define CHILD_LOGGED 2	   /* the child's exit status when it logged its error */
#define VALUE_MAX    256   /* a sysctl's text */
#define MSG_MAX_SIZE 65536 /* kernel/msgmax is at most this large for us to read */

/* The namespace's ipc sysctls, restored in this order (limits before objects). */
static const char *const sysctls[] = {
	"kernel/shmmax",	 "kernel/shmall",
	"kernel/shmmni",	 "kernel/shm_rmid_forced",
	"kernel/msgmax",	 "kernel/msgmnb",
	"kernel/msgmni",	 "kernel/sem",
	"kernel/auto_msgmni",	 "fs/mqueue/queues_max",
	"fs/mqueue/msg_max",	 "fs/mqueue/msgsize_max",
	"fs/mqueue/msg_default", "fs/mqueue/msgsize_default",
};
static const char *const next_ids[] = {"kernel/shm_next_id", "kernel/msg_next_id",
				       "kernel/sem_next_id"};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static int read_sysctl(const char *name, char *buf, size_t len)
{
	char path[96];
	_cleanup_close_ int fd = -1;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/sys/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, buf, len - 1);
	if (n < 0)
		return crf_error_errno(errno, "%s", path);
	while (n > 0 && buf[n - 1] == '\n')
		n--;
	buf[n] = '\0';
	return 0;
}

/* ---- dump: in the child, inside the namespace --------------------------- */

struct reader {
	const struct crf_object *obj;
	Crf__Ns__IpcNs *ns;
};

static Crf__Ns__IpcSysctl *new_sysctl(const char *name)
{
	Crf__Ns__IpcSysctl *s = calloc(1, sizeof(*s));
	char value[VALUE_MAX];

	if (!s || read_sysctl(name, value, sizeof(value)) < 0)
		return NULL;
	crf__ns__ipc_sysctl__init(s);
	s->name = (char *)name;
	s->value = strdup(value);
	return s->value ? s : NULL;
}

static int read_sysctls(Crf__Ns__IpcSysctl ***out, size_t *n, const char *const *table,
			size_t count)
{
	*out = calloc(count, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (*n = 0; *n < count; (*n)++)
		if (!((*out)[*n] = new_sysctl(table[*n])))
			return -EIO;
	return 0;
}

/* The ids listed in /proc/sysvipc/@what (column 2), or -errno. */
static int list_ids(const char *what, int **ids, size_t *n)
{
	char path[64], line[512];
	_cleanup_fclose_ FILE *f = NULL;
	int key, id;

	snprintf(path, sizeof(path), "/proc/sysvipc/%s", what);
	f = fopen(path, "re");
	if (!f)
		return crf_error_errno(errno, "%s", path);
	*ids = NULL;
	*n = 0;
	if (!fgets(line, sizeof(line), f))
		return 0;
	while (fgets(line, sizeof(line), f)) {
		int *v = realloc(*ids, (*n + 1) * sizeof(int));

		if (!v)
			return -ENOMEM;
		*ids = v;
		if (sscanf(line, "%d %d", &key, &id) != 2)
			return crf_error_errno(EIO, "%s: '%.80s'", path, line);
		(*ids)[(*n)++] = id;
	}
	return 0;
}

static Crf__Ns__IpcPerm *new_perm(const struct ipc_perm *p, int id)
{
	Crf__Ns__IpcPerm *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	crf__ns__ipc_perm__init(m);
	m->key = p->__key;
	m->id = id;
	m->mode = p->mode & 0777;
	m->uid = p->uid;
	m->gid = p->gid;
	m->cuid = p->cuid;
	m->cgid = p->cgid;
	return m;
}

static bool rmid_forced(const Crf__Ns__IpcNs *ns)
{
	for (size_t i = 0; i < ns->n_sysctls; i++)
		if (!strcmp(ns->sysctls[i]->name, "kernel/shm_rmid_forced"))
			return strcmp(ns->sysctls[i]->value, "0") != 0;
	return false;
}

/* SysV shared memory segments: what they are; crf saves their pages (ipc-shm.c). */
static int read_shms(struct reader *rd)
{
	_cleanup_free_ int *ids = NULL;
	size_t n;
	int r = list_ids("shm", &ids, &n);

	if (r < 0)
		return r;
	rd->ns->shms = calloc(n ? n : 1, sizeof(*rd->ns->shms));
	if (!rd->ns->shms)
		return -ENOMEM;
	for (size_t i = 0; r >= 0 && i < n; i++) {
		Crf__Ns__IpcShm *m = calloc(1, sizeof(*m));
		struct shmid_ds ds;

		if (!m)
			return -ENOMEM;
		crf__ns__ipc_shm__init(m);
		rd->ns->shms[rd->ns->n_shms++] = m;
		if (shmctl(ids[i], IPC_STAT, &ds) < 0)
			return crf_error_errno(
				errno, "pid %d: namespace %s: SysV shared memory segment %d",
				(int)rd->obj->pid, rd->obj->desc, ids[i]);
		r = ns_ipc_shm_check(rd->obj, ids[i], &ds, rmid_forced(rd->ns));
		m->perm = new_perm(&ds.shm_perm, ids[i]);
		m->size = ds.shm_segsz;
		m->locked = (ds.shm_perm.mode & SHM_LOCKED) != 0;
		if (r >= 0 && !m->perm)
			r = -ENOMEM;
	}
	return r;
}

/* POSIX message queues: listed from an mqueue filesystem of this namespace (ipc-mq.c). */
static int read_mqueues(struct reader *rd)
{
	char dir[] = "/tmp";

	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("mqueue", dir, "mqueue", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return crf_error_errno(errno, "pid %d: namespace %s: an mqueue filesystem of it",
				       (int)rd->obj->pid, rd->obj->desc);
	return ns_ipc_mq_read(rd->obj, dir, rd->ns);
}

static int read_msgs(struct reader *rd, Crf__Ns__IpcMsgQueue *q, int id, size_t qnum)
{
	struct {
		long mtype;
		char mtext[MSG_MAX_SIZE];
	} *buf = malloc(sizeof(*buf));

	q->msgs = calloc(qnum ? qnum : 1, sizeof(*q->msgs));
	if (!buf || !q->msgs)
		return -ENOMEM;
	for (size_t i = 0; i < qnum; i++) {
		ssize_t len = msgrcv(id, buf, MSG_MAX_SIZE, (long)i, IPC_NOWAIT | MSG_COPY);
		Crf__Ns__IpcMsg *m = calloc(1, sizeof(*m));

		if (len < 0 || !m)
			return crf_error_errno(
				len < 0 ? errno : ENOMEM,
				"pid %d: namespace %s: message %zu of queue %d (MSG_COPY)",
				(int)rd->obj->pid, rd->obj->desc, i, id);
		crf__ns__ipc_msg__init(m);
		m->mtype = buf->mtype;
		m->mtext.len = (size_t)len;
		m->mtext.data = malloc(len ? (size_t)len : 1);
		if (!m->mtext.data)
			return -ENOMEM;
		memcpy(m->mtext.data, buf->mtext, (size_t)len);
		q->msgs[q->n_msgs++] = m;
	}
	return 0;
}

static int read_queues(struct reader *rd)
{
	_cleanup_free_ int *ids = NULL;
	size_t n;
	int r = list_ids("msg", &ids, &n);

	if (r < 0)
		return r;
	rd->ns->queues = calloc(n ? n : 1, sizeof(*rd->ns->queues));
	if (!rd->ns->queues)
		return -ENOMEM;
	for (size_t i = 0; r >= 0 && i < n; i++) {
		Crf__Ns__IpcMsgQueue *q = calloc(1, sizeof(*q));
		struct msqid_ds ds;

		if (!q)
			return -ENOMEM;
		crf__ns__ipc_msg_queue__init(q);
		rd->ns->queues[rd->ns->n_queues++] = q;
		if (msgctl(ids[i], IPC_STAT, &ds) < 0)
			return crf_error_errno(errno, "pid %d: namespace %s: message queue %d",
					       (int)rd->obj->pid, rd->obj->desc, ids[i]);
		q->perm = new_perm(&ds.msg_perm, ids[i]);
		q->qbytes = ds.msg_qbytes;
		r = q->perm ? read_msgs(rd, q, ids[i], ds.msg_qnum) : -ENOMEM;
	}
	return r;
}

static int read_sems(struct reader *rd)
{
	_cleanup_free_ int *ids = NULL;
	size_t n;
	int r = list_ids("sem", &ids, &n);

	if (r < 0)
		return r;
	rd->ns->sems = calloc(n ? n : 1, sizeof(*rd->ns->sems));
	if (!rd->ns->sems)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		Crf__Ns__IpcSemSet *s = calloc(1, sizeof(*s));
		struct semid_ds ds;
		unsigned short *v;

		if (!s)
			return -ENOMEM;
		crf__ns__ipc_sem_set__init(s);
		rd->ns->sems[rd->ns->n_sems++] = s;
		if (semctl(ids[i], 0, IPC_STAT, &ds) < 0)
			return crf_error_errno(errno, "pid %d: namespace %s: semaphore set %d",
					       (int)rd->obj->pid, rd->obj->desc, ids[i]);
		s->perm = new_perm(&ds.sem_perm, ids[i]);
		v = calloc(ds.sem_nsems + 1, sizeof(*v));
		s->values = calloc(ds.sem_nsems + 1, sizeof(*s->values));
		if (!s->perm || !v || !s->values)
			return -ENOMEM;
		if (semctl(ids[i], 0, GETALL, v) < 0)
			return crf_error_errno(errno,
					       "pid %d: namespace %s: semaphore set %d: GETALL",
					       (int)rd->obj->pid, rd->obj->desc, ids[i]);
		for (size_t k = 0; k < ds.sem_nsems; k++)
			s->values[s->n_values++] = v[k];
		free(v);
	}
	return 0;
}

/* The child: read, pack, write to @out; exits CHILD_LOGGED after an error it logged. */
static _Noreturn void dump_child(const struct crf_object *obj, int nsfd, int out)
{
	Crf__Ns__IpcNs ns = CRF__NS__IPC_NS__INIT;
	struct reader rd = {.obj = obj, .ns = &ns};
	uint8_t *buf;
	size_t len, done = 0;
	int r;

	if (setns(nsfd, CLONE_NEWIPC) < 0)
		_exit(crf_error_errno(errno, "pid %d: namespace %s: join it", (int)obj->pid,
				      obj->desc) < 0
			      ? CHILD_LOGGED
			      : 1);
	r = read_sysctls(&ns.sysctls, &ns.n_sysctls, sysctls, N(sysctls));
	if (r >= 0)
		r = read_sysctls(&ns.next_ids, &ns.n_next_ids, next_ids, N(next_ids));
	if (r >= 0)
		r = read_shms(&rd);
	if (r >= 0)
		r = read_queues(&rd);
	if (r >= 0)
		r = read_sems(&rd);
	if (r >= 0)
		r = read_mqueues(&rd);
	if (r < 0)
		_exit(CHILD_LOGGED);
	len = crf__ns__ipc_ns__get_packed_size(&ns);
	buf = malloc(len ? len : 1);
	if (!buf)
		_exit(1);
	crf__ns__ipc_ns__pack(&ns, buf);
	while (done < len) {
		ssize_t n = write(out, buf + done, len - done);

		if (n <= 0)
			_exit(1);
		done += (size_t)n;
	}
	_exit(0);
}

/* Run dump_child and read what it packed. */
static int read_ns(const struct crf_object *obj, int nsfd, Crf__Ns__IpcNs **out)
{
	_cleanup_free_ uint8_t *buf = NULL;
	size_t len = 0, cap = 0;
	int p[2], status;
	ssize_t n = 0;
	pid_t child;

	if (pipe2(p, O_CLOEXEC) < 0)
		return crf_error_errno(errno, "pipe");
	child = fork();
	if (child == 0) {
		close(p[0]);
		dump_child(obj, nsfd, p[1]);
	}
	close(p[1]);
	while (child > 0) {
		if (len == cap) {
			uint8_t *b = realloc(buf, cap = cap ? 2 * cap : 65536);

			if (!b)
				break;
			buf = b;
		}
		n = read(p[0], buf + len, cap - len);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(p[0]);
	if (child < 0)
		return crf_error_errno(errno, "fork");
	if (waitpid(child, &status, 0) != child)
		return crf_error_errno(errno, "waitpid");
	if (WIFEXITED(status) && WEXITSTATUS(status) == CHILD_LOGGED)
		return -ENOTSUP;
	if (n < 0 || !WIFEXITED(status) || WEXITSTATUS(status) || len == cap)
		return crf_error_errno(EIO, "pid %d: namespace %s: cannot read it from inside",
				       (int)obj->pid, obj->desc);
	*out = crf__ns__ipc_ns__unpack(NULL, len, buf);
	return *out ? 0
		    : crf_error_errno(EIO, "pid %d: namespace %s: unpack", (int)obj->pid,
				      obj->desc);
}

static void ipc_image(char *buf, size_t len, uint64_t id)
{
	snprintf(buf, len, "ipc-%llu.img", (unsigned long long)id);
}

int ns_ipc_dump(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_ns_info *ni = obj->data;
	_cleanup_img_ struct crf_img *img = NULL;
	_cleanup_close_ int fd = -1;
	Crf__Ns__IpcNs *ns = NULL;
	char name[64];
	int r;

	ipc_image(name, sizeof(name), ni->id);
	r = ns_check_first(obj->pid, ni);
	if (r < 0)
		return r;
	if (faccessat(crf_imgdir_fd(crf_ctx_images(ctx)), name, F_OK, 0) == 0)
		return 0;
	fd = ns_open_of(obj, "ipc");
	if (fd < 0)
		return fd;
	r = ns_check_owner(obj, fd);
	if (r >= 0)
		r = read_ns(obj, fd, &ns);
	if (r >= 0)
		r = ns_ipc_shm_save(ctx, obj, fd, ni->id, ns);
	if (r >= 0)
		r = crf_img_create(crf_ctx_images(ctx), name, &crf__ns__ipc_ns__descriptor, &img);
	if (r >= 0)
		r = crf_img_write(img, &ns->base);
	if (r >= 0)
		crf_info("namespace %s: %zu message queues, %zu semaphore sets, %zu shared "
			 "memory segments, %zu POSIX message queues",
			 obj->desc, ns->n_queues, ns->n_sems, ns->n_shms, ns->n_mqueues);
	if (ns)
		crf__ns__ipc_ns__free_unpacked(ns, NULL);
	return r < 0 ? r : crf_img_close(TAKE_PTR(img));
}
