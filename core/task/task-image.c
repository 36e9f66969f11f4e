// SPDX-License-Identifier: GPL-2.0-only
/*
 * core-PID.img: one TaskCore record per process, written at the dump and
 * read (and checked, field by field where a field is used as a size or a
 * count) by crf restore before anything is forked.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/user.h>

#include "task-attrs.h"
#include "task-image.h"
#include "util.h"

static void free_bytes(ProtobufCBinaryData *b, size_t n)
{
	for (size_t i = 0; b && i < n; i++)
		free(b[i].data);
	free(b);
}

void creds_free(Crf__Core__Creds *c)
{
	if (c)
		free(c->groups);
	free(c);
}

void task_free_thread(Crf__Core__ThreadCore *th)
{
	if (!th)
		return;
	free(th->ns_tid);
	free(th->comm);
	free(th->regs.data);
	free(th->xsave.data);
	free_bytes(th->pending_private, th->n_pending_private);
	free(th->affinity.data);
	creds_free(th->creds);
	free(th);
}

void task_free(Crf__Core__TaskCore *tc)
{
	for (size_t i = 0; i < tc->n_threads; i++)
		task_free_thread(tc->threads[i]);
	free(tc->threads);
	for (size_t i = 0; i < tc->n_sigactions; i++)
		free(tc->sigactions[i]);
	free(tc->sigactions);
	for (size_t i = 0; i < tc->n_timers; i++)
		free(tc->timers[i]);
	free(tc->timers);
	for (size_t i = 0; i < tc->n_rlimits; i++)
		free(tc->rlimits[i]);
	free(tc->rlimits);
	creds_free(tc->creds);
	free_bytes(tc->pending_private, tc->n_pending_private);
	free_bytes(tc->pending_shared, tc->n_pending_shared);
	free(tc->itimers);
	free(tc->regs.data);
	free(tc->xsave.data);
	free(tc->affinity.data);
	free(tc->comm);
	free(tc->cwd);
	free(tc->root);
	free(tc->stopped_children);
	free(tc->stop_waited);
	crf__core__task_core__init(tc);
}

int task_write(struct crf_imgdir *dir, Crf__Core__TaskCore *tc)
{
	struct crf_img *img;
	char name[64];
	int r;

	snprintf(name, sizeof(name), "core-%d.img", (int)tc->pid);
	r = crf_img_create(dir, name, &crf__core__task_core__descriptor, &img);
	if (r < 0)
		return r;
	r = crf_img_write(img, &tc->base);
	if (r < 0) {
		crf_img_abort(img);
		return r;
	}
	return crf_img_close(img);
}

int task_check(const char *img, const Crf__Core__TaskCore *tc)
{
	char field[64];
	int r;

	if (tc->regs.len != sizeof(struct user_regs_struct))
		return crf_error_errno(EBADMSG,
				       "%s: registers of %zu bytes, expected %zu (TaskCore.regs)",
				       img, tc->regs.len, sizeof(struct user_regs_struct));
	r = task_check_pending(img, "TaskCore.pending_shared", tc->pending_shared,
			       tc->n_pending_shared);
	if (r >= 0)
		r = task_check_pending(img, "TaskCore.pending_private", tc->pending_private,
				       tc->n_pending_private);
	for (size_t i = 0; r >= 0 && i < tc->n_threads; i++) {
		snprintf(field, sizeof(field), "TaskCore.threads[%zu].pending_private", i);
		r = task_check_pending(img, field, tc->threads[i]->pending_private,
				       tc->threads[i]->n_pending_private);
	}
	if (r >= 0)
		r = attrs_check_image(img, tc);
	return r;
}

int task_read(struct crf_imgdir *dir, pid_t pid, Crf__Core__TaskCore **tc)
{
	ProtobufCMessage *msg = NULL;
	struct crf_img *img;
	char name[64], path[4200];
	int r;

	*tc = NULL;
	snprintf(name, sizeof(name), "core-%d.img", (int)pid);
	r = crf_img_open(dir, name, &crf__core__task_core__descriptor, &img);
	if (r < 0)
		return r;
	r = crf_img_read(img, &msg);
	crf_img_close(img);
	snprintf(path, sizeof(path), "%s/%s", crf_imgdir_path(dir), name);
	if (r == 0) {
		crf_error("%s: holds no task record", path);
		return -EBADMSG;
	}
	if (r < 0)
		return r;
	r = task_check(path, (Crf__Core__TaskCore *)msg);
	if (r < 0) {
		protobuf_c_message_free_unpacked(msg, NULL);
		return r;
	}
	*tc = (Crf__Core__TaskCore *)msg;
	return 0;
}
