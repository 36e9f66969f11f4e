// SPDX-License-Identifier: GPL-2.0-only
/*
 * Dump of unix sockets, the fd kind "unix".
 *
 * The files plugin's walk hands each socket (one call per open file
 * description) to net_unix_dump(), tree frozen: unix_diag names its peer,
 * its address and its shutdown state, the files plugin's copy (crf_fd_info.copy) its options
 * and, peeked, its receive queue.  What crf restores is kept as a record;
 * the rest is refused at once, naming the socket.  Peers are known only
 * once the whole tree is walked: unix-check.c, at dump-finish.
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <netinet/tcp.h>

#include <crf/cleanup.h>
#include <crf/image.h>

#include "net.h"
#include "unix.h"

#ifndef SO_PASSPIDFD
#define SO_PASSPIDFD 76
#endif

static void record_free(Crf__Net__UnixSk *m);

struct unix_table *unix_table_get(struct crf_ctx *ctx)
{
	struct net_state *st = net_state(ctx);

	if (st && !st->unix_sk)
		st->unix_sk = calloc(1, sizeof(*st->unix_sk));
	return st ? st->unix_sk : NULL;
}

int unix_table_add(struct unix_table *t, Crf__Net__UnixSk *m)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		Crf__Net__UnixSk **v = reallocarray(t->v, cap, sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n++] = m;
	return 0;
}

Crf__Net__UnixSk *unix_table_find(const struct unix_table *t, uint64_t ino, size_t *index)
{
	for (size_t i = 0; t && i < t->n; i++)
		if (t->v[i]->ino == ino) {
			if (index)
				*index = i;
			return t->v[i];
		}
	return NULL;
}

Crf__Net__UnixSk *unix_table_named(const struct unix_table *t, uint32_t type,
				   const ProtobufCBinaryData *name)
{
	Crf__Net__UnixSk *found = NULL;

	for (size_t i = 0; t && i < t->n; i++) {
		Crf__Net__UnixSk *m = t->v[i];

		if (m->type != type || !m->has_name || m->name.len != name->len ||
		    (name->len && memcmp(m->name.data, name->data, name->len)))
			continue;
		/* An accepted connection has its listener's name: the listener is the one bound. */
		if (!found || m->state == TCP_LISTEN)
			found = m;
	}
	return found;
}

void net_unix_cleanup(struct crf_ctx *ctx)
{
	struct net_state *st = crf_ctx_priv(ctx);
	struct unix_table *t = st ? st->unix_sk : NULL;

	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		if (t->made && t->made[i] >= 0)
			close(t->made[i]);
		/* The restore's records are protobuf-c's, the dump's our own. */
		if (t->unpacked)
			crf__net__unix_sk__free_unpacked(t->v[i], NULL);
		else
			record_free(t->v[i]);
	}
	free(t->made);
	free(t->v);
	free(t);
	st->unix_sk = NULL;
}

const char *unix_describe(const Crf__Net__UnixSk *m, char *buf, size_t size)
{
	char name[256];

	snprintf(buf, size, "unix %s %s", unix_type_str((int)m->type),
		 unix_name_str(m->has_name ? (const char *)m->name.data : "",
			       m->has_name ? m->name.len : 0, name, sizeof(name)));
	return buf;
}

static int sockopt(int fd, int opt, int *val)
{
	socklen_t sl = sizeof(*val);

	return getsockopt(fd, SOL_SOCKET, opt, val, &sl) ? -errno : 0;
}

static int set_bytes(ProtobufCBinaryData *b, protobuf_c_boolean *has, const void *p, size_t len)
{
	b->data = malloc(len ? len : 1);
	if (!b->data)
		return -ENOMEM;
	memcpy(b->data, p, len);
	b->len = len;
	*has = true;
	return 0;
}

/* What crf does not restore, or NULL: a reason for the refusal. */
static const char *unsupported(const struct unix_diag_info *d)
{
	if (d->state != TCP_ESTABLISHED && d->state != TCP_CLOSE && d->state != TCP_LISTEN)
		return "a connection in progress, which crf does not restore";
	if (d->state == TCP_CLOSE && d->peer && d->type != SOCK_DGRAM)
		return "an unconnected socket with a peer, which crf does not restore";
	if (d->name_len && d->name[0] && d->name[0] != '/')
		return "bound to a relative path, which crf does not restore";
	return NULL;
}

/*
 * Whether @pid's root is crf's.  The restore binds a path name in crf's
 * root (restore-prepare, before any task enters its own): for a task in a
 * chroot that would be another file, outside the root the program sees.
 */
static int same_root(const struct crf_object *obj, const char *what)
{
	char path[64], root[4096];
	struct stat a, b;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/root", (int)obj->pid);
	if (stat(path, &a) || stat("/", &b))
		return crf_error_errno(errno, "%s: %s", what, path);
	if (a.st_dev == b.st_dev && a.st_ino == b.st_ino)
		return 0;
	n = readlink(path, root, sizeof(root) - 1);
	root[n > 0 ? n : 0] = '\0';
	return crf_error_errno(ENOTSUP,
			       "%s: bound to a path under the task's root %s, not crf's, "
			       "which crf does not restore",
			       what, n > 0 ? root : "(unreadable)");
}

/*
 * The socket file of a path name, seen from the task's root: kept when it
 * is the socket's (the inode unix_diag gives), else gone (deleted, or
 * another file took the path).  unix_diag's device is the kernel's dev_t
 * (major << 20 | minor), not st_dev's encoding.
 */
static int read_file(const struct crf_object *obj, const struct unix_diag_info *d,
		     Crf__Net__UnixSk *m, const char *what)
{
	char path[4200];
	struct stat st;
	int r = same_root(obj, what);

	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "/proc/%d/root%.*s", (int)obj->pid, (int)d->name_len, d->name);
	m->has_file_gone = true;
	if (!d->has_vfs)
		return 0;
	m->has_vfs_ino = true;
	m->vfs_ino = d->vfs_ino;
	m->file_gone = lstat(path, &st) || st.st_ino != d->vfs_ino ||
		       major(st.st_dev) != d->vfs_dev >> 20 ||
		       minor(st.st_dev) != (d->vfs_dev & 0xfffff);
	if (m->file_gone)
		return 0;
	m->has_file_ino = m->has_file_mode = m->has_file_uid = m->has_file_gid = true;
	m->file_ino = st.st_ino;
	m->file_mode = st.st_mode;
	m->file_uid = st.st_uid;
	m->file_gid = st.st_gid;
	return 0;
}

/* Options and queue of the socket copy @fd into @m; 0 or -errno (logged). */
/*
 * SO_PEERCRED of a connected or listening socket names the process (and
 * its euid and egid) that made the pair, the connection or the listener,
 * SO_PEERGROUPS its groups: saved, for dump-finish (unix-check.c) to
 * decide whether the restore can give them back (a pair made again by
 * that very process) or must refuse.
 */
static int read_peercred(int fd, Crf__Net__UnixSk *m, const char *what)
{
	struct ucred c = {0};
	socklen_t len = sizeof(c);
	gid_t *groups;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c, &len))
		return crf_error_errno(errno, "%s: SO_PEERCRED", what);
	if (!c.pid)
		return 0;
	m->has_peer_pid = m->has_peer_uid = m->has_peer_gid = true;
	m->peer_pid = c.pid;
	m->peer_uid = c.uid;
	m->peer_gid = c.gid;
	len = 0;
	if (!getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, NULL, &len) || errno != ERANGE)
		return len ? crf_error_errno(EPROTO, "%s: SO_PEERGROUPS", what) : 0;
	groups = malloc(len);
	if (!groups)
		return crf_error_errno(ENOMEM, "%s", what);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len)) {
		free(groups);
		return crf_error_errno(errno, "%s: SO_PEERGROUPS", what);
	}
	_Static_assert(sizeof(gid_t) == sizeof(uint32_t), "gid_t is 32 bits");
	m->peer_groups = (uint32_t *)groups;
	m->n_peer_groups = len / sizeof(gid_t);
	return 0;
}

static int read_socket(int fd, Crf__Net__UnixSk *m, const char *what)
{
	int passcred = 0, pidfd = 0, sndbuf = 0, rcvbuf = 0, r;
	struct sockaddr_un peer;
	socklen_t pl = sizeof(peer);

	r = sockopt(fd, SO_PASSCRED, &passcred);
	if (r == 0)
		r = sockopt(fd, SO_SNDBUF, &sndbuf);
	if (r == 0)
		r = sockopt(fd, SO_RCVBUF, &rcvbuf);
	if (r == 0 && sockopt(fd, SO_PASSPIDFD, &pidfd) == 0 && pidfd)
		return crf_error_errno(ENOTSUP,
				       "%s: SO_PASSPIDFD is set, which crf does not "
				       "restore",
				       what);
	if (r < 0)
		return crf_error_errno(-r, "%s: getsockopt", what);
	m->passcred = passcred;
	m->sndbuf = (uint32_t)sndbuf;
	m->rcvbuf = (uint32_t)rcvbuf;
	r = read_peercred(fd, m, what);
	if (r < 0)
		return r;
	/* Connected (to a peer maybe closed since): peer_name, empty when the peer is unnamed. */
	if (getpeername(fd, (struct sockaddr *)&peer, &pl) == 0 &&
	    pl >= offsetof(struct sockaddr_un, sun_path) &&
	    set_bytes(&m->peer_name, &m->has_peer_name, peer.sun_path,
		      pl - offsetof(struct sockaddr_un, sun_path)) < 0)
		return crf_error_errno(ENOMEM, "%s", what);
	if (m->state == TCP_LISTEN) {
		m->peek_off = -1;
		return 0;
	}
	r = unix_queue_read(fd, m, what);
	if (r == 0 && m->passcred && m->n_rqueue)
		r = crf_error_errno(ENOTSUP,
				    "%s: %zu %s queued with SO_PASSCRED: crf cannot queue "
				    "them again with their senders' credentials",
				    what, m->type == SOCK_STREAM ? m->rqueue[0].len : m->n_rqueue,
				    m->type == SOCK_STREAM ? "bytes" : "messages");
	return r;
}

static int fill(const struct crf_object *obj, const struct unix_diag_info *d, int copy,
		Crf__Net__UnixSk *m, const char *what)
{
	m->ino = d->ino;
	m->type = d->type;
	m->state = d->state;
	m->has_peer = d->peer != 0;
	m->peer = d->peer;
	m->pid = obj->pid;
	m->fd = obj->id;
	m->shutdown = d->shutdown;
	m->has_wqlen = true;
	m->wqlen = d->wqlen;
	if (d->name_len && set_bytes(&m->name, &m->has_name, d->name, d->name_len) < 0)
		return crf_error_errno(ENOMEM, "%s", what);
	if (d->name_len && d->name[0]) {
		int r = read_file(obj, d, m, what);

		if (r < 0)
			return r;
	}
	if (d->state == TCP_LISTEN) {
		m->has_backlog = true;
		m->backlog = d->wqlen;
		m->icons = malloc((d->n_icons ? d->n_icons : 1) * sizeof(*m->icons));
		if (!m->icons)
			return crf_error_errno(ENOMEM, "%s", what);
		for (uint32_t i = 0; i < d->n_icons; i++)
			m->icons[i] = d->icons[i];
		m->n_icons = d->n_icons;
	}
	return read_socket(copy, m, what);
}

static void record_free(Crf__Net__UnixSk *m)
{
	unix_queue_free(m);
	free(m->name.data);
	free(m->peer_name.data);
	free(m->icons);
	free(m->peer_groups);
	free(m);
}

static int record(struct crf_ctx *ctx, const struct crf_object *obj, const struct unix_diag_info *d,
		  int copy, const char *what)
{
	struct unix_payload pl = {.version = 1, .ino = d->ino};
	struct unix_table *t = unix_table_get(ctx);
	Crf__Net__UnixSk *m;
	int r;

	if (!t)
		return crf_error_errno(ENOMEM, "%s", what);
	m = calloc(1, sizeof(*m));
	if (!m)
		return crf_error_errno(ENOMEM, "%s", what);
	crf__net__unix_sk__init(m);
	r = fill(obj, d, copy, m, what);
	if (r == 0 && unix_table_add(t, m) < 0)
		r = crf_error_errno(ENOMEM, "%s", what);
	if (r < 0) {
		record_free(m);
		return r;
	}
	return crf_fd_save_payload(ctx, obj, &pl, sizeof(pl));
}

int net_unix_dump(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_fd_info *info = obj->data;
	int copy;
	struct unix_diag_info d;
	const char *why;
	char what[512], name[256];
	struct stat st;
	int r;

	if (!info)
		return crf_error_errno(EINVAL, "pid %d: fd %d: no fd information", (int)obj->pid,
				       obj->id);
	copy = info->copy; /* the files plugin's, which closes it */
	if (fstat(copy, &st))
		return crf_error_errno(errno, "pid %d: fd %d: fstat", (int)obj->pid, obj->id);
	r = unix_diag_get(st.st_ino, &d);
	if (r == -ENOENT)
		return crf_error_errno(ENOENT,
				       "pid %d: fd %d (socket:[%llu]): unix_diag does not "
				       "list it (another net namespace?)",
				       (int)obj->pid, obj->id, (unsigned long long)st.st_ino);
	if (r < 0)
		return r;
	snprintf(what, sizeof(what), "pid %d: fd %d: unix %s %s", (int)obj->pid, obj->id,
		 unix_type_str(d.type), unix_name_str(d.name, d.name_len, name, sizeof(name)));
	why = unsupported(&d);
	if (!why)
		why = sockopt_refusal(copy, false);
	if (why)
		r = crf_error_errno(ENOTSUP, "%s: %s", what, why);
	if (r == 0)
		r = record(ctx, obj, &d, copy, what);
	unix_diag_info_free(&d);
	return r;
}
