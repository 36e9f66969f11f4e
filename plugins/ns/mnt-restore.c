// SPDX-License-Identifier: GPL-2.0-only
/*
 * The mount namespace handler's restore (kind "mnt", docs/ns-mnt.md), in
 * the first restored process of the namespace, right after its fork:
 *
 *  1. the bind sources are cloned (open_tree) in crf's namespace, and each
 *     checked to be the file of the dump (device, inode);
 *  2. unshare(CLONE_NEWNS), and every mount made a slave (MS_REC|MS_SLAVE
 *     of "/"): nothing done next propagates out to crf's mounts;
 *  3. the copies of crf's mounts the dump had are found again (same place,
 *     filesystem, root, source, parent) and the others unmounted; for a
 *     container root (the root a bind of a directory of crf's) none is
 *     kept: the tree is built at the root's source and pivoted into
 *     (pivot_root(".", ".") and the old root detached) after step 4;
 *  4. the mounts made in the namespace are made again in the dump's order
 *     (parents first): tmpfs (filled before it is attached), proc, sysfs,
 *     mqueue with fsopen/fsconfig/fsmount, binds from step 1, attached with
 *     move_mount; every mount's per-mount flags set with mount_setattr;
 *  5. propagation: private, slave (of crf's group, as unshare left it),
 *     shared (a group of its own), unbindable;
 *  6. the table is read again and compared with the dump's, field by field
 *     (mount IDs and the peer group numbers the kernel picks aside): any
 *     difference fails the restore, naming the mount and the field.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <linux/mount.h>
#include <unistd.h>

#include <crf/image.h>
#include <crf/log.h>

#include "mnt.h"
#include "mnt.pb-c.h"

#define ATTR_ALL                                                                                   \
	(MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC |            \
	 MOUNT_ATTR__ATIME | MOUNT_ATTR_NODIRATIME | MOUNT_ATTR_NOSYMFOLLOW)

struct mnt_rst {
	pid_t pid;
	const char *desc;
	uint64_t ns;
	struct crf_ctx *ctx;
	Crf__Ns__MntEntry **e;
	size_t n;
	int *fd;	   /* bind clones, -1 */
	int *now;	   /* dump line -> line of the table now, -1 */
	const char *stage; /* a container root: where its tree is built, or NULL */
	const char *root;  /* crf restore --root DIR, or NULL */
	int proc;	   /* crf's /proc, to read the table after the pivot */
};

static int fail(const struct mnt_rst *s, const Crf__Ns__MntEntry *e, int err, const char *what)
{
	return crf_error_errno(err, "pid %d: mount namespace %s: mount %u at %s (%s %s): %s",
			       (int)s->pid, s->desc, e->id, e->mount_point, e->fstype, e->source,
			       what);
}

static int read_entries(struct mnt_rst *s)
{
	Crf__Ns__MntEntry *e;
	struct crf_img *img;
	char name[96];
	size_t cap = 0;
	int r;

	mnt_image(name, sizeof(name), s->ns, 0);
	r = crf_img_open(crf_ctx_images(s->ctx), name, &crf__ns__mnt_entry__descriptor, &img);
	if (r < 0)
		return r;
	while ((r = crf_img_read(img, (ProtobufCMessage **)&e)) > 0) {
		if (s->n == cap) {
			Crf__Ns__MntEntry **v;

			cap = cap ? cap * 2 : 32;
			v = realloc(s->e, cap * sizeof(*v));
			if (!v) {
				protobuf_c_message_free_unpacked(&e->base, NULL);
				r = -ENOMEM;
				break;
			}
			s->e = v;
		}
		s->e[s->n++] = e;
		if (e->how == CRF__NS__MNT_HOW__MNT_BIND &&
		    (!e->bind_src || !e->has_src_dev || !e->has_src_ino)) {
			r = crf_error_errno(EBADMSG, "%s: mount %u: a bind without its source",
					    name, e->id);
			break;
		}
	}
	crf_img_close(img);
	if (r >= 0 && !s->n)
		r = crf_error_errno(EBADMSG, "%s: no mount", name);
	return r;
}

static int dump_index(const struct mnt_rst *s, unsigned int id)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->e[i]->id == id)
			return (int)i;
	return -1;
}

/* 1: the bind sources, from crf's namespace. */
static int open_binds(struct mnt_rst *s)
{
	for (size_t i = 0; i < s->n; i++) {
		const Crf__Ns__MntEntry *e = s->e[i];
		struct stat st;
		char why[4300];

		const char *src = e->bind_src;
		char *ext = NULL;
		int err = 0;

		if (e->how == CRF__NS__MNT_HOW__MNT_EXT) {
			ext = e->ext_key ? mnt_external(s->ctx, e->ext_key, &err) : NULL;
			if (!ext)
				return err < 0 ? err
					       : fail(s, e, ENOENT,
						      "external at the dump: crf restore "
						      "--external "
						      "mnt[KEY]:PATH says what to bind there");
			src = ext;
		} else if (e->how != CRF__NS__MNT_HOW__MNT_BIND) {
			continue;
		}
		/* crf restore --root DIR: a container's root is DIR now. */
		if (i == 0 && s->root)
			src = s->root;
		s->fd[i] = (int)syscall(SYS_open_tree, AT_FDCWD, src,
					OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
		if (s->fd[i] < 0) {
			snprintf(why, sizeof(why), "open_tree of its source %s", src);
			free(ext);
			return fail(s, e, errno, why);
		}
		free(ext);
		if (e->how == CRF__NS__MNT_HOW__MNT_EXT || (i == 0 && s->root))
			continue;
		if (fstat(s->fd[i], &st) < 0)
			return fail(s, e, errno, "fstat");
		if (st.st_dev != e->src_dev || st.st_ino != e->src_ino) {
			snprintf(why, sizeof(why),
				 "its source %s is another file than at the dump (device %#llx "
				 "inode %llu, was %#llx %llu)",
				 e->bind_src, (unsigned long long)st.st_dev,
				 (unsigned long long)st.st_ino, (unsigned long long)e->src_dev,
				 (unsigned long long)e->src_ino);
			return fail(s, e, ESTALE, why);
		}
	}
	return 0;
}

static bool same_line(const Crf__Ns__MntEntry *e, const struct mnt_line *m)
{
	return e->major == m->major && e->minor == m->minor && !strcmp(e->root, m->root) &&
	       !strcmp(e->fstype, m->fstype) && !strcmp(e->source, m->source);
}

/*
 * Map each dump line to a line of @t: same place, parent the mapped parent
 * (the root to the root), and, with @fs, the same filesystem; @only_how
 * limits it to lines of one kind (-1: all).
 */
static void map_lines(struct mnt_rst *s, const struct mnt_table *t, bool fs, int only_how)
{
	bool *used = calloc(t->n ? t->n : 1, sizeof(*used));

	for (size_t i = 0; i < s->n; i++)
		s->now[i] = -1;
	for (size_t i = 0; used && i < s->n; i++) {
		const Crf__Ns__MntEntry *e = s->e[i];
		int p = dump_index(s, e->parent);

		if (only_how >= 0 && (int)e->how != only_how)
			continue;
		if (p >= 0 && s->now[p] < 0)
			continue;
		for (size_t k = 0; k < t->n; k++) {
			const struct mnt_line *m = &t->v[k];
			bool parent_ok = p < 0 ? !mnt_table_find(t, m->parent)
					       : m->parent == t->v[s->now[p]].id;

			if (used[k] || !parent_ok || strcmp(m->mount_point, e->mount_point) ||
			    (fs && !same_line(e, m)))
				continue;
			used[k] = true;
			s->now[i] = (int)k;
			break;
		}
	}
	free(used);
}

/* 3: crf's copies found, the rest unmounted. */
static int keep_crf_mounts(struct mnt_rst *s)
{
	struct mnt_table t;
	bool *keep;
	int r;

	r = mnt_table_read("/proc/self/mountinfo", &t);
	if (r < 0)
		return r;
	map_lines(s, &t, true, CRF__NS__MNT_HOW__MNT_CRF);
	keep = calloc(t.n ? t.n : 1, sizeof(*keep));
	if (!keep) {
		mnt_table_free(&t);
		return -ENOMEM;
	}
	for (size_t i = 0; r >= 0 && i < s->n; i++) {
		if (s->e[i]->how != CRF__NS__MNT_HOW__MNT_CRF)
			continue;
		if (s->now[i] < 0)
			r = fail(
				s, s->e[i], ENOENT,
				"crf's own mount of this place, which the namespace had a copy of, "
				"is not there any more (or is another)");
		else
			keep[s->now[i]] = true;
	}
	/* Deepest first: mountinfo lists a mount after its parent. */
	for (size_t k = t.n; r >= 0 && k-- > 0;) {
		if (keep[k])
			continue;
		if (umount2(t.v[k].mount_point, MNT_DETACH) < 0 && errno != EINVAL &&
		    errno != ENOENT)
			r = crf_error_errno(errno, "pid %d: mount namespace %s: umount %s",
					    (int)s->pid, s->desc, t.v[k].mount_point);
	}
	free(keep);
	mnt_table_free(&t);
	return r;
}

static int set_attr(int dfd, const char *path, unsigned int flags, const Crf__Ns__MntEntry *e,
		    const struct mnt_rst *s)
{
	struct mount_attr a = {.attr_clr = ATTR_ALL};
	uint64_t attr;

	if (mnt_opts_attr(e->opts, &attr) < 0)
		return fail(s, e, EBADMSG, "per-mount options not known");
	a.attr_set = attr;
	if (syscall(SYS_mount_setattr, dfd, path, flags, &a, sizeof(a)) < 0)
		return fail(s, e, errno, "mount_setattr");
	return 0;
}

/* fsconfig every superblock option of @e but rw. */
static int configure(int fsfd, const Crf__Ns__MntEntry *e, const struct mnt_rst *s)
{
	char *opts = strdup(e->super_opts), *tok, *save = NULL;
	int r = 0;

	if (!opts)
		return -ENOMEM;
	if (syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_STRING, "source", e->source, 0) < 0)
		r = fail(s, e, errno, "fsconfig source");
	for (tok = strtok_r(opts, ",", &save); r >= 0 && tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		char why[300];
		long c;

		if (!strcmp(tok, "rw") || !strcmp(tok, "ro"))
			continue; /* ro: set once filled (make_new) */
		if (eq) {
			*eq = '\0';
			c = syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_STRING, tok, eq + 1, 0);
		} else {
			c = syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_FLAG, tok, NULL, 0);
		}
		if (c < 0) {
			snprintf(why, sizeof(why), "fsconfig %s%s%s", tok, eq ? "=" : "",
				 eq ? eq + 1 : "");
			r = fail(s, e, errno, why);
		}
	}
	free(opts);
	return r;
}

static bool has_opt(const char *opts, const char *opt)
{
	size_t n = strlen(opt);

	for (const char *p = opts; (p = strstr(p, opt)); p += n)
		if ((p == opts || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

/* A superblock made read-only once filled. */
static int make_ro(int mfd, const Crf__Ns__MntEntry *e, const struct mnt_rst *s)
{
	int fd = (int)syscall(SYS_fspick, mfd, "", FSPICK_EMPTY_PATH | FSPICK_CLOEXEC), r = 0;

	if (fd < 0)
		return fail(s, e, errno, "fspick");
	if (syscall(SYS_fsconfig, fd, FSCONFIG_SET_FLAG, "ro", NULL, 0) < 0 ||
	    syscall(SYS_fsconfig, fd, FSCONFIG_CMD_RECONFIGURE, NULL, NULL, 0) < 0)
		r = fail(s, e, errno, "reconfigure read-only");
	close(fd);
	return r;
}

/* A filesystem of its own, filled (tmpfs), then given its flags; detached in s->fd[i]. */
static int make_new(struct mnt_rst *s, size_t i)
{
	const Crf__Ns__MntEntry *e = s->e[i];
	int fsfd, mfd, r;

	fsfd = (int)syscall(SYS_fsopen, e->fstype, FSOPEN_CLOEXEC);
	if (fsfd < 0)
		return fail(s, e, errno, "fsopen");
	r = configure(fsfd, e, s);
	if (r >= 0 && syscall(SYS_fsconfig, fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		r = fail(s, e, errno, "fsconfig create");
	mfd = r < 0 ? -1 : (int)syscall(SYS_fsmount, fsfd, FSMOUNT_CLOEXEC, 0);
	if (r >= 0 && mfd < 0)
		r = fail(s, e, errno, "fsmount");
	close(fsfd);
	s->fd[i] = mfd;
	if (r >= 0 && !strcmp(e->fstype, "tmpfs")) {
		struct crf_img *img;
		char name[96], where[4200];

		mnt_image(name, sizeof(name), s->ns, e->id);
		snprintf(where, sizeof(where), "pid %d: mount namespace %s: tmpfs at %s",
			 (int)s->pid, s->desc, e->mount_point);
		r = crf_img_open(crf_ctx_images(s->ctx), name, &crf__ns__mnt_node__descriptor,
				 &img);
		if (r >= 0) {
			r = mnt_tmpfs_fill(mfd, where, img);
			crf_img_close(img);
		}
	}
	if (r >= 0 && has_opt(e->super_opts, "ro"))
		r = make_ro(mfd, e, s);
	if (r >= 0)
		r = set_attr(mfd, "", AT_EMPTY_PATH, e, s);
	return r;
}

/*
 * A copy of crf's covered by another at the same place (unshare copied
 * both, the dump let only those be): reached by its place, the top one
 * would be set; it keeps what it was copied with, and compare() checks.
 */
static bool covered(const struct mnt_rst *s, const Crf__Ns__MntEntry *e)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->e[i]->parent == e->id && !strcmp(s->e[i]->mount_point, e->mount_point))
			return true;
	return false;
}

/*
 * A bind of a file or directory of a filesystem made in the namespace: a
 * clone of the mount made for it (earlier in the table), detached in s->fd[i].
 */
static int make_newbind(struct mnt_rst *s, size_t i)
{
	const Crf__Ns__MntEntry *e = s->e[i];
	int k = e->has_bind_of ? dump_index(s, e->bind_of) : -1;

	if (k < 0 || (size_t)k >= i || s->e[k]->how != CRF__NS__MNT_HOW__MNT_NEW || s->fd[k] < 0 ||
	    !mnt_root_ok(e->root))
		return fail(s, e, EBADMSG, "a bind of no filesystem made before it");
	s->fd[i] = (int)syscall(SYS_open_tree, s->fd[k], strcmp(e->root, "/") ? e->root + 1 : "",
				OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW |
					(strcmp(e->root, "/") ? 0 : AT_EMPTY_PATH));
	if (s->fd[i] < 0)
		return fail(s, e, errno, "open_tree of its root in the filesystem made for it");
	return 0;
}

/* 4: the mounts made in the namespace, and everyone's flags. */
static int make_mounts(struct mnt_rst *s)
{
	int r = 0;

	for (size_t i = 0; r >= 0 && i < s->n; i++) {
		const Crf__Ns__MntEntry *e = s->e[i];

		if (e->how == CRF__NS__MNT_HOW__MNT_CRF) {
			if (!covered(s, e))
				r = set_attr(AT_FDCWD, e->mount_point, 0, e, s);
			continue;
		}
		if (e->how == CRF__NS__MNT_HOW__MNT_NEWBIND)
			r = make_newbind(s, i);
		r = r < 0 ? r
		    : e->how == CRF__NS__MNT_HOW__MNT_NEW
			    ? make_new(s, i)
			    : set_attr(s->fd[i], "", AT_EMPTY_PATH, e, s);
		if (r >= 0) {
			char at[8192];

			/* A container root's tree is built at its root's source, then pivoted. */
			snprintf(at, sizeof(at), "%s%s", s->stage ? s->stage : "",
				 s->stage && !strcmp(e->mount_point, "/") ? "" : e->mount_point);
			if (syscall(SYS_move_mount, s->fd[i], "", AT_FDCWD, at,
				    MOVE_MOUNT_F_EMPTY_PATH) < 0)
				r = fail(s, e, errno, "move_mount");
		}
	}
	return r;
}

/* A container root: the tree built at s->stage becomes the root, the old one detached. */
static int pivot(struct mnt_rst *s)
{
	if (chdir(s->stage) < 0 || syscall(SYS_pivot_root, ".", ".") < 0 ||
	    umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
		return crf_error_errno(errno, "pid %d: mount namespace %s: pivot_root into %s",
				       (int)s->pid, s->desc, s->stage);
	return 0;
}

/* 5: propagation, in the dump's order. */
static int propagate(struct mnt_rst *s)
{
	for (size_t i = 0; i < s->n; i++) {
		const Crf__Ns__MntEntry *e = s->e[i];

		if (covered(s, e))
			continue;
		if (mount(NULL, e->mount_point, NULL, e->master ? MS_SLAVE : MS_PRIVATE, NULL) < 0)
			return fail(s, e, errno, e->master ? "make slave" : "make private");
		if (e->shared && mount(NULL, e->mount_point, NULL, MS_SHARED, NULL) < 0)
			return fail(s, e, errno, "make shared");
		if (e->unbindable && mount(NULL, e->mount_point, NULL, MS_UNBINDABLE, NULL) < 0)
			return fail(s, e, errno, "make unbindable");
	}
	return 0;
}

static int differs(const struct mnt_rst *s, const Crf__Ns__MntEntry *e, const char *field,
		   const char *is, const char *was)
{
	char why[9000];

	snprintf(why, sizeof(why), "after the restore its %s is '%s', was '%s' at the dump", field,
		 is, was);
	return fail(s, e, ENOTRECOVERABLE, why);
}

/* The device of the mount a MNT_NEWBIND was made from, as it is in @t now. */
static const char *bind_dev(const struct mnt_rst *s, const struct mnt_table *t,
			    const Crf__Ns__MntEntry *e, char *buf, size_t len)
{
	int k = dump_index(s, e->bind_of);

	if (k < 0 || s->now[k] < 0)
		snprintf(buf, len, "none");
	else
		snprintf(buf, len, "%u:%u", t->v[s->now[k]].major, t->v[s->now[k]].minor);
	return buf;
}

/*
 * A sysfs or mqueue made anew must be the one of the net or IPC namespace
 * the process is in now (its own, restored before this one: ns_kinds[]).
 */
static int own_ns_fs(const struct mnt_rst *s, const Crf__Ns__MntEntry *e, const struct mnt_line *m)
{
	const char *path = strcmp(e->fstype, "sysfs") ? "thread-self/ns/ipc" : "thread-self/ns/net";
	int r = mnt_fs_of_ns_at(s->proc, path, m);

	if (r == 0)
		r = fail(s, e, ENOTRECOVERABLE,
			 "after the restore it is not the one of the namespace the process is in");
	return r;
}

/* 6: the table now against the dump's. */
static int compare(struct mnt_rst *s)
{
	struct mnt_table t;
	int r;

	r = mnt_table_read_at(s->proc, "self/mountinfo", &t);
	if (r < 0)
		return r;
	map_lines(s, &t, false, -1);
	for (size_t i = 0; r >= 0 && i < s->n; i++) {
		const Crf__Ns__MntEntry *e = s->e[i];
		const struct mnt_line *m;
		char a[64], b[64];
		bool other;

		if (s->now[i] < 0) {
			r = fail(s, e, ENOTRECOVERABLE, "not there after the restore");
			break;
		}
		m = &t.v[s->now[i]];
		snprintf(a, sizeof(a), "%u:%u", m->major, m->minor);
		snprintf(b, sizeof(b), "%u:%u", e->major, e->minor);
		/* Bound from what crf restore was given: its flags and propagation only. */
		other = e->how == CRF__NS__MNT_HOW__MNT_EXT || (i == 0 && s->root);
		if (other)
			;
		else if (strcmp(m->root, e->root))
			r = differs(s, e, "root", m->root, e->root);
		else if (strcmp(m->fstype, e->fstype))
			r = differs(s, e, "filesystem type", m->fstype, e->fstype);
		else if (strcmp(m->source, e->source))
			r = differs(s, e, "source", m->source, e->source);
		else if (strcmp(m->opts, e->opts))
			r = differs(s, e, "per-mount options", m->opts, e->opts);
		else if (strcmp(m->super_opts, e->super_opts))
			r = differs(s, e, "superblock options", m->super_opts, e->super_opts);
		else if (e->how != CRF__NS__MNT_HOW__MNT_NEW &&
			 e->how != CRF__NS__MNT_HOW__MNT_NEWBIND && strcmp(a, b))
			r = differs(s, e, "device", a, b);
		else if (e->how == CRF__NS__MNT_HOW__MNT_NEWBIND &&
			 strcmp(a, bind_dev(s, &t, e, b, sizeof(b))))
			r = differs(s, e, "device (its filesystem's now)", a, b);
		if (r >= 0 && e->how == CRF__NS__MNT_HOW__MNT_NEW &&
		    (!strcmp(e->fstype, "sysfs") || !strcmp(e->fstype, "mqueue")))
			r = own_ns_fs(s, e, m);
		if (r < 0)
			break;
		if (other && strcmp(m->opts, e->opts))
			r = differs(s, e, "per-mount options", m->opts, e->opts);
		else if (!m->shared != !e->shared)
			r = differs(s, e, "propagation", m->shared ? "shared" : "not shared",
				    e->shared ? "shared" : "not shared");
		else if (m->master != e->master) {
			snprintf(a, sizeof(a), "master:%u", m->master);
			snprintf(b, sizeof(b), "master:%u", e->master);
			r = differs(s, e, "propagation", a, b);
		} else if (m->unbindable != e->unbindable)
			r = differs(s, e, "propagation", m->unbindable ? "unbindable" : "bindable",
				    e->unbindable ? "unbindable" : "bindable");
	}
	if (r >= 0 && t.n != s->n)
		r = crf_error_errno(ENOTRECOVERABLE,
				    "pid %d: mount namespace %s: %zu mounts after the restore, %zu "
				    "at the dump",
				    (int)s->pid, s->desc, t.n, s->n);
	mnt_table_free(&t);
	return r;
}

int mnt_restore(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_ns_info *ni = obj->data;
	struct mnt_rst s = {
		.pid = obj->pid, .desc = obj->desc, .ns = ni->id, .ctx = ctx, .proc = -1};
	int r;

	if (ni->inherited)
		return 0;
	r = read_entries(&s);
	if (r >= 0) {
		s.fd = malloc(s.n * sizeof(*s.fd));
		s.now = malloc(s.n * sizeof(*s.now));
		if (!s.fd || !s.now)
			r = -ENOMEM;
		for (size_t i = 0; r >= 0 && i < s.n; i++)
			s.fd[i] = -1;
	}
	/* The root a bind of crf's (not a copy): a container root, at DIR with --root. */
	s.root = crf_ctx_config(ctx, "root");
	if (r >= 0 && s.e[0]->how == CRF__NS__MNT_HOW__MNT_BIND)
		s.stage = s.root ? s.root : s.e[0]->bind_src;
	else if (r >= 0 && s.root)
		r = crf_error_errno(EINVAL,
				    "pid %d: mount namespace %s: crf restore --root %s, but its "
				    "root was no container's (a copy of crf's)",
				    (int)s.pid, s.desc, s.root);
	if (r >= 0) {
		s.proc = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (s.proc < 0)
			r = crf_error_errno(errno, "/proc");
	}
	if (r >= 0)
		r = open_binds(&s);
	if (r >= 0 && unshare(CLONE_NEWNS) < 0)
		r = crf_error_errno(errno, "pid %d: unshare(CLONE_NEWNS)", (int)s.pid);
	if (r >= 0 && mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		r = crf_error_errno(errno, "pid %d: make / a slave", (int)s.pid);
	if (r >= 0 && !s.stage)
		r = keep_crf_mounts(&s);
	if (r >= 0)
		r = make_mounts(&s);
	if (r >= 0 && s.stage)
		r = pivot(&s);
	if (r >= 0)
		r = propagate(&s);
	if (r >= 0)
		r = compare(&s);
	if (s.proc >= 0)
		close(s.proc);
	for (size_t i = 0; s.fd && i < s.n; i++)
		if (s.fd[i] >= 0)
			close(s.fd[i]);
	for (size_t i = 0; i < s.n; i++)
		protobuf_c_message_free_unpacked(&s.e[i]->base, NULL);
	free(s.e);
	free(s.fd);
	free(s.now);
	return r;
}
