// SPDX-License-Identifier: GPL-2.0-only
/*
 * Open POSIX message queue fds: the "mqueue" fd kind, which the files
 * plugin names for an fd on an mqueue filesystem (fdtable.c) and hands to
 * this plugin, whose IPC namespaces hold the queues (ipc-mq.c).  The files
 * plugin keeps the fd table's part: the number, dups inside the task,
 * close-on-exec.
 *
 * Restored: an fd on a named queue of the task's IPC namespace when that
 * namespace is not crf's (its queues are saved with it), reopened in the
 * task at restore-task by mq_open with its name, its access mode and
 * O_NONBLOCK (without O_CLOEXEC, which mq_open would keep in the file's
 * flags, where F_GETFL shows it).  At the dump a child of crf that joined the namespace mounts
 * its mqueue filesystem (in a mount namespace of its own) and opens the
 * queue by the fd's name: the fd must be on that filesystem and that inode.
 *
 * Refused at the dump, naming the fd: a queue of crf's own IPC namespace
 * (the host's: crf does not save a queue it cannot attribute to the tree),
 * or of any namespace but the task's (one it left since it opened it);
 * a queue unlinked since (or replaced under its name); status flags other
 * than the access mode and O_NONBLOCK; a queue opened with O_CLOEXEC (the
 * file keeps it, and /proc's fdinfo ORs it into what it shows of the fd's
 * close-on-exec, which the files plugin reads: the fd's own cannot be told;
 * the kernel makes every mqueue fd close-on-exec anyway, and a program that
 * wants it so need not ask); a description another process holds
 * too (an fd inherited across fork, or passed): the files plugin makes a
 * shared description in restore-prepare, before the restored namespace
 * exists.  Every process's fds on the queue's inode are compared with
 * kcmp(KCMP_FILE).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/kcmp.h>
#include <mqueue.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/log.h>
#include <crf/plugin.h>

#include "ns.h"

#ifndef O_LARGEFILE
#define O_LARGEFILE 0100000
#endif
#define MQ_FLAGS (O_ACCMODE | O_NONBLOCK)
#define MQ_KEEP	 (MQ_FLAGS | O_LARGEFILE)

struct ident {
	dev_t fs;  /* the namespace's mqueue filesystem */
	dev_t dev; /* the queue of the name, 0 when there is none */
	ino_t ino;
};

/* In a child inside the namespace: its mqueue filesystem, and the queue named @arg. */
static int open_by_name(int out, void *arg)
{
	struct ident id = {0};
	struct stat st;
	mqd_t m;

	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("mqueue", "/tmp", "mqueue", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0 ||
	    stat("/tmp", &st) < 0)
		return -errno;
	id.fs = st.st_dev;
	m = mq_open(arg, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (m != (mqd_t)-1 && fstat(m, &st) == 0) {
		id.dev = st.st_dev;
		id.ino = st.st_ino;
	}
	if (m != (mqd_t)-1)
		mq_close(m);
	return write(out, &id, sizeof(id)) == sizeof(id) ? 0 : -EIO;
}

static bool crfs_ns(pid_t pid)
{
	struct stat self, task;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ns/ipc", (int)pid);
	if (stat("/proc/self/ns/ipc", &self) < 0 || stat(path, &task) < 0)
		return false;
	return self.st_dev == task.st_dev && self.st_ino == task.st_ino;
}

static bool good_name(const char *path)
{
	return path && path[0] == '/' && path[1] && strlen(path) <= NAME_MAX + 1 &&
	       !strchr(path + 1, '/');
}

/* Another process's fd on the description of @pid's fd @fd (inode @st): 1 and *@other, *@ofd. */
static int find_sharer(pid_t pid, int fd, const struct stat *st, pid_t *other, int *ofd)
{
	_cleanup_closedir_ DIR *proc = opendir("/proc");
	struct dirent *p;

	if (!proc)
		return crf_error_errno(errno, "open /proc");
	while ((p = readdir(proc))) {
		pid_t q = (pid_t)atoi(p->d_name);
		_cleanup_closedir_ DIR *fds = NULL;
		struct dirent *f;
		char path[64];

		if (q <= 0 || q == pid || q == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd", (int)q);
		fds = opendir(path);
		while (fds && (f = readdir(fds))) {
			struct stat s;

			if (f->d_name[0] == '.' || fstatat(dirfd(fds), f->d_name, &s, 0) < 0 ||
			    s.st_dev != st->st_dev || s.st_ino != st->st_ino)
				continue;
			if (syscall(SYS_kcmp, pid, q, KCMP_FILE, fd, atoi(f->d_name)) == 0) {
				*other = q;
				*ofd = atoi(f->d_name);
				return 1;
			}
		}
	}
	return 0;
}

int ns_mqfd_dump(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_fd_info *fi = obj->data;
	char path[64], name[NAME_MAX + 2];
	_cleanup_close_ int nsfd = -1;
	pid_t other = 0;
	struct ident id;
	struct stat st;
	int r, ofd = -1;

	(void)ctx;
	if (!fi || fi->copy < 0 || fstat(fi->copy, &st) < 0)
		return crf_error_errno(fi && fi->copy >= 0 ? errno : EINVAL,
				       "pid %d: fd %d: POSIX message queue", (int)obj->pid,
				       (int)obj->id);
	if (crfs_ns(obj->pid))
		return crf_error_errno(ENOTSUP,
				       "pid %d: fd %d: POSIX message queue %s of crf's own IPC "
				       "namespace, which crf does not save (only the queues of an "
				       "IPC namespace of the tree's are)",
				       (int)obj->pid, (int)obj->id, fi->path);
	if (!good_name(fi->path) || (fi->flags & ~(unsigned)MQ_KEEP))
		return crf_error_errno(ENOTSUP,
				       "pid %d: fd %d: POSIX message queue %s: status flags %#o or "
				       "its name, which crf does not restore",
				       (int)obj->pid, (int)obj->id, fi->path, fi->flags);
	snprintf(name, sizeof(name), "%s", fi->path);
	snprintf(path, sizeof(path), "/proc/%d/ns/ipc", (int)obj->pid);
	nsfd = open(path, O_RDONLY | O_CLOEXEC);
	if (nsfd < 0)
		return crf_error_errno(errno, "pid %d: %s", (int)obj->pid, path);
	r = ns_in_child(nsfd, CLONE_NEWIPC, open_by_name, name, &id, sizeof(id));
	if (r < 0)
		return crf_error_errno(-r, "pid %d: fd %d: POSIX message queue %s: open it by name",
				       (int)obj->pid, (int)obj->id, fi->path);
	if (id.fs != st.st_dev)
		return crf_error_errno(ENOTSUP,
				       "pid %d: fd %d: POSIX message queue %s of another IPC "
				       "namespace than the task's (crf's, or one it left), which "
				       "crf does not save",
				       (int)obj->pid, (int)obj->id, fi->path);
	if (id.dev != st.st_dev || id.ino != st.st_ino)
		return crf_error_errno(ENOTSUP,
				       "pid %d: fd %d: POSIX message queue %s was unlinked (or "
				       "another took its name), which crf does not restore",
				       (int)obj->pid, (int)obj->id, fi->path);
	r = find_sharer(obj->pid, (int)obj->id, &st, &other, &ofd);
	if (r > 0)
		return crf_error_errno(ENOTSUP,
				       "pid %d: fd %d: POSIX message queue %s: its open file is "
				       "pid %d's fd %d too, which crf does not restore yet (one "
				       "description for two processes)",
				       (int)obj->pid, (int)obj->id, fi->path, (int)other, ofd);
	if (r < 0)
		return r;
	/* mq_open keeps O_CLOEXEC in the file's flags, and fdinfo ORs the fd's in. */
	r = fcntl(fi->copy, F_GETFL);
	if (r < 0)
		return crf_error_errno(errno, "pid %d: fd %d: F_GETFL", (int)obj->pid,
				       (int)obj->id);
	if (r & O_CLOEXEC)
		return crf_error_errno(ENOTSUP,
				       "pid %d: fd %d: POSIX message queue %s was opened with "
				       "O_CLOEXEC, which its file keeps and fdinfo shows as the "
				       "fd's: whether the fd is close-on-exec cannot be read",
				       (int)obj->pid, (int)obj->id, fi->path);
	return 0;
}

int ns_mqfd_restore(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_fd_info *fi = obj->data;
	mqd_t m;
	int r;

	if (!fi || !good_name(fi->path) || (fi->flags & ~(unsigned)MQ_KEEP))
		return crf_error_errno(EBADMSG, "pid %d: fd %d: not a POSIX message queue's record",
				       (int)obj->pid, (int)obj->id);
	if (crf_ctx_stage(ctx) != CRF_STAGE_RESTORE_TASK)
		return crf_error_errno(ENOTSUP,
				       "pid %d: fd %d: POSIX message queue %s: a description of "
				       "several processes, which crf does not restore",
				       (int)obj->pid, (int)obj->id, fi->path);
	m = mq_open(fi->path, (int)(fi->flags & MQ_FLAGS));
	if (m == (mqd_t)-1)
		return crf_error_errno(errno, "pid %d: fd %d: POSIX message queue %s",
				       (int)obj->pid, (int)obj->id, fi->path);
	/* The kernel makes it close-on-exec; the files plugin sets the task's. */
	if (fcntl(m, F_SETFD, FD_CLOEXEC) < 0) {
		r = crf_error_errno(errno, "pid %d: fd %d: FD_CLOEXEC", (int)obj->pid,
				    (int)obj->id);
		mq_close(m);
		return r;
	}
	return (int)m;
}
