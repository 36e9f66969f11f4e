// SPDX-License-Identifier: GPL-2.0-only
/*
 * What every fd record carries besides its kind's state: the locks of its
 * file (locks.c) and the owner and signal of its description (owner.c).
 *
 * At the dump every kind writes its record through files_fd_write(),
 * which adds them.  At restore they are applied in the task once its fds
 * are at their numbers, through crf_rst_at_fds_placed(): the end of
 * restore-task reads the task's records again and keeps those with
 * something to apply for then.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <crf/image.h>
#include <crf/restore.h>

#include "epoll.h"
#include "fdinfo.h"
#include "files.h"
#include "files.pb-c.h"

int files_fd_write(struct files_dump *d, Crf__Files__Fd *e)
{
	Crf__Files__FdOwner own = CRF__FILES__FD_OWNER__INIT;
	const char *text;
	int r = files_cur_fdinfo(d, &text);

	if (r < 0)
		return crf_error_errno(-r, "pid %d: fdinfo of fd %d", d->pid, e->fd);
	r = files_locks_dump(d, text, e);
	if (r == 0)
		r = files_owner_dump(d, e, &own);
	/* The handler it was dumped by, whoever that is. */
	if (!e->kind && d->cur_kind) {
		e->kind = (char *)d->cur_kind;
		e->plugin = (char *)d->cur_plugin;
		e->plugin_version = (char *)d->cur_version;
	}
	if (r == 0)
		r = crf_img_write(d->img, &e->base);
	files_locks_release(e);
	e->owner = NULL;
	return r;
}

/* The records of one task with something to apply once its fds are placed. */
struct late {
	int pid;
	Crf__Files__Fd **v;
	size_t n;
};

static void late_free(void *arg)
{
	struct late *l = arg;

	for (size_t i = 0; i < l->n; i++)
		crf__files__fd__free_unpacked(l->v[i], NULL);
	free(l->v);
	free(l);
}

static int late_run(void *arg)
{
	const struct late *l = arg;
	int r = 0;

	for (size_t i = 0; r == 0 && i < l->n; i++) {
		r = files_owner_set(l->pid, l->v[i]);
		if (r == 0)
			r = files_locks_take(l->pid, l->v[i]);
	}
	return r;
}

/* Keep @e in @l when it has something to apply; 0 or -ENOMEM (not logged). */
static int keep(struct late *l, Crf__Files__Fd *e)
{
	void *v;

	if (!e->n_locks && !files_owner_wanted(e)) {
		crf__files__fd__free_unpacked(e, NULL);
		return 0;
	}
	v = reallocarray(l->v, l->n + 1, sizeof(*l->v));
	if (!v) {
		crf__files__fd__free_unpacked(e, NULL);
		return -ENOMEM;
	}
	l->v = v;
	l->v[l->n++] = e;
	return 0;
}

int files_fdattr_restore_task(struct crf_ctx *ctx)
{
	struct late *l = calloc(1, sizeof(*l));
	struct crf_img *img;
	Crf__Files__Fd *e;
	char name[64];
	int r;

	if (!l)
		return crf_error_errno(ENOMEM, "files");
	l->pid = (int)crf_ctx_pid(ctx);
	snprintf(name, sizeof(name), "files-%d.img", l->pid);
	r = crf_img_open(crf_ctx_images(ctx), name, &crf__files__fd__descriptor, &img);
	if (r < 0) {
		late_free(l);
		return r;
	}
	while ((r = crf_img_read(img, (ProtobufCMessage **)&e)) > 0)
		if (keep(l, e) < 0) {
			r = crf_error_errno(ENOMEM, "%s", name);
			break;
		}
	crf_img_close(img);
	if (r < 0 || !l->n) {
		late_free(l);
		return r;
	}
	return crf_rst_at_fds_placed(ctx, late_run, l, late_free);
}
