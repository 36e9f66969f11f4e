// SPDX-License-Identifier: GPL-2.0-only
/*
 * Open file descriptions shared between fds, within a task (dup) and
 * between the tasks of the tree (fork inheritance, SCM_RIGHTS), for the
 * kinds saved in an Fd record of their own: regular files (unlinked and
 * O_TMPFILE ones too), directories, character devices, eventfd, timerfd,
 * signalfd, memfd and pidfd.
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
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/kcmp.h>

#include <crf/image.h>

#include "anonfd.h"
#include "epoll.h"
#include "fdinfo.h"
#include "files.h"
#include "files.pb-c.h"
#include "unlinked.h"
#include "tty.h"

#define SHARED_IMG "shared-fds.img"

struct files_desc {
	int pid, fd;
	bool shared; /* dump: an fd of another task has it too */
	int top;     /* restore: crf's own fd on it, or -1 */
};

struct files_descs {
	struct files_desc *v;
	size_t n;
};

void files_descs_free(struct files_descs *ds)
{
	if (!ds)
		return;
	for (size_t i = 0; i < ds->n; i++)
		if (ds->v[i].top >= 0)
			close(ds->v[i].top);
	free(ds->v);
	free(ds);
}

static struct files_desc *desc_add(struct files_tree *tree, int pid, int fd)
{
	struct files_desc *v;

	if (!tree->descs) {
		tree->descs = calloc(1, sizeof(*tree->descs));
		if (!tree->descs)
			return NULL;
	}
	v = reallocarray(tree->descs->v, tree->descs->n + 1, sizeof(*v));
	if (!v)
		return NULL;
	tree->descs->v = v;
	v += tree->descs->n++;
	*v = (struct files_desc){.pid = pid, .fd = fd, .top = -1};
	return v;
}

int files_desc_find(struct files_dump *d, int fd, Crf__Files__Fd *e)
{
	struct files_descs *ds = d->tree->descs;

	for (size_t i = 0; ds && i < ds->n; i++) {
		struct files_desc *s = &ds->v[i];

		if (syscall(SYS_kcmp, d->pid, s->pid, KCMP_FILE, fd, s->fd) != 0)
			continue;
		e->has_same_as = true;
		e->same_as = s->fd;
		if (s->pid != d->pid) {
			e->has_same_pid = true;
			e->same_pid = s->pid;
			s->shared = true;
		}
		return 1;
	}
	return 0;
}

int files_private_fd_begin(struct crf_ctx *ctx, const struct crf_object *obj, const char *what,
			   Crf__Files__Fd *e, char **text, struct files_dump **dp)
{
	struct files_dump *d = crf_ctx_priv(ctx);
	struct files_fdinfo info;
	int fd = obj->id, same, r;

	*text = NULL;
	if (!d || d->pid != obj->pid)
		return crf_error_errno(EINVAL, "pid %d: fd %d: no fd table being dumped",
				       (int)obj->pid, fd);
	*dp = d;
	r = files_fdinfo_read_all(d->pid, fd, text);
	if (r == 0)
		r = files_fdinfo_parse(*text, &info);
	if (r < 0)
		return crf_error_errno(-r, "pid %d: fdinfo of fd %d", d->pid, fd);
	e->fd = fd;
	e->cloexec = !!(info.flags & O_CLOEXEC);
	e->flags = info.flags & ~(unsigned int)O_CLOEXEC;
	e->pos = info.pos;
	e->path = (char *)obj->desc;
	same = files_desc_find(d, fd, e);
	if (same && e->has_same_pid)
		return crf_error_errno(ENOTSUP,
				       "pid %d: %s fd %d shares its description with fd %d of pid "
				       "%d: crf cannot restore an %s fd shared between processes yet",
				       d->pid, what, fd, e->same_as, e->same_pid, what);
	return same ? 1 : 0;
}

int files_desc_remember(struct files_dump *d, int fd)
{
	if (!desc_add(d->tree, d->pid, fd))
		return crf_error_errno(ENOMEM, "pid %d: fd %d", d->pid, fd);
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

		if (!ds->v[i].shared)
			continue;
		m.id = id++;
		m.pid = ds->v[i].pid;
		m.fd = ds->v[i].fd;
		r = crf_img_write(img, &m.base);
	}
	if (r < 0) {
		if (img)
			crf_img_abort(img);
		return r;
	}
	return crf_img_close(img);
}

/* The record of fd @fd in files-@pid.img: *@out, to free; 0 or -errno (logged). */
static int find_record(struct crf_ctx *ctx, int pid, int fd, Crf__Files__Fd **out)
{
	struct crf_img *img;
	Crf__Files__Fd *e;
	char name[64];
	int r;

	snprintf(name, sizeof(name), "files-%d.img", pid);
	r = crf_img_open(crf_ctx_images(ctx), name, &crf__files__fd__descriptor, &img);
	if (r < 0)
		return r;
	*out = NULL;
	while ((r = crf_img_read(img, (ProtobufCMessage **)&e)) > 0) {
		if (e->fd == fd && !e->has_same_as) {
			*out = e;
			break;
		}
		crf__files__fd__free_unpacked(e, NULL);
	}
	crf_img_close(img);
	if (r < 0)
		return r;
	if (!*out)
		return crf_error_errno(EBADMSG, "%s: no record of shared fd %d", name, fd);
	return 0;
}

/* Create the description of @s in this process, as its first fd's record says. */
static int create(struct crf_ctx *ctx, struct files_desc *s)
{
	Crf__Files__Fd *e;
	int r;

	r = find_record(ctx, s->pid, s->fd, &e);
	if (r < 0)
		return r;
	if (e->has_pipe || (e->fd < 3 && !e->tty) || !e->path || !e->path[0])
		r = crf_error_errno(EBADMSG, "pid %d: fd %d: bad record of a shared description",
				    s->pid, s->fd);
	else if (e->unlinked)
		r = files_unlinked_create(ctx, e);
	else if (e->tty)
		r = files_tty_open(ctx, e);
	else
		r = files_anon_is(e) ? files_anon_create(e) : files_regfile_reopen(e);
	crf__files__fd__free_unpacked(e, NULL);
	if (r < 0)
		return r;
	s->top = r;
	crf_debug("pid %d: fd %d: one description for the tree", s->pid, s->fd);
	return 0;
}

int files_shared_restore_prepare(struct crf_ctx *ctx)
{
	struct files_tree *tree = files_tree_get(ctx);
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
		struct files_desc *s = NULL;

		if (m->id != id++)
			r = crf_error_errno(EBADMSG, "%s: description %u out of order", SHARED_IMG,
					    m->id);
		else if (!(s = desc_add(tree, m->pid, m->fd)))
			r = crf_error_errno(ENOMEM, "%s", SHARED_IMG);
		else
			r = create(ctx, s);
		crf__files__shared_fd__free_unpacked(m, NULL);
		if (r < 0)
			break;
	}
	crf_img_close(img);
	return r;
}

int files_shared_dup(struct crf_ctx *ctx, int pid, int fd)
{
	const struct files_tree *tree = crf_ctx_priv(ctx);
	const struct files_descs *ds = tree ? tree->descs : NULL;
	int copy;

	for (size_t i = 0; ds && i < ds->n; i++) {
		if (ds->v[i].pid != pid || ds->v[i].fd != fd || ds->v[i].top < 0)
			continue;
		copy = fcntl(ds->v[i].top, F_DUPFD_CLOEXEC, 0);
		if (copy < 0)
			return crf_error_errno(errno, "fd %d of pid %d: dup", fd, pid);
		return copy;
	}
	return -ENOENT;
}
