// SPDX-License-Identifier: GPL-2.0-only
/*
 * dump-finish for unix sockets: with every socket of the tree recorded,
 * each one's peer is looked up among them.  A peer that is no socket of
 * the tree is refused, naming it; a connection that waits on a listener
 * of the tree (unix_diag lists the connecting sockets of each listener)
 * is marked as such, and the accepted end of one (its name is the
 * listener's) as accepted from it, so that the restore connects them to
 * the listener again.  Then unix-sk.img is written.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <netinet/tcp.h>

#include <crf/cleanup.h>
#include <crf/image.h>

#include "net.h"
#include "unix.h"

static bool same_bytes(const ProtobufCBinaryData *a, const ProtobufCBinaryData *b)
{
	return a->len == b->len && (!a->len || !memcmp(a->data, b->data, a->len));
}

/* "pid 42 fd 3" of a process that holds socket @ino, or "held by no process". */
static const char *holder(uint64_t ino, char *buf, size_t size)
{
	_cleanup_closedir_ DIR *proc = opendir("/proc");
	char want[64], path[600], link[64];
	struct dirent *p, *f;

	snprintf(want, sizeof(want), "socket:[%llu]", (unsigned long long)ino);
	snprintf(buf, size, "held by no process");
	while (proc && (p = readdir(proc))) {
		_cleanup_closedir_ DIR *fds = NULL;

		if (p->d_name[0] < '1' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fd", p->d_name);
		fds = opendir(path);
		while (fds && (f = readdir(fds))) {
			ssize_t n;

			snprintf(path, sizeof(path), "/proc/%s/fd/%s", p->d_name, f->d_name);
			n = readlink(path, link, sizeof(link) - 1);
			if (n <= 0)
				continue;
			link[n] = '\0';
			if (!strcmp(link, want)) {
				snprintf(buf, size, "pid %s fd %s", p->d_name, f->d_name);
				return buf;
			}
		}
	}
	return buf;
}

static const char *name_of(const ProtobufCBinaryData *b, bool has, char *buf, size_t size)
{
	return unix_name_str(has ? (const char *)b->data : "", has ? b->len : 0, buf, size);
}

/* Refuse @m, whose peer is no socket of the tree, naming the peer. */
static int outside(const Crf__Net__UnixSk *m)
{
	char what[256], name[256], who[600];

	unix_describe(m, what, sizeof(what));
	holder(m->peer, who, sizeof(who));
	return crf_error_errno(ENOTSUP,
			       "pid %d: fd %d: %s -> %s (peer outside the tree, inode "
			       "%llu, %s)",
			       m->pid, m->fd, what,
			       name_of(&m->peer_name, m->has_peer_name, name, sizeof(name)),
			       (unsigned long long)m->peer, who);
}

static const Crf__Net__UnixSk *listener_with_icon(const struct unix_table *t, uint64_t ino)
{
	for (size_t i = 0; i < t->n; i++)
		for (size_t k = 0; t->v[i]->state == TCP_LISTEN && k < t->v[i]->n_icons; k++)
			if (t->v[i]->icons[k] == ino)
				return t->v[i];
	return NULL;
}

static const Crf__Net__UnixSk *listener_named(const struct unix_table *t, uint32_t type,
					      const ProtobufCBinaryData *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i]->state == TCP_LISTEN && t->v[i]->type == type && t->v[i]->has_name &&
		    same_bytes(&t->v[i]->name, name))
			return t->v[i];
	return NULL;
}

/* A listener outside the tree, among all of the host's, that @ino waits on. */
struct host_search {
	uint64_t ino;
	struct unix_diag_info found;
	bool got;
};

static int host_listener(const struct unix_diag_info *d, void *arg)
{
	struct host_search *s = arg;

	for (uint32_t k = 0; !s->got && k < d->n_icons; k++)
		if (d->icons[k] == s->ino) {
			s->found = *d;
			s->found.icons = NULL;
			s->found.n_icons = 0;
			s->got = true;
		}
	return 0;
}

/* Each queued datagram of @m must be one crf can send again from the right address. */
static int check_senders(const struct unix_table *t, const Crf__Net__UnixSk *m,
			 const Crf__Net__UnixSk *peer, const char *what)
{
	char name[256];

	for (size_t i = 0; i < m->n_senders; i++) {
		const ProtobufCBinaryData *from = &m->senders[i];
		bool ok;

		if (peer)
			ok = peer->has_name ? same_bytes(&peer->name, from) : !from->len;
		else
			ok = !from->len || unix_table_named(t, SOCK_DGRAM, from);
		if (!ok)
			return crf_error_errno(ENOTSUP,
					       "%s: datagram %zu of %zu queued is from %s, "
					       "%s",
					       what, i + 1, m->n_senders,
					       name_of(from, true, name, sizeof(name)),
					       peer ? "not its peer" : "a socket outside the tree");
	}
	if (!peer && m->n_rqueue && !m->has_name)
		return crf_error_errno(ENOTSUP,
				       "%s: datagrams queued on an unnamed, unconnected "
				       "socket",
				       what);
	return 0;
}

/* @m is connected, and its peer is gone or is a connection waiting on a listener. */
static int check_unpeered(struct unix_table *t, Crf__Net__UnixSk *m, const char *what)
{
	const Crf__Net__UnixSk *l = listener_with_icon(t, m->ino);
	struct host_search s = {.ino = m->ino};
	char name[256], who[600];
	int r;

	if (l) {
		if (m->wqlen)
			return crf_error_errno(ENOTSUP,
					       "%s: %u bytes sent on a connection that "
					       "pid %d fd %d has not accepted yet, which crf "
					       "cannot read",
					       what, m->wqlen, l->pid, l->fd);
		m->has_queued_on = true;
		m->queued_on = l->ino;
		return 0;
	}
	r = unix_diag_listeners(host_listener, &s);
	if (r < 0)
		return r;
	if (s.got)
		return crf_error_errno(
			ENOTSUP,
			"%s -> %s (waiting to be accepted by a listener "
			"outside the tree, inode %llu, %s)",
			what, unix_name_str(s.found.name, s.found.name_len, name, sizeof(name)),
			(unsigned long long)s.found.ino, holder(s.found.ino, who, sizeof(who)));
	/*
	 * A datagram socket another one connected to is TCP_ESTABLISHED too,
	 * with no peer of its own, and stays so when that one is closed (the
	 * restore connects a socket to it and closes it again): getpeername
	 * tells it from one whose peer was closed.
	 */
	if (m->type == SOCK_DGRAM && !m->has_peer_name && !m->has_name)
		return crf_error_errno(ENOTSUP,
				       "%s: connected to by a socket since closed, and "
				       "unnamed: crf cannot connect to it again",
				       what);
	if (m->type == SOCK_DGRAM && !m->has_peer_name)
		return check_senders(t, m, NULL, what);
	if (m->type == SOCK_DGRAM)
		return crf_error_errno(ENOTSUP,
				       "%s: the socket it is connected to was closed, "
				       "which crf does not restore",
				       what);
	if (m->has_peer_name && m->peer_name.len)
		return crf_error_errno(ENOTSUP,
				       "%s: its peer %s was closed, which crf does not "
				       "restore",
				       what, name_of(&m->peer_name, true, name, sizeof(name)));
	return 0;
}

/*
 * Whether a socket of @type is bound to abstract name @name: a probe's bind
 * says so (each type has its own abstract names).
 */
static bool abstract_bound(int type, const ProtobufCBinaryData *name)
{
	_cleanup_close_ int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
	struct sockaddr_un a;
	socklen_t len = unix_addr(name, &a);

	return fd < 0 || bind(fd, (struct sockaddr *)&a, len) != 0;
}

static int check_one(struct unix_table *t, Crf__Net__UnixSk *m)
{
	const Crf__Net__UnixSk *p = NULL, *l;
	char what[400], desc[300], name[256], who[600];

	snprintf(what, sizeof(what), "pid %d: fd %d: %s", m->pid, m->fd,
		 unix_describe(m, desc, sizeof(desc)));
	for (size_t k = 0; m->state == TCP_LISTEN && k < m->n_icons; k++)
		if (!unix_table_find(t, m->icons[k], NULL))
			return crf_error_errno(ENOTSUP,
					       "%s: a connection from outside the tree "
					       "(inode %llu, %s) waits to be accepted",
					       what, (unsigned long long)m->icons[k],
					       holder(m->icons[k], who, sizeof(who)));
	if (m->state == TCP_ESTABLISHED && !m->has_peer)
		return check_unpeered(t, m, what);
	if (m->has_peer) {
		p = unix_table_find(t, m->peer, NULL);
		if (!p)
			return outside(m);
	}
	if (p && m->type != SOCK_DGRAM && (!p->has_peer || p->peer != m->ino))
		return crf_error_errno(EBADMSG, "%s: its peer pid %d fd %d is not connected to it",
				       what, p->pid, p->fd);
	if (p && m->type == SOCK_DGRAM && (!p->has_peer || p->peer != m->ino) && !p->has_name)
		return crf_error_errno(ENOTSUP,
				       "%s: connected to an unnamed socket (pid %d fd %d) "
				       "that is not connected to it",
				       what, p->pid, p->fd);
	if (m->type == SOCK_DGRAM)
		return check_senders(t, m, p, what);
	if (!p || !m->has_name)
		return 0;
	/*
	 * A connected stream or seqpacket socket with a name: the accepted end
	 * of a connection to a listener (whose name, and socket file, it
	 * shares), or one that was bound before it connected.
	 */
	l = listener_named(t, m->type, &m->name);
	if (l && (l->has_vfs_ino == m->has_vfs_ino && l->vfs_ino == m->vfs_ino)) {
		m->has_accepted_from = true;
		m->accepted_from = l->ino;
		return 0;
	}
	if (m->name.data[0])
		return crf_error_errno(
			ENOTSUP,
			"%s -> %s: connected with a path name, accepted "
			"from a listener closed or outside the tree, or bound "
			"before it connected: crf restores neither",
			what, name_of(&m->peer_name, m->has_peer_name, name, sizeof(name)));
	/* An abstract name no socket is bound to any more: its listener was closed. */
	if (!abstract_bound((int)m->type, &m->name))
		return crf_error_errno(
			ENOTSUP,
			"%s -> %s: accepted from a listener since closed, "
			"which crf does not restore",
			what, name_of(&m->peer_name, m->has_peer_name, name, sizeof(name)));
	return 0;
}

int net_unix_dump_finish(struct crf_ctx *ctx)
{
	struct net_state *st = crf_ctx_priv(ctx);
	struct unix_table *t = st ? st->unix_sk : NULL;
	_cleanup_img_ struct crf_img *img = NULL;
	int r;

	for (size_t i = 0; t && i < t->n; i++) {
		r = check_one(t, t->v[i]);
		if (r < 0)
			return r;
	}
	r = t ? unix_peercred_plan(ctx, t) : 0;
	if (r < 0)
		return r;
	r = crf_img_create(crf_ctx_images(ctx), UNIX_IMG, &crf__net__unix_sk__descriptor, &img);
	if (r < 0)
		return r;
	for (size_t i = 0; t && i < t->n; i++) {
		r = crf_img_write(img, &t->v[i]->base);
		if (r < 0)
			return r;
	}
	return crf_img_close(TAKE_PTR(img));
}
