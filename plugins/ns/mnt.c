// SPDX-License-Identifier: GPL-2.0-only
/*
 * The mount namespace handler's dump (kind "mnt", docs/ns-mnt.md).
 *
 * The table is read from a short-lived child of crf that joins the
 * namespace (setns puts it at the namespace's root, so its mountinfo holds
 * every mount, whatever the task's root), and each mount is classified:
 *
 *   MNT_CRF   a copy of crf's own mount of the same place (what unshare
 *             copied): same filesystem, root, source, parent;
 *   MNT_NEW   a tmpfs (its contents saved from a detached clone the child
 *             makes with open_tree), proc, sysfs or mqueue of its own;
 *   MNT_BIND  a bind mount of a file or directory crf reaches: the source is
 *             a mount of crf's of the same filesystem whose root holds the
 *             mount's root, checked by device and inode;
 *   MNT_EXT   a mount crf dump --external mnt[MP]:KEY names (MP its place in
 *             the namespace): only its flags and propagation are saved, crf
 *             restore --external mnt[KEY]:PATH binds PATH there.
 *
 * The namespace's root is a copy of crf's, or a bind of a directory of
 * crf's (a container root, pivot_root'ed into: the restore builds the tree
 * on it and pivots; docs/ns-mnt.md).
 *
 * Anything else is refused by name: a container root on a filesystem of its
 * own, an unknown filesystem or one crf cannot reach (a block device
 * mounted in the namespace), a mount covering another at the same place,
 * a second mount of a filesystem made in the namespace, peers of crf's
 * mounts, peer groups of more than one mount, a slave of anything but
 * crf's mounts, sysfs or mqueue of a net or IPC namespace not crf's, a
 * queue in an mqueue, an fd or mapping of the task's on a filesystem the
 * restore makes anew (files there would come back as other inodes), and in
 * a container an fd or cwd on a mount of crf's (outside the container).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <linux/mount.h>
#include <unistd.h>

#include <crf/image.h>
#include <crf/log.h>

#include "mnt.h"
#include "ns.h"
#include "mnt.pb-c.h"

/* A child of crf in the task's mount namespace, cloning mounts on request. */
struct mnt_join {
	pid_t pid;
	int sock;
};

static int send_fd(int sock, int fd, int err)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {0};
	struct iovec iov = {.iov_base = &err, .iov_len = sizeof(err)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

	if (fd >= 0) {
		struct cmsghdr *c;

		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	return sendmsg(sock, &mh, MSG_NOSIGNAL) == sizeof(err) ? 0 : -1;
}

static void join_child(int nsfd, int sock)
{
	char path[4097];
	ssize_t n;

	if (setns(nsfd, CLONE_NEWNS) < 0 || send_fd(sock, -1, 0) < 0)
		_exit(1);
	while ((n = recv(sock, path, sizeof(path) - 1, 0)) > 0) {
		int fd;

		path[n] = '\0';
		fd = (int)syscall(SYS_open_tree, AT_FDCWD, path,
				  OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_NO_AUTOMOUNT);
		/* An unbindable one is not cloned: the mount itself, what covers it included. */
		if (fd < 0 && errno == EINVAL)
			fd = open(path, O_PATH | O_CLOEXEC);
		if (send_fd(sock, fd, fd < 0 ? errno : 0) < 0)
			_exit(1);
		if (fd >= 0)
			close(fd);
	}
	_exit(0);
}

static int recv_fd(int sock, int *fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	int err = EIO;
	struct iovec iov = {.iov_base = &err, .iov_len = sizeof(err)};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c;

	*fd = -1;
	if (recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) != sizeof(err))
		return -EIO;
	c = CMSG_FIRSTHDR(&mh);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
		memcpy(fd, CMSG_DATA(c), sizeof(int));
	if (err && *fd >= 0) {
		close(*fd);
		*fd = -1;
	}
	return -err;
}

static int join_start(pid_t pid, struct mnt_join *j)
{
	char path[64];
	int sv[2], nsfd, fd, r;

	j->pid = -1;
	j->sock = -1;
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	nsfd = open(path, O_RDONLY | O_CLOEXEC);
	if (nsfd < 0)
		return crf_error_errno(errno, "%s", path);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		r = -errno;
		close(nsfd);
		return crf_error_errno(r, "socketpair");
	}
	j->pid = fork();
	if (j->pid == 0) {
		close(sv[0]);
		join_child(nsfd, sv[1]);
	}
	r = j->pid < 0 ? -errno : 0;
	close(nsfd);
	close(sv[1]);
	j->sock = sv[0];
	if (r < 0)
		return crf_error_errno(r, "fork");
	r = recv_fd(j->sock, &fd);
	if (r < 0)
		return crf_error_errno(EIO, "pid %d: cannot join its mount namespace", (int)pid);
	return 0;
}

static void join_stop(struct mnt_join *j)
{
	int status;

	if (j->sock >= 0)
		close(j->sock);
	if (j->pid > 0)
		waitpid(j->pid, &status, 0);
	j->sock = j->pid = -1;
}

/*
 * A detached clone of the mount at @path of the namespace (the top one
 * there), or for an unbindable mount an O_PATH fd of its root.
 */
static int join_clone(struct mnt_join *j, const char *path, int *fd)
{
	if (send(j->sock, path, strlen(path), MSG_NOSIGNAL) != (ssize_t)strlen(path))
		return -EIO;
	return recv_fd(j->sock, fd);
}

/* ---- classifying -------------------------------------------------------- */

struct mnt_dump {
	struct crf_ctx *ctx;
	pid_t pid;
	const char *desc;
	struct mnt_table t, own;
	Crf__Ns__MntEntry *e; /* one per line of t */
	int *crf;	      /* t line -> own line for MNT_CRF, else -1 */
	char **src;	      /* MNT_BIND sources, MNT_EXT keys, owned */
	struct mnt_join j;
};

static int refuse(const struct mnt_dump *d, const struct mnt_line *m, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int refuse(const struct mnt_dump *d, const struct mnt_line *m, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return crf_error_errno(ENOTSUP, "pid %d: mount namespace %s: mount %u at %s (%s %s): %s",
			       (int)d->pid, d->desc, m->id, m->mount_point, m->fstype, m->source,
			       why);
}

static bool same_fs(const struct mnt_line *a, const struct mnt_line *b)
{
	return a->major == b->major && a->minor == b->minor && !strcmp(a->root, b->root) &&
	       !strcmp(a->fstype, b->fstype) && !strcmp(a->source, b->source);
}

static int line_index(const struct mnt_table *t, unsigned int id)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].id == id)
			return (int)i;
	return -1;
}

/* The own line a copy @i of the table is: same place, same fs, parent the copy's parent. */
static int crf_copy(const struct mnt_dump *d, size_t i)
{
	int err;
	char *ext = mnt_external(d->ctx, d->t.v[i].mount_point, &err);

	/* An external mount is no copy (nor are its children). */
	if (ext) {
		free(ext);
		return -1;
	}
	const struct mnt_line *m = &d->t.v[i];
	int p = line_index(&d->t, m->parent);

	if (p >= 0 && d->crf[p] < 0)
		return -1;
	for (size_t k = 0; k < d->own.n; k++) {
		const struct mnt_line *c = &d->own.v[k];

		if (strcmp(c->mount_point, m->mount_point) || !same_fs(c, m))
			continue;
		if (p < 0 ? line_index(&d->own, c->parent) < 0
			  : c->parent == d->own.v[d->crf[p]].id)
			return (int)k;
	}
	return -1;
}

static bool own_group(const struct mnt_dump *d, unsigned int g)
{
	for (size_t k = 0; k < d->own.n; k++)
		if (d->own.v[k].shared == g)
			return true;
	return false;
}

static bool is_new_fs(const char *fstype)
{
	return !strcmp(fstype, "tmpfs") || !strcmp(fstype, "proc") || !strcmp(fstype, "sysfs") ||
	       !strcmp(fstype, "mqueue") || !strcmp(fstype, "devpts");
}

/* A bind mount of crf's: the own mount of the same fs whose root holds @m's. */
static int bind_source(struct mnt_dump *d, size_t i, const struct stat *st)
{
	const struct mnt_line *m = &d->t.v[i];

	for (size_t k = 0; k < d->own.n; k++) {
		const struct mnt_line *c = &d->own.v[k];
		size_t rl = strlen(c->root);
		const char *rest;
		struct stat sst;
		char *src;

		if (c->major != m->major || c->minor != m->minor || strcmp(c->fstype, m->fstype) ||
		    strcmp(c->source, m->source))
			continue;
		if (strcmp(c->root, "/") &&
		    (strncmp(m->root, c->root, rl) || (m->root[rl] && m->root[rl] != '/')))
			continue;
		rest = strcmp(c->root, "/") ? m->root + rl : m->root;
		if ((!strcmp(c->mount_point, "/")
			     ? asprintf(&src, "%s", *rest ? rest : "/")
			     : asprintf(&src, "%s%s", c->mount_point, rest)) < 0)
			return -ENOMEM;
		if (stat(src, &sst) == 0 && sst.st_dev == st->st_dev && sst.st_ino == st->st_ino) {
			d->src[i] = src;
			return 0;
		}
		free(src);
	}
	return refuse(d, m,
		      "no mount of crf's of this filesystem reaches its root %s: crf "
		      "cannot reproduce its source",
		      m->root);
}

static int classify_one(struct mnt_dump *d, size_t i);

/* A devpts of its own is made again empty: one with a pty (a master open anywhere) is refused. */
static int devpts_empty(struct mnt_dump *d, const struct mnt_line *m)
{
	char where[4200];
	int fd, r;

	r = join_clone(&d->j, m->mount_point, &fd);
	if (r < 0)
		return crf_error_errno(r, "pid %d: mount namespace %s: open_tree %s", (int)d->pid,
				       d->desc, m->mount_point);
	snprintf(where, sizeof(where), "pid %d: mount namespace %s: mount %u at %s (devpts %s)",
		 (int)d->pid, d->desc, m->id, m->mount_point, m->source);
	r = mnt_fs_empty(fd, where, "ptmx", "pty");
	close(fd);
	return r;
}

/*
 * A mount covering its parent at the same place: only copies of crf's
 * (unshare copied both): a tmpfs under another would be read through the
 * top one, and the restore reaches a mount by its place.
 */
static int classify(struct mnt_dump *d, size_t i)
{
	const struct mnt_line *m = &d->t.v[i];
	int p = line_index(&d->t, m->parent), r = classify_one(d, i);

	if (r < 0 || p < 0 || strcmp(d->t.v[p].mount_point, m->mount_point))
		return r;
	if (d->e[i].how != CRF__NS__MNT_HOW__MNT_CRF || d->e[p].how != CRF__NS__MNT_HOW__MNT_CRF)
		return refuse(d, &d->t.v[p], "mount %u covers it at the same place: not restored",
			      m->id);
	return 0;
}

static int classify_one(struct mnt_dump *d, size_t i)
{
	const struct mnt_line *m = &d->t.v[i];
	Crf__Ns__MntEntry *e = &d->e[i];
	int p = line_index(&d->t, m->parent), fd, r;
	bool theirs = false; /* crf has a mount of its filesystem */
	uint64_t attr;
	struct stat st;

	crf__ns__mnt_entry__init(e);
	e->id = m->id;
	e->parent = m->parent;
	e->major = m->major;
	e->minor = m->minor;
	e->root = m->root;
	e->mount_point = m->mount_point;
	e->opts = m->opts;
	e->fstype = m->fstype;
	e->source = m->source;
	e->super_opts = m->super_opts;
	e->shared = m->shared;
	e->master = m->master;
	e->unbindable = m->unbindable;
	if (mnt_opts_attr(m->opts, &attr) < 0)
		return refuse(d, m, "a per-mount option of '%s' is not one crf sets", m->opts);
	d->crf[i] = crf_copy(d, i);
	if (m->shared && own_group(d, m->shared))
		return refuse(d, m,
			      "a peer of a mount of crf's namespace (shared:%u): "
			      "propagation out of the namespace is not restored",
			      m->shared);
	if (m->shared)
		for (size_t k = 0; k < d->t.n; k++)
			if (k != i && d->t.v[k].shared == m->shared)
				return refuse(d, m,
					      "in peer group %u with mount %u: peer groups of "
					      "more than one mount are not restored",
					      m->shared, d->t.v[k].id);
	if (m->master && (d->crf[i] < 0 || d->own.v[d->crf[i]].shared != m->master))
		return refuse(d, m,
			      "a slave of peer group %u, not of crf's mount of the same "
			      "place: not restored",
			      m->master);
	d->src[i] = mnt_external(d->ctx, m->mount_point, &r);
	if (r < 0)
		return r;
	if (d->src[i]) {
		e->how = CRF__NS__MNT_HOW__MNT_EXT;
		e->ext_key = d->src[i];
		return 0;
	}
	if (d->crf[i] >= 0) {
		e->how = CRF__NS__MNT_HOW__MNT_CRF;
		return 0;
	}
	/* A bind of a file or directory of a filesystem made before it in the namespace. */
	for (size_t k = 0; k < i; k++) {
		if (d->e[k].how != CRF__NS__MNT_HOW__MNT_NEW || d->t.v[k].major != m->major ||
		    d->t.v[k].minor != m->minor)
			continue;
		if (strcmp(m->fstype, d->t.v[k].fstype) || strcmp(m->source, d->t.v[k].source) ||
		    !mnt_root_ok(m->root))
			return refuse(d, m,
				      "a second mount of the filesystem of mount %u, made in "
				      "the namespace, not a plain bind of it: not restored",
				      d->t.v[k].id);
		e->how = CRF__NS__MNT_HOW__MNT_NEWBIND;
		e->has_bind_of = true;
		e->bind_of = d->t.v[k].id;
		return 0;
	}
	if (is_new_fs(m->fstype)) {
		bool own_dev = true;

		/* sysfs and mqueue have one superblock per net or IPC namespace: crf's. */
		for (size_t k = 0; k < d->own.n; k++)
			if (d->own.v[k].major == m->major && d->own.v[k].minor == m->minor &&
			    strcmp(m->fstype, "sysfs") && strcmp(m->fstype, "mqueue"))
				own_dev = false;
		if (own_dev) {
			if (strcmp(m->root, "/"))
				return refuse(d, m,
					      "a part (%s) of a filesystem made in the "
					      "namespace: not restored",
					      m->root);
			/*
			 * Of crf's namespace, or of the task's own, which its handler
			 * restores before this one (ns_kinds[]): the restore mounts
			 * the one of the namespace it is in.
			 */
			if (!strcmp(m->fstype, "sysfs") &&
			    (r = mnt_fs_of_ns(d->pid, "net", m)) <= 0)
				return r < 0 ? r
					     : refuse(d, m,
						      "sysfs of a net namespace neither crf's "
						      "nor the task's: not restored");
			if (!strcmp(m->fstype, "mqueue") &&
			    (r = mnt_fs_of_ns(d->pid, "ipc", m)) <= 0)
				return r < 0 ? r
					     : refuse(d, m,
						      "mqueue of an IPC namespace neither "
						      "crf's nor the task's: not restored");
			if (p < 0)
				return refuse(d, m,
					      "a container root on a filesystem of its own, "
					      "which crf does not restore yet (a directory "
					      "of crf's is restored)");
			e->how = CRF__NS__MNT_HOW__MNT_NEW;
			return strcmp(m->fstype, "devpts") ? 0 : devpts_empty(d, m);
		}
	}
	for (size_t k = 0; !theirs && k < d->own.n; k++)
		theirs = d->own.v[k].major == m->major && d->own.v[k].minor == m->minor;
	if (!theirs)
		return refuse(d, m,
			      "a filesystem made in the namespace, of a type or from a "
			      "source crf does not restore (it makes tmpfs, proc, sysfs and "
			      "mqueue, and binds of its own mounts)");
	r = join_clone(&d->j, m->mount_point, &fd);
	if (r < 0)
		return crf_error_errno(r, "pid %d: mount namespace %s: open_tree %s", (int)d->pid,
				       d->desc, m->mount_point);
	r = fstat(fd, &st) < 0 ? crf_error_errno(errno, "fstat") : 0;
	close(fd);
	if (r < 0)
		return r;
	e->how = CRF__NS__MNT_HOW__MNT_BIND;
	r = bind_source(d, i, &st);
	if (r < 0)
		return r;
	e->bind_src = d->src[i];
	e->has_src_dev = e->has_src_ino = true;
	e->src_dev = st.st_dev;
	e->src_ino = st.st_ino;
	return 0;
}

/* ---- the task's files on filesystems made anew -------------------------- */

static const Crf__Ns__MntEntry *new_dev(const struct mnt_dump *d, dev_t dev)
{
	for (size_t i = 0; i < d->t.n; i++)
		if (d->e[i].how == CRF__NS__MNT_HOW__MNT_NEW &&
		    makedev(d->e[i].major, d->e[i].minor) == dev)
			return &d->e[i];
	return NULL;
}

/*
 * A container root: an fd (or the cwd) of the task on a mount not in the
 * container's table (crf's, or one the pivot detached: opened before it)
 * has a path relative to another root, which the restored task, pivoted,
 * cannot reach: refused.  1 when @path (a /proc link) is on such a mount.
 */
static int outside(const struct mnt_dump *d, const char *path, unsigned int *id)
{
	struct statx stx;
	char link[64];
	ssize_t n;

	if (d->t.n == 0 || d->e[0].how == CRF__NS__MNT_HOW__MNT_CRF)
		return 0;
	/* Pipes, sockets, anonymous inodes, memfds live on no mount of a table. */
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0 || link[0] != '/' || (link[n] = '\0', !strncmp(link, "/memfd:", 7)))
		return 0;
	if (statx(AT_FDCWD, path, 0, STATX_MNT_ID | STATX_TYPE, &stx) < 0 ||
	    !(stx.stx_mask & STATX_MNT_ID) || S_ISFIFO(stx.stx_mode) || S_ISSOCK(stx.stx_mode))
		return 0; /* gone since, or no mount ID: the files plugin says */
	*id = (unsigned int)stx.stx_mnt_id;
	return mnt_table_find(&d->t, *id) == NULL;
}

static int check_files(const struct mnt_dump *d)
{
	const Crf__Ns__MntEntry *e;
	char path[300], line[4600];
	unsigned int id = 0;
	struct dirent *de;
	struct stat st;
	FILE *f;
	DIR *dir;
	int r = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)d->pid);
	dir = opendir(path);
	if (!dir)
		return crf_error_errno(errno, "%s", path);
	while (r >= 0 && (de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd/%s", (int)d->pid, de->d_name);
		if (stat(path, &st) < 0)
			continue; /* closed since, or a link crf cannot follow: files says */
		if (outside(d, path, &id)) {
			r = crf_error_errno(
				ENOTSUP,
				"pid %d: fd %s is on mount %u, not one of its container's "
				"mount namespace %s (opened before the pivot): its path "
				"is another namespace's, which the restored task cannot "
				"reach",
				(int)d->pid, de->d_name, id, d->desc);
			break;
		}
		/*
		 * A device node there is made again with its number: the fd is
		 * reopened by path (the files plugin's device kinds), the same
		 * device.  Any other file would be another inode.
		 */
		if (!S_ISCHR(st.st_mode) && (e = new_dev(d, st.st_dev)))
			r = crf_error_errno(ENOTSUP,
					    "pid %d: fd %s is on the %s mounted at %s in mount "
					    "namespace %s, which the restore makes anew: a file "
					    "there would be another inode, not restored",
					    (int)d->pid, de->d_name, e->fstype, e->mount_point,
					    d->desc);
	}
	closedir(dir);
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "/proc/%d/cwd", (int)d->pid);
	if (outside(d, path, &id))
		return crf_error_errno(ENOTSUP,
				       "pid %d: its cwd is on mount %u, not one of its container's "
				       "mount namespace %s: not restored",
				       (int)d->pid, id, d->desc);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)d->pid);
	f = fopen(path, "re");
	if (!f)
		return crf_error_errno(errno, "%s", path);
	while (r >= 0 && fgets(line, sizeof(line), f)) {
		unsigned int maj, min;
		unsigned long ino;

		if (sscanf(line, "%*s %*s %*s %x:%x %lu", &maj, &min, &ino) == 3 && ino &&
		    (e = new_dev(d, makedev(maj, min)))) {
			line[strcspn(line, "\n")] = '\0';
			r = crf_error_errno(ENOTSUP,
					    "pid %d: mapping %s is of a file on the %s mounted at "
					    "%s in mount namespace %s, which the restore makes "
					    "anew: not restored",
					    (int)d->pid, line, e->fstype, e->mount_point, d->desc);
		}
	}
	fclose(f);
	return r;
}

/* ---- writing ------------------------------------------------------------ */

static int save_contents(struct crf_ctx *ctx, struct mnt_dump *d, uint64_t ns, size_t i)
{
	const Crf__Ns__MntEntry *e = &d->e[i];
	struct crf_img *img;
	char name[96], where[4200];
	int fd, r;

	if (e->how != CRF__NS__MNT_HOW__MNT_NEW ||
	    (strcmp(e->fstype, "tmpfs") && strcmp(e->fstype, "mqueue")))
		return 0;
	r = join_clone(&d->j, e->mount_point, &fd);
	if (r < 0)
		return crf_error_errno(r, "pid %d: mount namespace %s: open_tree %s", (int)d->pid,
				       d->desc, e->mount_point);
	snprintf(where, sizeof(where), "pid %d: mount namespace %s: %s at %s", (int)d->pid, d->desc,
		 e->fstype, e->mount_point);
	/* The queues of the task's own IPC namespace are its handler's (ipc.c). */
	if (!strcmp(e->fstype, "mqueue") && mnt_ns_is_crf(d->pid, "ipc"))
		r = mnt_fs_empty(fd, where, NULL, "queue");
	if (strcmp(e->fstype, "tmpfs")) {
		close(fd);
		return r;
	}
	mnt_image(name, sizeof(name), ns, e->id);
	r = crf_img_create(crf_ctx_images(ctx), name, &crf__ns__mnt_node__descriptor, &img);
	if (r >= 0)
		r = crf_img_finish(img, mnt_tmpfs_save(fd, where, img));
	close(fd);
	return r;
}

static int write_table(struct crf_ctx *ctx, struct mnt_dump *d, uint64_t ns)
{
	struct crf_img *img;
	char name[96];
	int r = 0;

	for (size_t i = 0; r >= 0 && i < d->t.n; i++)
		r = save_contents(ctx, d, ns, i);
	if (r < 0)
		return r;
	mnt_image(name, sizeof(name), ns, 0);
	r = crf_img_create(crf_ctx_images(ctx), name, &crf__ns__mnt_entry__descriptor, &img);
	for (size_t i = 0; r >= 0 && i < d->t.n; i++)
		r = crf_img_write(img, &d->e[i].base);
	return crf_img_finish(img, r);
}

int mnt_dump(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_ns_info *ni = obj->data;
	struct mnt_dump d = {.ctx = ctx, .pid = obj->pid, .desc = obj->desc, .j = {-1, -1}};
	char path[64], name[96];
	bool have;
	int r;

	mnt_image(name, sizeof(name), ni->id, 0);
	have = faccessat(crf_imgdir_fd(crf_ctx_images(ctx)), name, F_OK, 0) == 0;
	r = ns_check_first(obj->pid, ni);
	if (r >= 0)
		r = join_start(obj->pid, &d.j);
	if (r >= 0) {
		snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)d.j.pid);
		r = mnt_table_read(path, &d.t);
	}
	if (r >= 0)
		r = mnt_table_read("/proc/self/mountinfo", &d.own);
	if (r >= 0) {
		d.e = calloc(d.t.n ? d.t.n : 1, sizeof(*d.e));
		d.crf = calloc(d.t.n ? d.t.n : 1, sizeof(*d.crf));
		d.src = calloc(d.t.n ? d.t.n : 1, sizeof(*d.src));
		if (!d.e || !d.crf || !d.src)
			r = -ENOMEM;
	}
	for (size_t i = 0; r >= 0 && i < d.t.n; i++)
		r = classify(&d, i);
	if (r >= 0)
		r = check_files(&d);
	if (r >= 0 && !have)
		r = write_table(ctx, &d, ni->id);
	if (r >= 0 && !have)
		crf_info("saved mount namespace %s: %zu mounts", obj->desc, d.t.n);
	join_stop(&d.j);
	for (size_t i = 0; d.src && i < d.t.n; i++)
		free(d.src[i]);
	free(d.src);
	free(d.crf);
	free(d.e);
	mnt_table_free(&d.t);
	mnt_table_free(&d.own);
	return r;
}
