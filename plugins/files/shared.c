// SPDX-License-Identifier: GPL-2.0-only
/*
 * Open file descriptions shared between fds, within a task (dup) and
 * between the tasks of the tree (fork inheritance, SCM_RIGHTS), for the
 * kinds saved in an Fd record of their own: regular files (unlinked and
 * O_TMPFILE ones too), directories, character devices, terminals, eventfd,
 * timerfd, signalfd, memfd, pidfd, epoll and inotify.
 *
 * At the dump every description saved so far in the tree is kept as the
 * (pid, fd) of its first fd: the tree is frozen for the whole dump, so
 * kcmp can tell whether a later fd is one of them.  A later fd of the same
 * task is "same as fd M"; one of another task is "same as fd M of pid P",
 * and the description is then listed in shared-fds.img, where the record
 * of its first fd holds its state.
 *
 * Reopening such a description in each task would give each its own
 * offset, flags and object (an eventfd that no longer wakes the other
 * side), silently.  So at restore each one is created once, in crf's top
 * process before the tree is forked from it, and every task that had it
 * dups it.
 */
#include <errno.h>
#include <fcntl.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/kcmp.h>

#include <crf/cleanup.h>
#include <crf/image.h>

#include "anonfd.h"
#include "epoll.h"
#include "files.h"
#include "files.pb-c.h"
#include "unlinked.h"
#include "tty.h"

#define SHARED_IMG "shared-fds.img"

struct files_desc {
	int pid, fd;
	uint64_t dev, ino; /* dump: its file's, compared before kcmp is asked */
	bool shared;	   /* dump: an fd of another task has it too */
	bool in_maker;	   /* made in @pid's restore-premap, not in crf's top process */
	int top;	   /* restore: crf's own fd on it, or -1 */
	bool given;	   /* restore: @top is the core's now (crf_rst_keep_fd) */
	/*
	 * restore: the first fd's record, when its kind makes the description
	 * later than restore-prepare (-EAGAIN there): each task asks again.
	 */
	Crf__Files__Fd *later;
	int *err; /* a lookup's key only: where a failed kcmp leaves its errno */
};

/*
 * Dump: @v in the order saved (the order of shared-fds.img), @tree the same
 * descriptions ordered by kcmp, so that finding an fd among n of them takes
 * log n calls, not n: a dump of 10 000 fds would otherwise make 50 million.
 * A lookup that finds nothing inserts the fd's description at once (the
 * same walk, no second one): it is @pending until files_desc_remember()
 * keeps it, or the next lookup takes it out again.
 * Restore: @v sorted by (pid, fd) once shared-fds.img is read.
 */
struct files_descs {
	struct files_desc **v;
	size_t n, cap;
	void *tree;
	void *tables; /* dump: the fd tables saved so far (struct table_key) */
	struct files_desc *pending;
	struct files_desc *found; /* what files_desc_find() found last */
	bool was_shared;	  /* ... and whether it was shared before */
};

static void nothing(void *node)
{
	(void)node;
}

void files_descs_free(struct files_descs *ds)
{
	if (!ds)
		return;
	tdestroy(ds->tree, nothing);
	tdestroy(ds->tables, free);
	for (size_t i = 0; i < ds->n; i++) {
		if (ds->v[i]->top >= 0 && !ds->v[i]->given)
			close(ds->v[i]->top);
		if (ds->v[i]->later)
			crf__files__fd__free_unpacked(ds->v[i]->later, NULL);
		free(ds->v[i]);
	}
	free(ds->v);
	free(ds);
}

static struct files_desc *desc_add(struct files_tree *tree, int pid, int fd)
{
	struct files_desc **v, *s;

	if (!tree->descs) {
		tree->descs = calloc(1, sizeof(*tree->descs));
		if (!tree->descs)
			return NULL;
	}
	if (tree->descs->n == tree->descs->cap) {
		size_t cap = tree->descs->cap ? 2 * tree->descs->cap : 64;

		v = reallocarray(tree->descs->v, cap, sizeof(*v));
		if (!v)
			return NULL;
		tree->descs->v = v;
		tree->descs->cap = cap;
	}
	v = tree->descs->v;
	s = malloc(sizeof(*s));
	if (!s)
		return NULL;
	*s = (struct files_desc){.pid = pid, .fd = fd, .top = -1};
	v[tree->descs->n++] = s;
	return s;
}

/*
 * The order of two descriptions for tsearch(3): by their file's device and
 * inode (from the fd walk's stat), then, for two of one file,
 * kcmp(KCMP_FILE), which compares the kernel's struct file pointers
 * (obfuscated, the order kept) and says 0 for the same one, 1 for less, 2
 * for greater.  Anything else (an error, or 3: "no order") is left in the
 * lookup key's err, and the lookup fails.
 */
static int desc_cmp(const void *a, const void *b)
{
	const struct files_desc *x = a, *y = b;
	int *err = x->err ? x->err : y->err;
	long r;

	if (x->pid == y->pid && x->fd == y->fd)
		return 0;
	/* One description is one file: other files need no kcmp. */
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	r = syscall(SYS_kcmp, x->pid, y->pid, KCMP_FILE, x->fd, y->fd);
	if (r == 0 || r == 1 || r == 2)
		return r == 0 ? 0 : r == 1 ? -1 : 1;
	if (err && !*err)
		*err = r < 0 ? errno : EINVAL;
	return -1;
}

/* Take out the last description of @ds->v, which is @s, from the tree too if @in_tree. */
static int desc_drop_last(struct files_descs *ds, struct files_desc *s, bool in_tree)
{
	int err = 0;
	struct files_desc key = {
		.pid = s->pid, .fd = s->fd, .dev = s->dev, .ino = s->ino, .err = &err};

	if (in_tree && (!tdelete(&key, &ds->tree, desc_cmp) || err))
		return crf_error_errno(err ? err : ENOENT,
				       "pid %d: fd %d: taking it out of "
				       "the saved descriptions",
				       s->pid, s->fd);
	ds->n--;
	free(s);
	return 0;
}

static bool same_mnt_ns(int pid)
{
	struct stat a, b;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", pid);
	return stat(path, &a) == 0 && stat("/proc/self/ns/mnt", &b) == 0 && a.st_ino == b.st_ino &&
	       a.st_dev == b.st_dev;
}

/* Is @pid a descendant of @anc (the tree is frozen: parents do not change)? */
static bool descends(int pid, int anc)
{
	for (int i = 0; i < 4096 && pid > 1; i++) {
		char path[64], text[1024];
		const char *p;
		ssize_t n;
		int f;

		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		f = open(path, O_RDONLY | O_CLOEXEC);
		n = f < 0 ? -1 : read(f, text, sizeof(text) - 1);
		if (f >= 0)
			close(f);
		if (n <= 0)
			return false;
		text[n] = '\0';
		if (!(p = strrchr(text, ')')))
			return false;
		if (sscanf(p + 1, " %*c %d", &pid) != 1)
			return false;
		if (pid == anc)
			return true;
	}
	return false;
}

/*
 * A description two tasks share is made once at restore, before the tasks
 * are forked from where it was made, and every task that had it dups it:
 * by default in crf's top process, by its path in crf's mount namespace.
 * Where its first holder @s is in another one (a container's), that path
 * may be another file there (the host's /etc/hosts for the container's,
 * the host's /dev/null for the container's own): then it is made in the
 * first holder itself, once its namespaces are built (restore-premap),
 * which needs every other holder to be its descendant (they inherit it
 * from there).  A holder elsewhere is refused unless the path is the same
 * file in crf's namespace.  Paths of no file (anonymous inodes, memfds,
 * deleted files) are the kinds' own business.
 */
static int check_maker(struct files_desc *s, const Crf__Files__Fd *e, int pid, int fd)
{
	struct stat st;
	size_t n;

	if (!e->path || e->path[0] != '/' || !strncmp(e->path, "/memfd:", 7) || same_mnt_ns(s->pid))
		return 0;
	n = strlen(e->path);
	if (n > 10 && !strcmp(e->path + n - 10, " (deleted)"))
		return 0;
	if ((!s->shared || s->in_maker) && descends(pid, s->pid)) {
		s->in_maker = true;
		return 0;
	}
	if (!s->in_maker && stat(e->path, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino)
		return 0;
	return crf_error_errno(ENOTSUP,
			       "pid %d: fd %d (%s) shares its open file description with pid %d, "
			       "which is in a mount namespace not crf's and not its ancestor: a "
			       "shared description is made in its first holder or, by its path, in "
			       "crf's namespace, where that path is another file (or none); not "
			       "restored",
			       pid, fd, e->path, s->pid);
}

int files_desc_find(struct files_dump *d, int fd, Crf__Files__Fd *e)
{
	struct files_descs *ds;
	struct files_desc *s, **node;
	int err = 0, r;

	ds = d->tree->descs;
	if (ds && ds->pending) {
		/* Not kept: its fd's dump failed.  It is the last one added. */
		struct files_desc *p = ds->pending;

		ds->pending = NULL;
		r = desc_drop_last(ds, p, true);
		if (r < 0)
			return r;
	}
	s = desc_add(d->tree, d->pid, fd);
	if (!s)
		return crf_error_errno(ENOMEM, "pid %d: fd %d", d->pid, fd);
	if (d->cur_fd == fd) {
		s->dev = d->cur_st.st_dev;
		s->ino = d->cur_st.st_ino;
	}
	ds = d->tree->descs;
	s->err = &err;
	node = tsearch(s, &ds->tree, desc_cmp);
	s->err = NULL;
	if (!node || err) {
		if (node && *node == s)
			ds->pending = s;
		else
			desc_drop_last(ds, s, false);
		return crf_error_errno(err ? err : ENOMEM,
				       "pid %d: fd %d: kcmp with the descriptions saved before "
				       "failed or gave no order",
				       d->pid, fd);
	}
	if (*node == s) {
		ds->pending = s;
		return 0;
	}
	desc_drop_last(ds, s, false);
	s = *node;
	ds->found = s;
	ds->was_shared = s->shared;
	e->has_same_as = true;
	e->same_as = s->fd;
	if (s->pid != d->pid) {
		if ((!s->shared || s->in_maker) && (r = check_maker(s, e, d->pid, fd)) < 0)
			return r;
		e->has_same_pid = true;
		e->same_pid = s->pid;
		s->shared = true;
	}
	return 1;
}

void files_desc_unshare(struct files_dump *d, Crf__Files__Fd *e)
{
	struct files_descs *ds = d->tree->descs;

	if (!e->has_same_pid || !ds || !ds->found)
		return;
	ds->found->shared = ds->was_shared;
	e->has_same_as = e->has_same_pid = false;
	e->same_as = e->same_pid = 0;
}

int files_fdinfo_fd_begin(struct crf_ctx *ctx, const struct crf_object *obj, const char *what,
			  Crf__Files__Fd *e, const char **text, struct files_dump **dp)
{
	struct files_dump *d;
	int fd = obj->id, same, r;

	r = files_fd_begin(ctx, obj, e, dp);
	if (r < 0)
		return r;
	d = *dp;
	files_cur_fdinfo(d, text);
	same = files_desc_find(d, fd, e);
	if (same < 0)
		return same;
	if (same && e->has_same_pid)
		crf_debug("pid %d: %s fd %d is fd %d of pid %d", d->pid, what, fd, e->same_as,
			  e->same_pid);
	return same ? 1 : 0;
}

int files_desc_remember(struct files_dump *d, int fd)
{
	struct files_descs *ds = d->tree->descs;

	if (!ds || !ds->pending || ds->pending->pid != d->pid || ds->pending->fd != fd)
		return crf_error_errno(EINVAL, "pid %d: fd %d: kept without being looked up",
				       d->pid, fd);
	ds->pending = NULL;
	return 0;
}

int files_shared_dump_finish(struct crf_ctx *ctx)
{
	struct files_tree *tree = crf_ctx_priv(ctx);
	const struct files_descs *ds = tree ? tree->descs : NULL;
	struct crf_img *img = NULL;
	uint32_t id = 0;
	int r;

	r = crf_img_create(crf_ctx_images(ctx), SHARED_IMG, &crf__files__shared_fd__descriptor,
			   &img);
	for (size_t i = 0; r == 0 && ds && i < ds->n; i++) {
		Crf__Files__SharedFd m = CRF__FILES__SHARED_FD__INIT;

		if (!ds->v[i]->shared)
			continue;
		m.id = id++;
		m.pid = ds->v[i]->pid;
		m.fd = ds->v[i]->fd;
		m.has_in_maker = m.in_maker = ds->v[i]->in_maker;
		r = crf_img_write(img, &m.base);
	}
	return crf_img_finish(img, r);
}

/*
 * Create the description of @s in this process, as its first fd's record @e
 * says; 0, or 1 when @s keeps @e: its kind makes the description later
 * (-EAGAIN: a unix socket pair its maker makes again, right after it is
 * forked), and every task holding it asks the kind in turn
 * (files_shared_dup), getting the one description the kind keeps.
 */
static int create(struct crf_ctx *ctx, struct files_desc *s, Crf__Files__Fd *e)
{
	int r;

	if (e->has_pipe || !e->path || !e->path[0])
		return crf_error_errno(EBADMSG, "pid %d: fd %d: bad record of a shared description",
				       s->pid, s->fd);
	r = files_open_by_kind(ctx, e, s->pid);
	if (r == -EAGAIN) {
		s->later = e;
		return 1;
	}
	if (r < 0)
		return r;
	s->top = r;
	crf_debug("pid %d: fd %d: one description for the tree", s->pid, s->fd);
	return 0;
}

static int by_pid_fd(const void *a, const void *b)
{
	const struct files_desc *x = *(struct files_desc *const *)a;
	const struct files_desc *y = *(struct files_desc *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->fd < y->fd ? -1 : x->fd > y->fd;
}

/*
 * Create the @n descriptions of @v, all first held by fds of one task, in
 * one pass over that task's files-PID.img: a tree sharing thousands of
 * fds would otherwise read the image once per description.
 */
static int create_for_task(struct crf_ctx *ctx, struct files_desc **v, size_t n, bool in_maker)
{
	struct crf_img *img;
	Crf__Files__Fd *e;
	char name[64];
	int r;

	snprintf(name, sizeof(name), "files-%d.img", v[0]->pid);
	r = crf_img_open(crf_ctx_images(ctx), name, &crf__files__fd__descriptor, &img);
	if (r < 0)
		return r;
	while ((r = crf_img_read(img, (ProtobufCMessage **)&e)) > 0) {
		struct files_desc key = {.pid = v[0]->pid, .fd = (int)e->fd}, *k = &key, **s;

		s = e->has_same_as ? NULL : bsearch(&k, v, n, sizeof(*v), by_pid_fd);
		r = s && (*s)->top < 0 && !(*s)->later && (*s)->in_maker == in_maker
			    ? create(ctx, *s, e)
			    : 0;
		if (r != 1)
			crf__files__fd__free_unpacked(e, NULL);
		if (r < 0)
			break;
	}
	crf_img_close(img);
	if (r > 0)
		r = 0;
	for (size_t i = 0; r == 0 && i < n; i++)
		if (v[i]->top < 0 && !v[i]->later && v[i]->in_maker == in_maker)
			r = crf_error_errno(EBADMSG, "%s: no record of shared fd %d", name,
					    v[i]->fd);
	return r;
}

int files_shared_restore_prepare(struct crf_ctx *ctx)
{
	struct files_tree *tree = files_tree_get(ctx);
	struct files_descs *ds;
	struct files_desc *s;
	Crf__Files__SharedFd *m;
	struct crf_img *img;
	uint32_t id = 0;
	int r;

	if (!tree)
		return -ENOMEM;
	r = crf_img_open(crf_ctx_images(ctx), SHARED_IMG, &crf__files__shared_fd__descriptor, &img);
	if (r < 0)
		return r;
	while ((r = crf_img_read(img, (ProtobufCMessage **)&m)) > 0) {
		if (m->id != id++)
			r = crf_error_errno(EBADMSG, "%s: description %u out of order", SHARED_IMG,
					    m->id);
		else if (!(s = desc_add(tree, m->pid, m->fd)))
			r = crf_error_errno(ENOMEM, "%s", SHARED_IMG);
		else
			s->in_maker = m->has_in_maker && m->in_maker;
		crf__files__shared_fd__free_unpacked(m, NULL);
		if (r < 0)
			break;
	}
	crf_img_close(img);
	ds = tree->descs;
	if (r < 0 || !ds)
		return r;
	if (ds->n)
		qsort(ds->v, ds->n, sizeof(*ds->v), by_pid_fd);
	for (size_t i = 1; i < ds->n; i++)
		if (!by_pid_fd(&ds->v[i - 1], &ds->v[i]))
			return crf_error_errno(EBADMSG, "%s: fd %d of pid %d listed twice",
					       SHARED_IMG, ds->v[i]->fd, ds->v[i]->pid);
	for (size_t i = 0, j; r == 0 && i < ds->n; i = j) {
		for (j = i + 1; j < ds->n && ds->v[j]->pid == ds->v[i]->pid; j++)
			;
		r = create_for_task(ctx, ds->v + i, j - i, false);
	}
	return r;
}

/*
 * In a restored process, right after it is forked and its namespaces are
 * built: the descriptions it makes for itself and its descendants (SharedFd
 * in_maker), which they inherit as the others inherit crf's.
 */
int files_shared_restore_premap(struct crf_ctx *ctx)
{
	const struct files_tree *tree = crf_ctx_priv(ctx);
	const struct files_descs *ds = tree ? tree->descs : NULL;
	int pid = (int)crf_ctx_pid(ctx);
	size_t i, j;

	for (i = 0; ds && i < ds->n && !(ds->v[i]->pid == pid && ds->v[i]->in_maker); i++)
		;
	if (!ds || i == ds->n)
		return 0;
	/* v is sorted by (pid, fd): this process's run. */
	while (i > 0 && ds->v[i - 1]->pid == pid)
		i--;
	for (j = i; j < ds->n && ds->v[j]->pid == pid; j++)
		;
	return create_for_task(ctx, ds->v + i, j - i, true);
}

/*
 * Every task inherits crf's fd on every shared description: the first fd
 * of the task on one is that very fd (the caller hands it to the core),
 * and only a second one is a dup of it, which the core keeps open until
 * the task enters the restorer.  A task forked with 10 000 shared fds so
 * needs 10 000 fds, not 20 000.
 */
int files_shared_dup(struct crf_ctx *ctx, int pid, int fd)
{
	const struct files_tree *tree = crf_ctx_priv(ctx);
	const struct files_descs *ds = tree ? tree->descs : NULL;
	struct files_desc key = {.pid = pid, .fd = fd}, *k = &key, **s;
	int copy;

	s = ds && ds->n ? bsearch(&k, ds->v, ds->n, sizeof(*ds->v), by_pid_fd) : NULL;
	if (s && (*s)->later)
		return files_open_by_kind(ctx, (*s)->later, (int)crf_ctx_pid(ctx));
	if (!s || (*s)->top < 0)
		return -ENOENT;
	if (!(*s)->given) {
		(*s)->given = true;
		return (*s)->top;
	}
	copy = fcntl((*s)->top, F_DUPFD_CLOEXEC, 0);
	if (copy < 0)
		return crf_error_errno(errno, "fd %d of pid %d: dup", fd, pid);
	return copy;
}

/* A task whose fd table was saved, for tsearch(3) ordered by kcmp(KCMP_FILES). */
struct table_key {
	int pid;
	int *err; /* a lookup's key only: where a failed kcmp leaves its errno */
};

static int table_cmp(const void *a, const void *b)
{
	const struct table_key *x = a, *y = b;
	int *err = x->err ? x->err : y->err;
	long r = x->pid == y->pid ? 0 : syscall(SYS_kcmp, x->pid, y->pid, KCMP_FILES, 0, 0);

	if (r == 0 || r == 1 || r == 2)
		return r == 0 ? 0 : r == 1 ? -1 : 1;
	if (err && !*err)
		*err = r < 0 ? errno : EINVAL;
	return -1;
}

/*
 * Processes that share one fd table (CLONE_FILES) have their fds saved
 * once, with the first of them the dump meets (the tree's order, which the
 * core follows too: Process.files_of names that process), and the others'
 * files images are empty: the restore makes them share that table again.
 */
int files_table_seen(struct files_dump *d)
{
	struct files_descs *ds = d->tree->descs;
	struct table_key *k, **node;
	int err = 0;

	if (!ds && !(ds = d->tree->descs = calloc(1, sizeof(*ds))))
		return crf_error_errno(ENOMEM, "pid %d", d->pid);
	k = malloc(sizeof(*k));
	if (!k)
		return crf_error_errno(ENOMEM, "pid %d", d->pid);
	*k = (struct table_key){d->pid, &err};
	node = tsearch(k, &ds->tables, table_cmp);
	if (node && *node == k)
		k->err = NULL;
	if (!node || err) {
		if (node && *node == k)
			tdelete(k, &ds->tables, table_cmp);
		free(k);
		return crf_error_errno(err ? err : ENOMEM,
				       "pid %d: kcmp(KCMP_FILES) with the tasks saved before",
				       d->pid);
	}
	if (*node == k)
		return 0;
	crf_debug("pid %d: its fd table is pid %d's, saved with it", d->pid, (*node)->pid);
	free(k);
	return 1;
}
