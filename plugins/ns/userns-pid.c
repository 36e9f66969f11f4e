// SPDX-License-Identifier: GPL-2.0-only
/*
 * A process whose children go to a PID namespace other than its own (the
 * "pid_for_children" kind of CRF_OBJ_NS; see docs/ns-user-pid.md): it
 * called unshare(CLONE_NEWPID).  The core recreates PID namespaces with
 * their inits (rst-plan.c); this handler gives the process its
 * pid_for_children back: pidfc-PID.img says which.
 *
 *   - none has a process yet ("pid:[?]"): the next child is the init of a
 *     new one.  Restored by unshare(CLONE_NEWPID) once the fds are placed,
 *     after the user namespace is joined (userns.c), so that the new one is
 *     owned by the same user namespace as at the dump.
 *   - its init is a child of the process: restored by setns() into the PID
 *     namespace of that child once the fds are placed, before the user
 *     namespace is joined (which would take the right to).
 *   - anything else (its init is gone, or not a child: setns by hand) is
 *     refused by name.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <crf/image.h>
#include <crf/log.h>
#include <crf/plugin.h>
#include <crf/restore.h>

#include "ns.h"
#include "userns.pb-c.h"

static void image_name(char *buf, size_t len, pid_t pid)
{
	snprintf(buf, len, "pidfc-%d.img", (int)pid);
}

/* The NSpid line of /proc/@pid/status into @ids, crf's level first: the number of levels. */
static int ns_pids(pid_t pid, pid_t *ids, int max)
{
	char path[64], *text = malloc(8192), *p, *end;
	ssize_t n;
	int fd, levels = 0;

	if (!text)
		return -ENOMEM;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, text, 8191);
	if (fd >= 0)
		close(fd);
	if (n < 0) {
		free(text);
		return -errno;
	}
	text[n] = '\0';
	p = strstr(text, "\nNSpid:");
	for (p = p ? p + 7 : NULL; p && levels < max; p = end) {
		long v = strtol(p, &end, 10);

		if (end == p)
			break;
		ids[levels++] = (pid_t)v;
	}
	free(text);
	return levels;
}

/* The child of @pid that is the init of PID namespace @id, as @pid sees it; 0: none. */
static int find_init(pid_t pid, uint64_t id, pid_t *init)
{
	pid_t mine[32], its[32];
	int levels = ns_pids(pid, mine, 32), r = 0;
	char path[96], *text = malloc(65536), *p, *end;
	struct dirent *e;
	DIR *d;

	*init = 0;
	if (!text)
		return -ENOMEM;
	if (levels <= 0) {
		free(text);
		return levels < 0 ? levels : -EIO;
	}
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d) {
		free(text);
		return -errno;
	}
	while (!*init && (e = readdir(d))) {
		ssize_t n;
		int fd;

		int tid = atoi(e->d_name);

		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, tid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		n = fd < 0 ? -1 : read(fd, text, 65535);
		if (fd >= 0)
			close(fd);
		if (n < 0)
			continue;
		text[n] = '\0';
		for (p = text; !*init; p = end) {
			long c = strtol(p, &end, 10);
			struct stat st;
			int lv;

			if (end == p)
				break;
			snprintf(path, sizeof(path), "/proc/%ld/ns/pid", c);
			if (stat(path, &st) < 0 || st.st_ino != id)
				continue;
			lv = ns_pids((pid_t)c, its, 32);
			if (lv == levels + 1 && its[lv - 1] == 1)
				*init = its[levels - 1];
		}
	}
	closedir(d);
	free(text);
	return r;
}

int ns_pidfc_dump(struct crf_ctx *ctx, const struct crf_object *obj)
{
	Crf__Ns__PidForChildren m = CRF__NS__PID_FOR_CHILDREN__INIT;
	const struct crf_ns_info *ni = obj->data;
	struct crf_img *img;
	char name[64];
	pid_t init = 0;
	int r = 0;

	if (ni->tid != obj->pid)
		return crf_error_errno(ENOTSUP, "pid %d: thread %d: its own pid_for_children",
				       (int)obj->pid, (int)ni->tid);
	if (ni->id)
		r = find_init(obj->pid, ni->id, &init);
	if (r < 0)
		return crf_error_errno(r, "pid %d: the init of pid:[%llu]", (int)obj->pid,
				       (unsigned long long)ni->id);
	if (ni->id && !init)
		return crf_error_errno(ENOTSUP,
				       "pid %d: its children go to PID namespace pid:[%llu], whose "
				       "init is not its child (gone, or joined with setns): not "
				       "supported",
				       (int)obj->pid, (unsigned long long)ni->id);
	m.pid = obj->pid;
	m.id = ni->id;
	m.init = init;
	image_name(name, sizeof(name), obj->pid);
	r = crf_img_create(crf_ctx_images(ctx), name, &crf__ns__pid_for_children__descriptor, &img);
	if (r < 0)
		return r;
	r = crf_img_write(img, &m.base);
	if (r < 0) {
		crf_img_abort(img);
		return r;
	}
	return crf_img_close(img);
}

/* Inherited through fork, acted on by the process it names. */
static struct {
	pid_t pid; /* the process that restores its pid_for_children */
	uint64_t id;
	pid_t init; /* as in the image */
} fc;

int ns_pidfc_restore(struct crf_ctx *ctx, const struct crf_object *obj)
{
	Crf__Ns__PidForChildren *m;
	struct crf_img *img;
	char name[64];
	int r;

	image_name(name, sizeof(name), obj->pid);
	r = crf_img_open(crf_ctx_images(ctx), name, &crf__ns__pid_for_children__descriptor, &img);
	if (r < 0)
		return r;
	r = crf_img_read(img, (ProtobufCMessage **)&m);
	crf_img_close(img);
	if (r == 0)
		return crf_error_errno(EBADMSG, "%s: no record", name);
	if (r < 0)
		return r;
	if (m->pid != obj->pid || m->init < 0 || (!m->id) != (!m->init))
		r = crf_error_errno(EBADMSG, "%s: a bad record (pid %d, init %d)", name,
				    (int)m->pid, (int)m->init);
	fc.pid = obj->pid;
	fc.id = m->id;
	fc.init = m->init;
	protobuf_c_message_free_unpacked(&m->base, NULL);
	return r < 0 ? r : 0;
}

/* The init's PID namespace, joined for the children to come. */
static int join_init(void *arg)
{
	int fd, r = 0;

	(void)arg;
	/* By pidfd: the PID is the process's own namespace's, whatever /proc shows. */
	fd = (int)syscall(SYS_pidfd_open, fc.init, 0);
	if (fd < 0 || setns(fd, CLONE_NEWPID) < 0)
		r = crf_error_errno(errno,
				    "pid %d: cannot make the PID namespace of its child %d "
				    "(pid:[%llu] at the dump) its children's",
				    (int)fc.pid, (int)fc.init, (unsigned long long)fc.id);
	if (fd >= 0)
		close(fd);
	return r;
}

static int unshare_pid(void *arg)
{
	(void)arg;
	if (unshare(CLONE_NEWPID) < 0)
		return crf_error_errno(errno, "pid %d: unshare(CLONE_NEWPID)", (int)fc.pid);
	return 0;
}

int ns_pidfc_restore_task(struct crf_ctx *ctx, bool after_user)
{
	if (fc.pid != crf_ctx_pid(ctx))
		return 0;
	if (fc.init && !after_user)
		return crf_rst_at_fds_placed(ctx, join_init, NULL, NULL);
	if (!fc.init && after_user)
		return crf_rst_at_fds_placed(ctx, unshare_pid, NULL, NULL);
	return 0;
}
