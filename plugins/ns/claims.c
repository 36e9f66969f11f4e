// SPDX-License-Identifier: GPL-2.0-only
/*
 * Namespaces a handler claims (crf/plugin.h, ABI 1.5).
 *
 * Dump (dump-task-data): every namespace of the process that is not crf's
 * own is asked of the registry, with the object the core dispatched for it
 * (crf_ns_object); one claimed by a handler (another plugin's, or this
 * plugin's own: user, pid_for_children, mnt) is recorded in ns-PID.img with who
 * claimed it, and whether the process's own user namespace owns it.  The
 * handler's @dump saved its state already, at the core's dispatch.  A
 * thread in a claimed namespace of its own (not its process's) is refused:
 * restored threads share their process's.
 *
 * Restore: restore-prepare checks that every recorded handler is there
 * (crf_kind_check), before anything is forked.  restore-premap, in each
 * restored process right after it is forked and before it forks its
 * children, calls each handler's @restore in the order of ns_kinds[] (user
 * first: the others belong to it), telling it whether the process is in
 * the namespace already (crf_ns_info.inherited): what the parent restored
 * before forking it is inherited.  This plugin's private table, in the
 * process's memory and so inherited too, says which dump-time namespace
 * each kind is now; a process whose parent is in a claimed namespace but
 * was itself in crf's own at the dump goes back to crf's (setns on an fd of
 * crf's own namespace, opened in restore-prepare).
 *
 * Two processes of the tree in one claimed namespace that neither inherits
 * from the other (one joined it with setns()): the first restored makes it,
 * the others join it (share.c); refused at dump for the kinds that cannot
 * be joined (user, a time_for_children alone).  One that a task, an fd or a
 * mount outside the tree holds too is refused at dump-finish (outside.c),
 * unless named by --external (external.c: not saved, joined at restore).
 *
 * User namespaces (userns*.c): a process joins its restored one only just
 * before its restorer, so it is never in it here; the namespaces of other
 * kinds its user namespace owns are made by their handlers in a child
 * inside it, which the process then joins (ns_userns_inside).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <crf/image.h>
#include <crf/log.h>
#include <crf/plugin.h>

#include "ns.h"
#include "ns.pb-c.h"

#define N_KINDS NS_N_KINDS

static int read_link(const char *path, char *buf, size_t len)
{
	ssize_t n = readlink(path, buf, len - 1);

	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

static uint64_t link_inode(const char *link)
{
	const char *p = strchr(link, '[');

	return p ? strtoull(p + 1, NULL, 10) : 0;
}

/*
 * The link of namespace @kind of thread @tid of @pid ("" when crf's own,
 * or the kind unknown here); pid_for_children is compared with the task's
 * own pid namespace, as the core does.
 */
static int ns_link(pid_t pid, pid_t tid, const char *kind, char *buf, size_t len)
{
	char path[96], mine[96];
	int r;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/ns/%s", (int)pid, (int)tid, kind);
	r = read_link(path, buf, len);
	if (r == -ENOENT && !strcmp(kind, "pid_for_children")) {
		snprintf(buf, len, "pid:[?]");
		return 0;
	}
	if (r == -ENOENT) {
		buf[0] = '\0';
		return 0;
	}
	if (r < 0)
		return crf_error_errno(r, "pid %d: %s", (int)pid, path);
	if (!strcmp(kind, "pid_for_children"))
		snprintf(path, sizeof(path), "/proc/%d/task/%d/ns/pid", (int)pid, (int)tid);
	else
		snprintf(path, sizeof(path), "/proc/self/ns/%s", kind);
	r = read_link(path, mine, sizeof(mine));
	if (r < 0)
		return crf_error_errno(r, "%s", path);
	if (!strcmp(mine, buf))
		buf[0] = '\0';
	return 0;
}

/* Who claims namespace @link of thread @tid: 1 a handler (@o says whose, ns's own too), 0 none, <0.
 */
static int owner(struct crf_ctx *ctx, pid_t pid, pid_t tid, const char *kind, const char *link,
		 struct crf_kind_owner *o)
{
	struct crf_ns_info ni = {
		.size = sizeof(ni), .kind = kind, .id = link_inode(link), .tid = tid};
	struct crf_object obj;
	char desc[192];
	int r;

	crf_ns_object(&ni, link, pid, desc, sizeof(desc), &obj);
	r = crf_kind_owner(ctx, &obj, o);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	/* This plugin's own handlers (user, pid_for_children, mnt, uts, ipc, time) are recorded as
	 * any other's. */
	return 1;
}

static int write_claim(struct crf_ctx *ctx, pid_t pid, struct crf_img **img, const char *kind,
		       const char *link, const struct crf_kind_owner *o)
{
	Crf__Ns__NsClaim c = CRF__NS__NS_CLAIM__INIT;
	char name[64];
	int r;

	if (!*img) {
		snprintf(name, sizeof(name), "ns-%d.img", (int)pid);
		r = crf_img_create(crf_ctx_images(ctx), name, &crf__ns__ns_claim__descriptor, img);
		if (r < 0)
			return r;
	}
	c.kind = (char *)kind;
	c.id = link_inode(link);
	c.link = (char *)link;
	c.claim_kind = (char *)o->kind->name;
	c.claim_plugin = (char *)o->plugin;
	c.claim_version = (char *)o->version;
	r = ns_userns_owns(pid, kind);
	if (r < 0)
		return r;
	c.has_owned_by_user = r > 0;
	c.owned_by_user = r > 0;
	if (!strcmp(o->plugin, "ns") && !strcmp(o->kind->name, "external"))
		c.external_key = (char *)ns_external_key(kind, c.id);
	return crf_img_write(*img, &c.base);
}

/* A thread in a claimed namespace its process is not in cannot be restored. */
static int check_threads(struct crf_ctx *ctx, pid_t pid, const char *kind, const char *plink)
{
	struct crf_kind_owner o;
	char path[64], link[96];
	struct dirent *e;
	int r = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return crf_error_errno(errno, "pid %d: %s", (int)pid, path);
	while (r >= 0 && (e = readdir(d))) {
		pid_t tid = (pid_t)atoi(e->d_name);

		if (tid <= 0 || tid == pid)
			continue;
		r = ns_link(pid, tid, kind, link, sizeof(link));
		if (r < 0 || !*link || !strcmp(link, plink))
			continue;
		r = owner(ctx, pid, tid, kind, link, &o);
		if (r > 0)
			r = crf_error_errno(
				ENOTSUP,
				"pid %d: thread %d is in namespace %s, which its "
				"process is not in: plugin '%s' claims it, but restored "
				"threads share their process's namespaces",
				(int)pid, (int)tid, link, o.plugin);
	}
	closedir(d);
	return r;
}

int ns_dump_task_data(struct crf_ctx *ctx)
{
	pid_t pid = crf_ctx_pid(ctx);
	struct crf_img *img = NULL;
	struct crf_kind_owner o;
	char link[96];
	int r = ns_userns_owners(ctx, pid), c;

	if (r >= 0)
		r = ns_share_seen(pid);
	for (size_t i = 0; r >= 0 && i < N_KINDS; i++) {
		r = ns_link(pid, pid, ns_kinds[i], link, sizeof(link));
		if (r >= 0)
			r = check_threads(ctx, pid, ns_kinds[i], link);
		if (r < 0 || !*link)
			continue;
		r = owner(ctx, pid, pid, ns_kinds[i], link, &o);
		if (r <= 0)
			continue;
		r = ns_share_dump(pid, ns_kinds[i], link_inode(link), link);
		if (r >= 0)
			r = write_claim(ctx, pid, &img, ns_kinds[i], link, &o);
	}
	if (!img)
		return r;
	if (r < 0) {
		crf_img_abort(img);
		return r;
	}
	c = crf_img_close(img);
	return c;
}

/* ---- restore ------------------------------------------------------------ */

/* Inherited through fork: what each kind is now, and crf's own to go back to. */
struct ns_state {
	uint64_t now[N_KINDS]; /* the dump-time inode of the claimed namespace, or 0: crf's */
	int own[N_KINDS];      /* crf's own namespace of each kind, or -1 */
};

static size_t kind_index(const char *kind)
{
	int i = ns_kind_index(kind);

	return i < 0 ? N_KINDS : (size_t)i;
}

/* Open ns-PID.img; 0 with *@img NULL when the process has no claimed namespace. */
static int open_claims(struct crf_ctx *ctx, pid_t pid, struct crf_img **img)
{
	char name[64];

	*img = NULL;
	snprintf(name, sizeof(name), "ns-%d.img", (int)pid);
	if (faccessat(crf_imgdir_fd(crf_ctx_images(ctx)), name, F_OK, 0) < 0)
		return errno == ENOENT ? 0 : crf_error_errno(errno, "%s", name);
	return crf_img_open(crf_ctx_images(ctx), name, &crf__ns__ns_claim__descriptor, img);
}

/* Call @fn on every claim of process @pid, in order; 0 or the first error. */
static int each_claim(struct crf_ctx *ctx, pid_t pid,
		      int (*fn)(struct crf_ctx *ctx, pid_t pid, const Crf__Ns__NsClaim *c,
				void *arg),
		      void *arg)
{
	Crf__Ns__NsClaim *c;
	struct crf_img *img;
	int r;

	r = open_claims(ctx, pid, &img);
	if (r < 0 || !img)
		return r;
	while ((r = crf_img_read(img, (ProtobufCMessage **)&c)) > 0) {
		if (kind_index(c->kind) == N_KINDS)
			r = crf_error_errno(EBADMSG, "ns-%d.img: unknown namespace kind '%s'",
					    (int)pid, c->kind);
		else
			r = fn(ctx, pid, c, arg);
		protobuf_c_message_free_unpacked(&c->base, NULL);
		if (r < 0)
			break;
	}
	crf_img_close(img);
	return r;
}

static void claim_object(const Crf__Ns__NsClaim *c, pid_t pid, bool inherited,
			 struct crf_ns_info *ni, char *desc, size_t len, struct crf_object *obj)
{
	*ni = (struct crf_ns_info){.size = sizeof(*ni),
				   .kind = c->kind,
				   .id = c->id,
				   .tid = pid,
				   .inherited = inherited};
	crf_ns_object(ni, c->link, pid, desc, len, obj);
	obj->kind = c->claim_kind;
}

static int check_claim(struct crf_ctx *ctx, pid_t pid, const Crf__Ns__NsClaim *c, void *arg)
{
	struct crf_ns_info ni;
	struct crf_object obj;
	char desc[192];

	claim_object(c, pid, false, &ni, desc, sizeof(desc), &obj);
	if (c->external_key) {
		int r = ns_external_need(c->kind, c->id, c->external_key);

		if (r < 0)
			return r;
	}
	return crf_kind_check(ctx, &obj, c->claim_plugin);
}

static void free_state(struct crf_ctx *ctx)
{
	struct ns_state *s = crf_ctx_priv(ctx);

	if (!s)
		return;
	for (size_t i = 0; i < N_KINDS; i++)
		if (s->own[i] >= 0)
			close(s->own[i]);
	free(s);
	crf_ctx_set_priv(ctx, NULL);
}

/* crf's own namespaces, to go back to; -1 for a kind this kernel lacks. */
static int open_own(struct ns_state *s)
{
	char path[64];

	for (size_t i = 0; i < N_KINDS; i++) {
		s->own[i] = -1;
		/* Joining crf's time namespace makes it the children's too (time.c). */
		if (!strcmp(ns_kinds[i], "time_for_children"))
			snprintf(path, sizeof(path), "/proc/self/ns/time");
		else if (strstr(ns_kinds[i], "_for_children"))
			continue;
		else
			snprintf(path, sizeof(path), "/proc/self/ns/%s", ns_kinds[i]);
		s->own[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (s->own[i] < 0 && errno != ENOENT)
			return crf_error_errno(errno, "%s", path);
	}
	return 0;
}

static int check_task(void *ctx, const char *name, pid_t pid)
{
	(void)name;
	return each_claim(ctx, pid, check_claim, NULL);
}

int ns_restore_prepare(struct crf_ctx *ctx)
{
	struct ns_state *s;
	int r = ns_validate(crf_ctx_images(ctx));

	if (r >= 0)
		r = crf_imgdir_each_task(crf_ctx_images(ctx), "ns", check_task, ctx);
	if (r >= 0)
		r = ns_external_check(ctx);
	if (r < 0)
		return r;
	s = calloc(1, sizeof(*s));
	if (!s)
		return crf_error_errno(ENOMEM, "namespace state");
	crf_ctx_set_priv(ctx, s);
	r = open_own(s);
	return r < 0 ? r : ns_share_setup();
}

struct premap {
	struct ns_state *s;
	bool claimed[N_KINDS]; /* the process has a claim of this kind */
	bool maker[N_KINDS];   /* it restores the namespace for others to join (share.c) */
	/* owned by its restored user namespace: made in a child inside it (userns.c) */
	bool inside, owned[N_KINDS];
};

static int restore_claim(struct crf_ctx *ctx, pid_t pid, const Crf__Ns__NsClaim *c, void *arg)
{
	struct premap *p = arg;
	size_t k = kind_index(c->kind);
	bool inherited = p->s->now[k] == c->id;
	struct crf_ns_info ni;
	struct crf_object obj;
	char desc[192];
	int r;

	/* Made by another process already: joined (share.c), else this one makes it. */
	if (!inherited && !p->inside) {
		r = ns_share_enter(pid, c->kind, c->id, c->link);
		if (r < 0)
			return r;
		p->maker[k] = r > 0;
		inherited = r == 0;
	}
	/* The first pass leaves them for the child; the child makes only them. */
	if (c->owned_by_user && !inherited && !p->inside) {
		p->owned[k] = true;
		return 0;
	}
	if (p->inside && (!c->owned_by_user || inherited))
		return 0;
	claim_object(c, pid, inherited, &ni, desc, sizeof(desc), &obj);
	r = crf_kind_restore(ctx, &obj, c->claim_plugin);
	if (r < 0)
		return r;
	p->claimed[k] = true;
	p->s->now[k] = c->id;
	if (p->maker[k] && !p->inside) {
		p->maker[k] = false;
		return ns_share_made(pid, c->kind, c->id, -1);
	}
	return 0;
}

/* In the child inside the user namespace: make the owned ones. */
static int premap_inside(struct crf_ctx *ctx, void *arg)
{
	struct premap *p = arg;

	p->inside = true;
	return each_claim(ctx, crf_ctx_pid(ctx), restore_claim, p);
}

/* The process joined the owned ones the child made: what each kind is now. */
static int note_owned(struct crf_ctx *ctx, pid_t pid, const Crf__Ns__NsClaim *c, void *arg)
{
	struct premap *p = arg;
	size_t k = kind_index(c->kind);

	(void)ctx;
	if (!p->owned[k])
		return 0;
	p->s->now[k] = c->id;
	if (!p->maker[k])
		return 0;
	p->maker[k] = false;
	return ns_share_made(pid, c->kind, c->id, -1);
}

/* Restore-premap failed: those this process was to make for others will not be. */
static int fail_made(struct crf_ctx *ctx, pid_t pid, const Crf__Ns__NsClaim *c, void *arg)
{
	struct premap *p = arg;

	(void)ctx;
	if (p->maker[kind_index(c->kind)])
		ns_share_failed(pid, c->kind, c->id);
	return 0;
}

int ns_restore_premap(struct crf_ctx *ctx)
{
	struct premap p = {.s = crf_ctx_priv(ctx)};
	pid_t pid = crf_ctx_pid(ctx);
	int r;

	if (!p.s)
		return 0;
	r = each_claim(ctx, pid, restore_claim, &p);
	if (r >= 0)
		r = ns_userns_inside(ctx, p.owned, ns_kinds, N_KINDS, premap_inside, &p);
	for (size_t k = 0; k < N_KINDS; k++)
		p.claimed[k] |= p.owned[k];
	if (r >= 0)
		r = each_claim(ctx, pid, note_owned, &p);
	if (r < 0)
		each_claim(ctx, pid, fail_made, &p);
	/* In crf's own at the dump, but forked into a parent's claimed one. */
	for (size_t k = 0; r >= 0 && k < N_KINDS; k++) {
		if (p.claimed[k] || !p.s->now[k])
			continue;
		/*
		 * Never in a restored user namespace or pid_for_children yet: they
		 * are joined before the restorer (userns.c, userns-pid.c).
		 */
		if (!strcmp(ns_kinds[k], "user") || !strcmp(ns_kinds[k], "pid_for_children")) {
			p.s->now[k] = 0;
			continue;
		}
		if (p.s->own[k] < 0 || setns(p.s->own[k], 0) < 0)
			return crf_error_errno(p.s->own[k] < 0 ? ENOTSUP : errno,
					       "pid %d: cannot leave its parent's %s namespace "
					       "for crf's own, where it was at the dump",
					       (int)pid, ns_kinds[k]);
		p.s->now[k] = 0;
	}
	return r;
}

int ns_restore_cleanup(struct crf_ctx *ctx)
{
	free_state(ctx);
	ns_share_cleanup();
	return 0;
}
