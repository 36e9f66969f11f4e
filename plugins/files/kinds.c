// SPDX-License-Identifier: GPL-2.0-only
/*
 * fd kinds through the registry.  Every record of files-PID.img names the
 * handler it was dumped by (kind, plugin, plugin_version), and the restore
 * asks that plugin's handler of that kind for a new open file description
 * (crf_kind_restore): the if-chain over the record's fields is gone, and a
 * kind another plugin declares gets its record back.
 *
 * The files plugin keeps the fd table: numbers, dups, descriptions shared
 * between tasks, close-on-exec, locks and owners.  For a kind of another
 * plugin it writes the generic part of the record itself (flags, pos, path,
 * mode) and the payload that plugin's dump saved (crf_fd_save_payload).
 * Its own kinds' restore handlers reach the whole record: the object's
 * data is a struct files_fd_obj, whose first member is the public
 * crf_fd_info.
 *
 * restore-prepare checks every record that needs a description first
 * (files_kinds_check), so that a restore whose kind's plugin is missing,
 * disabled or switched off is refused before anything is made.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/image.h>

#include "anonfd.h"
#include "epoll.h"
#include "files.h"
#include "files.pb-c.h"
#include "tty.h"
#include "unlinked.h"

/* An fd object at restore as the files plugin hands it to a kind's handler. */
struct files_fd_obj {
	struct crf_fd_info info; /* first: obj->data points here */
	const Crf__Files__Fd *e;
	const struct files_fd_obj *self; /* == this: made by files_fd_object() */
};

const char *files_record_kind(const Crf__Files__Fd *e)
{
	if (e->kind && e->kind[0])
		return e->kind;
	/* Older images: the kind the fields tell, as the dump named it. */
	if (e->has_inherit_stdio && e->inherit_stdio)
		return "stdio";
	if (e->has_pipe)
		return S_ISFIFO(e->mode) && e->path && e->path[0] == '/' ? "fifo" : "pipe";
	if (e->tty)
		return "tty";
	if (e->epoll)
		return "eventpoll";
	if (e->inotify)
		return "inotify";
	if (e->eventfd)
		return "eventfd";
	if (e->timerfd)
		return "timerfd";
	if (e->signalfd)
		return "signalfd";
	if (e->memfd)
		return "memfd";
	if (e->pidfd)
		return "pidfd";
	if (e->flags & O_PATH)
		return S_ISLNK(e->mode) ? "symlink" : "opath";
	if (S_ISDIR(e->mode))
		return "dir";
	return S_ISCHR(e->mode) ? "chr-mem" : "file";
}

/* The plugin recorded with @e: a record without a kind is the files plugin's. */
static const char *record_plugin(struct crf_ctx *ctx, const Crf__Files__Fd *e)
{
	if (e->kind && e->kind[0])
		return e->plugin && e->plugin[0] ? e->plugin : NULL;
	return crf_ctx_plugin(ctx);
}

static void fd_object(struct files_fd_obj *fo, struct crf_object *obj, const Crf__Files__Fd *e,
		      int pid)
{
	*fo = (struct files_fd_obj){
		.info = {.fd = e->fd,
			 .cloexec = e->cloexec,
			 .flags = e->flags,
			 .pos = e->pos,
			 .mode = (mode_t)e->mode,
			 .path = e->path,
			 .payload = e->has_payload ? e->payload.data : NULL,
			 .payload_len = e->has_payload ? e->payload.len : 0},
		.e = e,
	};
	fo->self = fo;
	*obj = (struct crf_object){.cls = CRF_OBJ_FD,
				   .kind = files_record_kind(e),
				   .desc = e->path,
				   .pid = pid,
				   .id = e->fd,
				   .data = &fo->info};
}

int files_open_by_kind(struct crf_ctx *ctx, const Crf__Files__Fd *e, int pid)
{
	struct files_fd_obj fo;
	struct crf_object obj;

	fd_object(&fo, &obj, e, pid);
	return crf_kind_restore(ctx, &obj, record_plugin(ctx, e));
}

/* The record of fd object @obj that files_open_by_kind() made, or NULL (logged). */
static const Crf__Files__Fd *record_of(const struct crf_object *obj)
{
	const struct files_fd_obj *fo = obj->data;

	if (obj->cls == CRF_OBJ_FD && fo && fo->self == fo && fo->e)
		return fo->e;
	crf_error_errno(EINVAL, "pid %d: fd %d: not a record of the files plugin", (int)obj->pid,
			obj->id);
	return NULL;
}

/* A record of kind @obj->kind without the fields of that kind. */
static int lacks(const struct crf_object *obj, const char *what)
{
	return crf_error_errno(EBADMSG, "fd %d (%s): a record of kind '%s' without %s", obj->id,
			       obj->desc ? obj->desc : "?", obj->kind, what);
}

int files_regfile_restore(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const Crf__Files__Fd *e = record_of(obj);

	if (!e)
		return -EINVAL;
	return e->unlinked ? files_unlinked_create(ctx, e) : files_regfile_reopen(ctx, e);
}

int files_stdio_restore(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const Crf__Files__Fd *e = record_of(obj);

	(void)ctx;
	if (!e)
		return -EINVAL;
	return e->has_inherit_stdio && e->inherit_stdio ? files_stdio_reopen(e)
							: lacks(obj, "inherit_stdio");
}

int files_pipe_restore(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const Crf__Files__Fd *e = record_of(obj);

	if (!e)
		return -EINVAL;
	return e->has_pipe ? files_pipe_reopen(ctx, e) : lacks(obj, "its pipe");
}

int files_tty_restore(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const Crf__Files__Fd *e = record_of(obj);

	if (!e)
		return -EINVAL;
	return e->tty ? files_tty_open(ctx, e) : lacks(obj, "its terminal");
}

int files_epoll_restore(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const Crf__Files__Fd *e = record_of(obj);

	(void)ctx;
	if (!e)
		return -EINVAL;
	return e->epoll ? files_epoll_create(e) : lacks(obj, "its epoll set");
}

int files_inotify_restore(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const Crf__Files__Fd *e = record_of(obj);

	(void)ctx;
	if (!e)
		return -EINVAL;
	return e->inotify ? files_inotify_create(e) : lacks(obj, "its watches");
}

int files_anon_restore(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const Crf__Files__Fd *e = record_of(obj);

	if (!e)
		return -EINVAL;
	return files_anon_is(e) ? files_anon_create(ctx, e) : lacks(obj, "its state");
}

/*
 * A socket several processes hold is made once at restore, in crf's top
 * process before the tree is forked (shared.c), so in crf's net namespace:
 * one of @pid's and @first's in another namespace would come back in crf's,
 * silently.  Refused (unix sockets are made by their makers, after the fork).
 */
static int shared_socket_netns(int pid, int fd, const char *path, int first)
{
	char self[64] = "", link[64], p[64];
	int who[2] = {first, pid};
	ssize_t n = readlink("/proc/self/ns/net", self, sizeof(self) - 1);

	if (n < 0)
		return crf_error_errno(errno, "pid %d: fd %d: readlink /proc/self/ns/net", pid, fd);
	self[n] = '\0';
	for (int i = 0; i < 2; i++) {
		snprintf(p, sizeof(p), "/proc/%d/ns/net", who[i]);
		n = readlink(p, link, sizeof(link) - 1);
		if (n < 0)
			return crf_error_errno(errno, "pid %d: fd %d: readlink %s", pid, fd, p);
		link[n] = '\0';
		if (strcmp(link, self))
			return crf_error_errno(
				EOPNOTSUPP,
				"pid %d: fd %d (%s): a socket that pid %d holds too, "
				"in net namespace %s: crf makes a socket several "
				"processes hold before the tree is forked, in its own "
				"net namespace, not in this one",
				pid, fd, path ? path : "socket", first, link);
	}
	return 0;
}

int files_foreign_dump(struct crf_ctx *ctx, const struct crf_object *obj,
		       const struct crf_kind *kind)
{
	Crf__Files__Fd e = CRF__FILES__FD__INIT;
	struct crf_payload saved = {0};
	struct crf_fd_info info;
	struct crf_object o = *obj;
	struct files_dump *d;
	const struct stat *st;
	int same, r;

	r = files_fd_begin(ctx, obj, &e, &d);
	if (r == 0)
		r = files_cur_stat(d, &st);
	if (r < 0)
		return r;
	e.mode = st->st_mode;
	same = files_desc_find(d, obj->id, &e);
	if (same < 0)
		return same;
	if (same && e.has_same_pid && S_ISSOCK(st->st_mode) && strcmp(kind->name, "unix")) {
		r = shared_socket_netns(d->pid, obj->id, e.path, (int)e.same_pid);
		if (r < 0)
			return r;
	}
	if (!same) {
		int copy = files_cur_copy(d);

		if (copy < 0)
			return copy;
		info = (struct crf_fd_info){.fd = e.fd,
					    .cloexec = e.cloexec,
					    .flags = e.flags,
					    .pos = e.pos,
					    .mode = st->st_mode,
					    .path = e.path,
					    .saved = &saved,
					    .copy = copy};
		o.data = &info;
		r = crf_kind_dump(ctx, &o, kind);
		if (r == 0 && saved.buf) {
			e.has_payload = true;
			e.payload.data = saved.buf;
			e.payload.len = saved.len;
		}
		if (r == 0)
			r = files_desc_remember(d, obj->id);
	}
	if (r == 0)
		r = files_fd_write(d, &e);
	free(saved.buf);
	if (r == 0)
		crf_debug("pid %d: fd %d: kind '%s' of plugin '%s'%s", d->pid, obj->id, kind->name,
			  d->cur_plugin, same ? " (shared)" : "");
	return r;
}

/* Check the records of files-@pid.img that need a description; 0 or -errno (logged). */
static int check_task(struct crf_ctx *ctx, int pid)
{
	struct crf_img *img;
	Crf__Files__Fd *e;
	char name[64];
	int r;

	snprintf(name, sizeof(name), "files-%d.img", pid);
	r = crf_img_open(crf_ctx_images(ctx), name, &crf__files__fd__descriptor, &img);
	if (r < 0)
		return r;
	while ((r = crf_img_read(img, (ProtobufCMessage **)&e)) > 0) {
		struct files_fd_obj fo;
		struct crf_object obj;

		if (!e->has_same_as) {
			fd_object(&fo, &obj, e, pid);
			r = crf_kind_check(ctx, &obj, record_plugin(ctx, e));
		}
		crf__files__fd__free_unpacked(e, NULL);
		if (r < 0)
			break;
	}
	crf_img_close(img);
	return r < 0 ? r : 0;
}

static int check_one(void *ctx, const char *name, pid_t pid)
{
	(void)name;
	return check_task(ctx, pid);
}

int files_kinds_check(struct crf_ctx *ctx)
{
	return crf_imgdir_each_task(crf_ctx_images(ctx), "files", check_one, ctx);
}
