// SPDX-License-Identifier: GPL-2.0-only
/*
 * SO_PEERCRED of unix sockets.  A socketpair's two ends both name the
 * process that made it, with its euid, egid and groups then (SO_PEERCRED,
 * SO_PEERGROUPS); a connection's ends name each other's connect() and
 * listen() callers.  No socket option sets them: only the process itself,
 * making the socket again, gives them back.
 *
 * Dump-finish decides, for every socket that has peer credentials:
 *
 *  - a pair (both ends in the tree, or one end closed; named or not, but
 *    neither end the sender of datagrams queued on a third socket) whose
 *    maker is a live process of the tree, in crf's user namespace, and
 *    whose every holder is that process or one of its descendants: marked
 *    made_by its maker.  The restore makes it in that process, right
 *    after it is forked and before it forks its children
 *    (unix_restore_premap), with the saved euid, egid and groups, so the
 *    holders inherit it from there;
 *  - anything else (listeners, connections, a maker that
 *    exited, lives outside the tree or in another user namespace, a holder
 *    that is not its descendant): refused, naming the socket and why,
 *    unless crf dump --unix-peercred-crf says that SO_PEERCRED naming crf
 *    restore is acceptable (the socket is then made as before, in crf's
 *    top process).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <netinet/tcp.h>

#include <crf/cleanup.h>
#include <crf/image.h>

#include "net.h"
#include "unix.h"

/* The live processes of the dump (core-PID.img), and the sockets they hold. */
struct tree {
	pid_t *pids;
	size_t n, cap;
	struct held {
		uint64_t ino;
		pid_t pid;
	} * held;
	size_t n_held;
	bool scanned;
};

static int add_pid(void *arg, const char *name, pid_t pid)
{
	struct tree *t = arg;

	(void)name;
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 32;
		pid_t *p = reallocarray(t->pids, cap, sizeof(*p));

		if (!p)
			return -ENOMEM;
		t->pids = p;
		t->cap = cap;
	}
	t->pids[t->n++] = pid;
	return 0;
}

static bool in_tree(const struct tree *t, pid_t pid)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->pids[i] == pid)
			return true;
	return false;
}

static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512], *p;
	_cleanup_fclose_ FILE *f = NULL;
	int ppid;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f || !fgets(buf, sizeof(buf), f))
		return 0;
	p = strrchr(buf, ')');
	return p && sscanf(p + 1, " %*c %d", &ppid) == 1 ? ppid : 0;
}

/* Whether @pid is @anc or one of its descendants. */
static bool descends(pid_t pid, pid_t anc)
{
	for (int depth = 0; pid > 1 && depth < 4096; depth++) {
		if (pid == anc)
			return true;
		pid = parent_of(pid);
	}
	return pid == anc;
}

static bool same_user_ns(pid_t pid)
{
	struct stat a, b;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	return !stat(path, &a) && !stat("/proc/self/ns/user", &b) && a.st_ino == b.st_ino &&
	       a.st_dev == b.st_dev;
}

/* Every socket fd of the tree's processes, read once: (inode, process). */
static int scan_held(struct tree *t)
{
	char path[600], link[64];
	struct dirent *f;
	size_t cap = 0;

	t->scanned = true;
	for (size_t i = 0; i < t->n; i++) {
		_cleanup_closedir_ DIR *d = NULL;

		snprintf(path, sizeof(path), "/proc/%d/fd", (int)t->pids[i]);
		d = opendir(path);
		while (d && (f = readdir(d))) {
			unsigned long long ino;
			ssize_t n;

			snprintf(path, sizeof(path), "/proc/%d/fd/%s", (int)t->pids[i], f->d_name);
			n = readlink(path, link, sizeof(link) - 1);
			if (n <= 0)
				continue;
			link[n] = '\0';
			if (sscanf(link, "socket:[%llu]", &ino) != 1)
				continue;
			if (t->n_held == cap) {
				void *p =
					reallocarray(t->held, cap ? 2 * cap : 64, sizeof(*t->held));

				if (!p)
					return -ENOMEM;
				t->held = p;
				cap = cap ? 2 * cap : 64;
			}
			t->held[t->n_held++] = (struct held){.ino = ino, .pid = t->pids[i]};
		}
	}
	return 0;
}

/* A process of the tree holding socket @ino that is not @maker nor its descendant, or 0. */
static pid_t stray_holder(struct tree *t, uint64_t ino, pid_t maker)
{
	if (!t->scanned && scan_held(t) < 0)
		return -1;
	for (size_t i = 0; i < t->n_held; i++)
		if (t->held[i].ino == ino && !descends(t->held[i].pid, maker))
			return t->held[i].pid;
	return 0;
}

static bool same_creds(const Crf__Net__UnixSk *a, const Crf__Net__UnixSk *b)
{
	return a->peer_pid == b->peer_pid && a->peer_uid == b->peer_uid &&
	       a->peer_gid == b->peer_gid && a->n_peer_groups == b->n_peer_groups &&
	       (!a->n_peer_groups ||
		!memcmp(a->peer_groups, b->peer_groups, a->n_peer_groups * sizeof(uint32_t)));
}

/*
 * Whether @m, bound to a name, sent datagrams that wait on a socket other
 * than @peer: the restore sends them again from @m, in crf's top process,
 * before @m's maker makes it.
 */
static bool sent_elsewhere(const struct unix_table *u, const Crf__Net__UnixSk *m,
			   const Crf__Net__UnixSk *peer)
{
	for (size_t i = 0; m->has_name && i < u->n; i++) {
		const Crf__Net__UnixSk *k = u->v[i];

		for (size_t s = 0; k != m && k != peer && s < k->n_senders; s++)
			if (k->senders[s].len == m->name.len &&
			    !memcmp(k->senders[s].data, m->name.data, m->name.len))
				return true;
	}
	return false;
}

/* Why the pair of @m (its peer @p, or NULL: closed) cannot be made by its maker, or NULL. */
static const char *why_not(const struct unix_table *u, struct tree *t, const Crf__Net__UnixSk *m,
			   const Crf__Net__UnixSk *p, char *buf, size_t len)
{
	pid_t maker = m->peer_pid, stray;

	if (m->state == TCP_LISTEN)
		return "a listener (listen() set it)";
	if (m->has_accepted_from || m->has_queued_on ||
	    (p && (p->has_accepted_from || p->has_queued_on || p->state == TCP_LISTEN)))
		return "an end of a connection (connect() and accept() set it)";
	if (m->state != TCP_ESTABLISHED || (m->has_peer && !p))
		return "not an end of a pair crf makes again with socketpair()";
	if (p && (!p->has_peer || p->peer != m->ino))
		return "a datagram socket's connected one way";
	if (sent_elsewhere(u, m, p) || (p && sent_elsewhere(u, p, m)))
		return "a pair one end of which sent datagrams still queued on another socket";
	if (p && !same_creds(m, p))
		return "a pair whose ends name different makers";
	if (!in_tree(t, maker)) {
		snprintf(buf, len, "made by pid %d, which is no live process of the tree", maker);
		return buf;
	}
	if (!same_user_ns(maker)) {
		snprintf(buf, len, "made by pid %d, in a user namespace not crf's", maker);
		return buf;
	}
	stray = stray_holder(t, m->ino, maker);
	if (!stray && p)
		stray = stray_holder(t, p->ino, maker);
	if (stray < 0)
		return "a pair whose holders crf could not list (out of memory)";
	if (stray) {
		snprintf(buf, len,
			 "made by pid %d, and held by pid %d, which is not it nor one of "
			 "its descendants",
			 maker, stray);
		return buf;
	}
	return NULL;
}

int unix_peercred_plan(struct crf_ctx *ctx, struct unix_table *u)
{
	const char *ok = crf_ctx_config(ctx, "unix-peercred-crf");
	bool accept = ok && !strcmp(ok, "yes");
	struct tree t = {0};
	char what[400], desc[300], buf[200];
	int r;

	r = crf_imgdir_each_task(crf_ctx_images(ctx), "core", add_pid, &t);
	for (size_t i = 0; r >= 0 && i < u->n; i++) {
		Crf__Net__UnixSk *m = u->v[i], *p;
		const char *why;

		if (!m->has_peer_pid || m->has_made_by)
			continue;
		p = m->has_peer ? unix_table_find(u, m->peer, NULL) : NULL;
		why = why_not(u, &t, m, p, buf, sizeof(buf));
		if (!why) {
			m->has_made_by = true;
			m->made_by = m->peer_pid;
			if (p) {
				p->has_made_by = true;
				p->made_by = m->peer_pid;
			}
			continue;
		}
		if (accept)
			continue;
		snprintf(what, sizeof(what), "pid %d: fd %d: %s", m->pid, m->fd,
			 unix_describe(m, desc, sizeof(desc)));
		r = crf_error_errno(
			ENOTSUP,
			"%s: its SO_PEERCRED names pid %d (uid %u, gid %u), which only "
			"that process making it again gives back, and this socket is %s; "
			"crf dump --unix-peercred-crf accepts that a restored one names "
			"crf restore",
			what, m->peer_pid, m->peer_uid, m->peer_gid, why);
	}
	free(t.pids);
	free(t.held);
	return r < 0 ? r : 0;
}

int unix_peercred_check(struct crf_ctx *ctx, const struct unix_table *u)
{
	struct tree t = {0};
	int r = crf_imgdir_each_task(crf_ctx_images(ctx), "core", add_pid, &t);

	for (size_t i = 0; r >= 0 && i < u->n; i++)
		if (u->v[i]->has_made_by && !in_tree(&t, u->v[i]->made_by))
			r = crf_error_errno(EBADMSG,
					    "%s: socket %llu is to be made by pid %d, "
					    "which is no process of the dump",
					    UNIX_IMG, (unsigned long long)u->v[i]->ino,
					    u->v[i]->made_by);
	free(t.pids);
	return r < 0 ? r : 0;
}
