// SPDX-License-Identifier: GPL-2.0-only
/*
 * Restore of unix sockets.
 *
 * Every socket of unix-sk.img but the pairs whose makers make them again
 * (made_by, unix-peercred.c: net_unix_restore_premap, in that process,
 * right after it is forked) is made in restore-prepare, in crf's top
 * process, before the tree is forked: the two ends of a pair may be held
 * by two tasks, and socketpair() makes both at once, so each is kept by
 * the core (crf_rst_object, key "unix:INODE") and inherited by every task
 * forked after.  Each end's fd record then gets its end from the core
 * (net_unix_restore, in the task or, for a description the tree shares,
 * in the files plugin's restore-prepare, which runs after this one).
 *
 * In this order: listeners and unconnected sockets, bound to their names;
 * pairs (socketpair, then each end's name); for each listener, the
 * connections that were accepted (connected and accepted at once, before
 * the others are queued behind them) and those still waiting; datagram
 * sockets connected one way; then the queued data (each receive queue
 * sent again by the peer, or by a datagram's sender), and only then
 * SO_PASSCRED, SO_PEEK_OFF and shutdown(2), which would refuse the sends.
 * Buffer sizes come first: queued data is charged to the sender.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <netinet/tcp.h>

#include <crf/cleanup.h>
#include <crf/image.h>
#include <crf/restore.h>

#include "net.h"
#include "unix.h"

/* What one restore-prepare makes, in crf's own fds until they go to the core. */
struct making {
	struct unix_table *t;
	int *other; /* the other end of a pair whose peer was closed, or -1 */
	int tmp;    /* an unnamed datagram socket, sender of unnamed datagrams */
};

static const char *what_of(const Crf__Net__UnixSk *m, char *buf, size_t size)
{
	char desc[300];

	snprintf(buf, size, "pid %d: fd %d: %s", m->pid, m->fd,
		 unix_describe(m, desc, sizeof(desc)));
	return buf;
}

static size_t index_of(const struct unix_table *t, uint64_t ino)
{
	size_t i;

	return unix_table_find(t, ino, &i) ? i : SIZE_MAX;
}

/* A new socket for record @i, with its buffers and name; 0 or -errno (logged). */
static int make_sock(struct making *mk, size_t i)
{
	const Crf__Net__UnixSk *m = mk->t->v[i];
	char what[400];
	int fd, r;

	what_of(m, what, sizeof(what));
	fd = socket(AF_UNIX, (int)m->type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return crf_error_errno(errno, "%s: socket", what);
	mk->t->made[i] = fd;
	r = unix_set_before(fd, m, what);
	if (r == 0)
		r = unix_bind(fd, m, what);
	if (r == 0 && m->state == TCP_LISTEN && listen(fd, (int)m->backlog))
		r = crf_error_errno(errno, "%s: listen %u", what, m->backlog);
	return r;
}

/* @sv, just made by socketpair(), as records @i and @j (SIZE_MAX: its peer was closed). */
static int pair_made(struct making *mk, size_t i, size_t j, const int sv[2])
{
	const Crf__Net__UnixSk *a = mk->t->v[i], *b = j != SIZE_MAX ? mk->t->v[j] : NULL;
	char wa[400], wb[400];
	int r;

	what_of(a, wa, sizeof(wa));
	mk->t->made[i] = sv[0];
	if (b)
		mk->t->made[j] = sv[1];
	else
		mk->other[i] = sv[1];
	r = unix_set_before(sv[0], a, wa);
	if (r == 0)
		r = unix_bind(sv[0], a, wa);
	if (r == 0 && b) {
		what_of(b, wb, sizeof(wb));
		r = unix_set_before(sv[1], b, wb);
		if (r == 0)
			r = unix_bind(sv[1], b, wb);
	}
	return r;
}

/* Records @i and @j (SIZE_MAX: its peer was closed) as the two ends of a socketpair. */
static int make_pair(struct making *mk, size_t i, size_t j)
{
	char what[400];
	int sv[2];

	if (socketpair(AF_UNIX, (int)mk->t->v[i]->type | SOCK_CLOEXEC, 0, sv))
		return crf_error_errno(errno, "%s: socketpair",
				       what_of(mk->t->v[i], what, sizeof(what)));
	return pair_made(mk, i, j, sv);
}

/*
 * The connections of listener @l: those accepted (connect, then accept at
 * once), then those still waiting, in the order they were queued.
 */
static int make_connections(struct making *mk, size_t l)
{
	const struct unix_table *t = mk->t;
	const Crf__Net__UnixSk *lm = t->v[l];
	char what[400];
	int r, fd;

	for (size_t s = 0; s < t->n; s++) {
		size_t c;

		if (!t->v[s]->has_accepted_from || t->v[s]->accepted_from != lm->ino)
			continue;
		c = index_of(t, t->v[s]->peer);
		if (c == SIZE_MAX)
			return crf_error_errno(EBADMSG, "%s: no record of the peer", UNIX_IMG);
		r = make_sock(mk, c);
		if (r == 0)
			r = unix_connect(t->made[c], lm, what_of(t->v[c], what, sizeof(what)));
		if (r < 0)
			return r;
		fd = accept4(t->made[l], NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			return crf_error_errno(errno, "%s: accept",
					       what_of(lm, what, sizeof(what)));
		t->made[s] = fd;
		r = unix_set_before(fd, t->v[s], what_of(t->v[s], what, sizeof(what)));
		if (r < 0)
			return r;
	}
	for (size_t k = 0; k < lm->n_icons; k++) {
		size_t c = index_of(t, lm->icons[k]);

		if (c == SIZE_MAX || !t->v[c]->has_queued_on || t->v[c]->queued_on != lm->ino)
			return crf_error_errno(EBADMSG, "%s: connection %zu has no record",
					       UNIX_IMG, k + 1);
		r = make_sock(mk, c);
		if (r == 0)
			r = unix_connect(t->made[c], lm, what_of(t->v[c], what, sizeof(what)));
		if (r < 0)
			return r;
	}
	return 0;
}

/* Every socket of the image, made and named, pairs and connections made. */
static int make_all(struct making *mk)
{
	const struct unix_table *t = mk->t;
	int r = 0;

	/* Listeners and unconnected sockets first: others connect to them. */
	for (size_t i = 0; r == 0 && i < t->n; i++)
		if (t->v[i]->state != TCP_ESTABLISHED ||
		    (t->v[i]->type == SOCK_DGRAM && !t->v[i]->has_peer))
			r = make_sock(mk, i);
	for (size_t i = 0; r == 0 && i < t->n; i++) {
		const Crf__Net__UnixSk *m = t->v[i];
		size_t j;

		if (t->made[i] >= 0 || m->has_accepted_from || m->has_queued_on || m->has_made_by)
			continue;
		j = m->has_peer ? index_of(t, m->peer) : SIZE_MAX;
		if (m->has_peer && j == SIZE_MAX)
			return crf_error_errno(EBADMSG, "%s: the peer of socket %llu has no record",
					       UNIX_IMG, (unsigned long long)m->ino);
		if (j != SIZE_MAX && t->v[j]->has_accepted_from)
			continue;
		/* A datagram socket connected to one that is not connected to it. */
		if (j != SIZE_MAX && (!t->v[j]->has_peer || t->v[j]->peer != m->ino))
			r = make_sock(mk, i);
		else
			r = make_pair(mk, i, j);
	}
	for (size_t i = 0; r == 0 && i < t->n; i++)
		if (t->v[i]->state == TCP_LISTEN)
			r = make_connections(mk, i);
	for (size_t i = 0; r == 0 && i < t->n; i++)
		if (t->made[i] < 0 &&
		    !(t->v[i]->has_queued_on || t->v[i]->has_accepted_from || t->v[i]->has_made_by))
			r = crf_error_errno(EBADMSG, "%s: socket %llu was not made", UNIX_IMG,
					    (unsigned long long)t->v[i]->ino);
	return r;
}

/*
 * A datagram socket another one connected to is TCP_ESTABLISHED (unix_diag,
 * /proc/net/unix: connected), and stays so when that one is closed: a socket
 * connected to it and closed again leaves it so.
 */
static int mark_connected(const Crf__Net__UnixSk *m, const char *what)
{
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return crf_error_errno(errno, "%s: socket", what);
	return unix_connect(fd, m, what);
}

/* One-way datagram connections, once every socket is bound. */
static int connect_dgrams(struct making *mk)
{
	const struct unix_table *t = mk->t;
	char what[400];

	for (size_t i = 0; i < t->n; i++) {
		const Crf__Net__UnixSk *m = t->v[i], *p;
		int r;

		if (m->type != SOCK_DGRAM || m->has_made_by)
			continue;
		what_of(m, what, sizeof(what));
		if (!m->has_peer) {
			r = m->state == TCP_ESTABLISHED ? mark_connected(m, what) : 0;
			if (r < 0)
				return r;
			continue;
		}
		p = unix_table_find(t, m->peer, NULL);
		if (!p || (p->has_peer && p->peer == m->ino))
			continue;
		r = unix_connect(t->made[i], p, what);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Who sends datagram @k of @m again, and whether to @m's address (not connected to it). */
static int dgram_sender(struct making *mk, const Crf__Net__UnixSk *m, size_t k, bool *to_name)
{
	const struct unix_table *t = mk->t;
	const Crf__Net__UnixSk *p;
	size_t j;

	if (m->has_peer) {
		j = index_of(t, m->peer);
		p = t->v[j];
		*to_name = !p->has_peer || p->peer != m->ino;
		return t->made[j];
	}
	*to_name = true;
	if (k < m->n_senders && m->senders[k].len) {
		p = unix_table_named(t, SOCK_DGRAM, &m->senders[k]);
		return p && unix_table_find(t, p->ino, &j) ? t->made[j] : -1;
	}
	if (mk->tmp < 0)
		mk->tmp = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	return mk->tmp;
}

/* Socket @i's receive queue, sent again by its peer (or the datagrams' senders). */
static int queue_one(struct making *mk, size_t i)
{
	const struct unix_table *t = mk->t;
	const Crf__Net__UnixSk *m = t->v[i];
	char what[400];
	int r;

	if (!m->n_rqueue)
		return 0;
	what_of(m, what, sizeof(what));
	if (m->type == SOCK_DGRAM) {
		for (size_t k = 0; k < m->n_rqueue; k++) {
			bool to_name;
			int from = dgram_sender(mk, m, k, &to_name);

			if (from < 0)
				return crf_error_errno(EBADMSG, "%s: no sender for datagram %zu",
						       what, k + 1);
			r = unix_queue_send(from, m, k, to_name, what);
			if (r < 0)
				return r;
		}
		return 0;
	}
	if (mk->other[i] >= 0)
		return unix_queue_write(mk->other[i], m, what);
	if (m->has_peer)
		return unix_queue_write(t->made[index_of(t, m->peer)], m, what);
	return crf_error_errno(EBADMSG, "%s: data queued and no peer", what);
}

/* Every receive queue but those of the pairs their makers make (unix_restore_premap). */
static int queue_all(struct making *mk)
{
	int r = 0;

	for (size_t i = 0; r == 0 && i < mk->t->n; i++)
		if (!mk->t->v[i]->has_made_by)
			r = queue_one(mk, i);
	return r;
}

static int give(void *arg)
{
	return *(int *)arg;
}

/* Hand socket @i to the core (crf_rst_object "unix:INODE"). */
static int keep(struct crf_ctx *ctx, struct unix_table *t, size_t i)
{
	char key[64];
	int fd = t->made[i], dup;

	t->made[i] = -1;
	snprintf(key, sizeof(key), "unix:%llu", (unsigned long long)t->v[i]->ino);
	dup = crf_rst_object(ctx, key, give, &fd, NULL);
	if (dup < 0) {
		close(fd);
		return dup;
	}
	close(dup);
	return 0;
}

static int make(struct crf_ctx *ctx, struct making *mk)
{
	struct unix_table *t = mk->t;
	char what[400];
	int r;

	r = make_all(mk);
	if (r == 0)
		r = connect_dgrams(mk);
	if (r == 0)
		r = queue_all(mk);
	for (size_t i = 0; r == 0 && i < t->n; i++)
		if (!t->v[i]->has_made_by)
			r = unix_set_after(t->made[i], t->v[i],
					   what_of(t->v[i], what, sizeof(what)));
	for (size_t i = 0; i < t->n; i++)
		if (mk->other[i] >= 0) {
			/* The peer was closed: its end goes, which shuts ours down as it was. */
			close(mk->other[i]);
			mk->other[i] = -1;
		}
	for (size_t i = 0; r == 0 && i < t->n; i++)
		if (!t->v[i]->has_made_by)
			r = unix_unlink_gone(t->v[i], what_of(t->v[i], what, sizeof(what)));
	for (size_t i = 0; r == 0 && i < t->n; i++)
		if (!t->v[i]->has_made_by)
			r = keep(ctx, t, i);
	return r;
}

static int read_image(struct crf_ctx *ctx, struct unix_table *t)
{
	_cleanup_img_ struct crf_img *img = NULL;
	Crf__Net__UnixSk *m;
	int r;

	r = crf_img_open(crf_ctx_images(ctx), UNIX_IMG, &crf__net__unix_sk__descriptor, &img);
	if (r < 0)
		return r;
	t->unpacked = true;
	while ((r = crf_img_read(img, (ProtobufCMessage **)&m)) > 0) {
		if (unix_table_find(t, m->ino, NULL))
			r = crf_error_errno(EBADMSG, "%s: socket %llu listed twice", UNIX_IMG,
					    (unsigned long long)m->ino);
		else if (unix_table_add(t, m) < 0)
			r = crf_error_errno(ENOMEM, "%s", UNIX_IMG);
		if (r < 0) {
			crf__net__unix_sk__free_unpacked(m, NULL);
			return r;
		}
	}
	if (r < 0)
		return r;
	return crf_img_close(TAKE_PTR(img));
}

int net_unix_restore_prepare(struct crf_ctx *ctx)
{
	struct unix_table *t;
	int r;

	/* A dump without unix sockets, or written before there were any, has no image. */
	if (faccessat(crf_imgdir_fd(crf_ctx_images(ctx)), UNIX_IMG, F_OK, 0)) {
		if (errno == ENOENT)
			return 0;
		return crf_error_errno(errno, "%s", UNIX_IMG);
	}
	t = unix_table_get(ctx);
	if (!t)
		return crf_error_errno(ENOMEM, "%s", UNIX_IMG);
	r = read_image(ctx, t);
	if (r == 0)
		r = unix_peercred_check(ctx, t);
	if (r < 0)
		return r;

	struct making mk = {.t = t, .tmp = -1};

	t->made = malloc((t->n ? t->n : 1) * sizeof(*t->made));
	mk.other = malloc((t->n ? t->n : 1) * sizeof(*mk.other));
	if (!t->made || !mk.other) {
		free(mk.other);
		return crf_error_errno(ENOMEM, "%s", UNIX_IMG);
	}
	for (size_t i = 0; i < t->n; i++)
		t->made[i] = mk.other[i] = -1;
	r = make(ctx, &mk);
	for (size_t i = 0; i < t->n; i++)
		if (mk.other[i] >= 0)
			close(mk.other[i]);
	free(mk.other);
	if (mk.tmp >= 0)
		close(mk.tmp);
	if (r == 0 && t->n)
		crf_debug("%zu unix sockets made", t->n);
	return r;
}

/*
 * socketpair() with the euid, egid and groups of the pair's maker at the
 * dump (SO_PEERCRED and SO_PEERGROUPS take them from the caller), and
 * crf's own back at once: the rest of the restore needs them.
 */
static int socketpair_as_maker(const Crf__Net__UnixSk *m, int sv[2], const char *what)
{
	uid_t euid = geteuid();
	gid_t egid = getegid();
	int n = getgroups(0, NULL), r = 0;
	_cleanup_free_ gid_t *groups = malloc((n > 0 ? (size_t)n : 1) * sizeof(gid_t));

	if (n < 0 || !groups || getgroups(n, groups) != n)
		return crf_error_errno(n < 0 ? errno : ENOMEM, "%s: getgroups", what);
	if (setgroups(m->n_peer_groups, (const gid_t *)m->peer_groups) ||
	    setresgid(-1, m->peer_gid, -1) || setresuid(-1, m->peer_uid, -1))
		r = crf_error_errno(errno,
				    "%s: taking its maker's credentials (uid %u, gid %u, "
				    "%zu groups)",
				    what, m->peer_uid, m->peer_gid, m->n_peer_groups);
	else if (socketpair(AF_UNIX, (int)m->type | SOCK_CLOEXEC, 0, sv))
		r = crf_error_errno(errno, "%s: socketpair", what);
	if (setresuid(-1, euid, -1) || setresgid(-1, egid, -1) || setgroups((size_t)n, groups)) {
		if (r == 0) {
			close(sv[0]);
			close(sv[1]);
		}
		return crf_error_errno(errno, "%s: taking crf's credentials back", what);
	}
	return r;
}

/* Pair @i (and its peer @j, or SIZE_MAX), made here by its maker, finished and kept. */
static int premap_pair(struct crf_ctx *ctx, struct making *mk, size_t i, size_t j)
{
	struct unix_table *t = mk->t;
	char what[400];
	int sv[2], r;

	what_of(t->v[i], what, sizeof(what));
	r = socketpair_as_maker(t->v[i], sv, what);
	if (r < 0)
		return r;
	r = pair_made(mk, i, j, sv);
	if (r == 0)
		r = queue_one(mk, i);
	if (r == 0 && j != SIZE_MAX)
		r = queue_one(mk, j);
	if (r == 0)
		r = unix_set_after(t->made[i], t->v[i], what);
	if (r == 0 && j != SIZE_MAX)
		r = unix_set_after(t->made[j], t->v[j], what_of(t->v[j], what, sizeof(what)));
	if (mk->other[i] >= 0) {
		close(mk->other[i]);
		mk->other[i] = -1;
	}
	if (r == 0)
		r = unix_unlink_gone(t->v[i], what_of(t->v[i], what, sizeof(what)));
	if (r == 0 && j != SIZE_MAX)
		r = unix_unlink_gone(t->v[j], what_of(t->v[j], what, sizeof(what)));
	if (r == 0)
		r = keep(ctx, t, i);
	if (r == 0 && j != SIZE_MAX)
		r = keep(ctx, t, j);
	return r;
}

int net_unix_restore_premap(struct crf_ctx *ctx)
{
	struct net_state *st = crf_ctx_priv(ctx);
	struct unix_table *t = st ? st->unix_sk : NULL;
	pid_t pid = crf_ctx_pid(ctx);
	struct making mk = {.t = t, .tmp = -1};
	int r = 0;

	if (!t || !t->made)
		return 0;
	mk.other = malloc((t->n ? t->n : 1) * sizeof(*mk.other));
	if (!mk.other)
		return crf_error_errno(ENOMEM, "%s", UNIX_IMG);
	for (size_t i = 0; i < t->n; i++)
		mk.other[i] = -1;
	for (size_t i = 0; r == 0 && i < t->n; i++) {
		const Crf__Net__UnixSk *m = t->v[i];
		size_t j = m->has_peer ? index_of(t, m->peer) : SIZE_MAX;

		/* Each pair once, at its first end. */
		if (m->has_made_by && m->made_by == pid && (j == SIZE_MAX || j > i))
			r = premap_pair(ctx, &mk, i, j);
	}
	for (size_t i = 0; i < t->n; i++) {
		if (mk.other[i] >= 0)
			close(mk.other[i]);
		if (t->made[i] >= 0 && t->v[i]->has_made_by) {
			close(t->made[i]);
			t->made[i] = -1;
		}
	}
	free(mk.other);
	return r;
}

static bool made_later(struct crf_ctx *ctx, uint64_t ino)
{
	struct net_state *st = crf_ctx_priv(ctx);
	const Crf__Net__UnixSk *m =
		st && st->unix_sk ? unix_table_find(st->unix_sk, ino, NULL) : NULL;

	return m && m->has_made_by;
}

static int not_made(void *arg)
{
	const struct crf_object *obj = arg;

	return crf_error_errno(EBADMSG, "fd %d: its unix socket is not in %s", obj->id, UNIX_IMG);
}

int net_unix_restore(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_fd_info *info = obj->data;
	struct unix_payload pl;
	char key[64];
	int fd;

	if (!info || info->payload_len != sizeof(pl))
		return crf_error_errno(EBADMSG, "fd %d: no unix socket saved", obj->id);
	memcpy(&pl, info->payload, sizeof(pl));
	if (pl.version != 1)
		return crf_error_errno(EBADMSG, "fd %d: unix socket record version %u", obj->id,
				       pl.version);
	/*
	 * A pair its maker makes again (made_by) exists from that process's
	 * restore-premap on: the files plugin, asking in restore-prepare for a
	 * description the tree shares, is told to ask again in each task.
	 */
	if (crf_ctx_stage(ctx) == CRF_STAGE_RESTORE_PREPARE && made_later(ctx, pl.ino))
		return -EAGAIN;
	snprintf(key, sizeof(key), "unix:%llu", (unsigned long long)pl.ino);
	fd = crf_rst_object(ctx, key, not_made, (void *)obj, NULL);
	if (fd < 0)
		return fd;
	if ((info->flags & O_NONBLOCK) && fcntl(fd, F_SETFL, O_NONBLOCK)) {
		int r = crf_error_errno(errno, "fd %d: O_NONBLOCK", obj->id);

		close(fd);
		return r;
	}
	return fd;
}
