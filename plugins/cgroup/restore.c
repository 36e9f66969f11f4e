// SPDX-License-Identifier: GPL-2.0-only
/*
 * Restore: each process moves itself into its cgroups in restore-task,
 * before the restorer maps its memory (so that its pages are charged to
 * them, as mem's restore-after = cgroup intends); threads, which the
 * restorer creates in their process's cgroups, are moved by crf at
 * restore-finish, when they exist and wait for "go".  Where each goes was
 * found and checked in restore-prepare (prepare.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <crf/cleanup.h>

#include "cgroup-restore.h"

/* Write @who (a TID, or "0" for the writer) to the file that moves it into @m's cgroup. */
static int join(const struct cg_restore *rs, const struct cg_move *m, const char *who)
{
	char file[CG_PATH_MAX + 32], name[CG_PATH_MAX + 64];
	_cleanup_close_ int fd = -1;
	int err = 0;

	snprintf(file, sizeof(file), "%s/%s", m->dir, cg_move_file(m));
	/* An fd restore-prepare opened, else through crf's own cgroup mount. */
	fd = m->procs >= 0 ? dup(m->procs) : cg_open_at_mount(rs, file, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, who, strlen(who)) < 0)
		err = errno;
	cg_name(m->controllers, m->path, name, sizeof(name));
	if (!err) {
		crf_debug("pid %d: %s%.0d joined cgroup %s", (int)m->pid, m->tid ? "thread " : "",
			  (int)m->tid, name);
		return 0;
	}
	if (m->tid)
		return crf_log_errno(CRF_LOG_ERROR, err,
				     "pid %d: thread %d: cannot join cgroup %s (%s)", (int)m->pid,
				     (int)m->tid, name, file);
	return crf_log_errno(CRF_LOG_ERROR, err, "pid %d: cannot join cgroup %s (%s)", (int)m->pid,
			     name, file);
}

int cgroup_restore_task(struct crf_ctx *ctx)
{
	const struct cg_restore *rs = crf_ctx_priv(ctx);
	pid_t pid = crf_ctx_pid(ctx);
	bool saved = false;
	int r = 0;

	for (size_t i = 0; rs && i < rs->n_tasks && !saved; i++)
		saved = rs->tasks[i]->pid == pid;
	if (!saved) {
		crf_error("pid %d: %s holds no record of its cgroups", (int)pid, CG_IMG);
		return -EBADMSG;
	}
	for (size_t i = 0; r >= 0 && i < rs->n_moves; i++)
		if (rs->moves[i].pid == pid && !rs->moves[i].tid && rs->moves[i].fd < 0)
			r = join(rs, &rs->moves[i], "0");
	return r;
}

int cgroup_restore_finish(struct crf_ctx *ctx)
{
	struct cg_restore *rs = crf_ctx_priv(ctx);
	char tid[16];
	int r = 0;

	for (size_t i = 0; rs && r >= 0 && i < rs->n_moves; i++) {
		if (!rs->moves[i].tid)
			continue;
		snprintf(tid, sizeof(tid), "%d", (int)rs->moves[i].tid);
		r = join(rs, &rs->moves[i], tid);
	}
	if (rs && r >= 0)
		rs->done = true;
	return r;
}

int cgroup_restore_cleanup(struct crf_ctx *ctx)
{
	struct cg_restore *rs = crf_ctx_priv(ctx);

	if (!rs)
		return 0;
	if (!rs->done)
		cg_unmake(rs);
	for (size_t i = 0; i < rs->n_made; i++)
		free(rs->made[i]);
	free(rs->made);
	for (size_t i = 0; i < rs->n_hiers; i++) {
		protobuf_c_message_free_unpacked(&rs->hiers[i]->base, NULL);
		free(rs->new_root[i]);
		if (rs->from_root)
			free(rs->from_root[i]);
	}
	free(rs->from_root);
	free(rs->hiers);
	for (size_t i = 0; i < rs->n_ns; i++)
		protobuf_c_message_free_unpacked(&rs->ns[i]->base, NULL);
	free(rs->ns);
	free(rs->new_root);
	for (size_t i = 0; i < rs->n_tasks; i++)
		protobuf_c_message_free_unpacked(&rs->tasks[i]->base, NULL);
	free(rs->tasks);
	for (size_t i = 0; i < rs->n_moves; i++) {
		free(rs->moves[i].controllers);
		free(rs->moves[i].path);
		free(rs->moves[i].dir);
		if (rs->moves[i].fd >= 0)
			close(rs->moves[i].fd);
		if (rs->moves[i].procs >= 0)
			close(rs->moves[i].procs);
	}
	free(rs->moves);
	cg_members_free(&rs->self);
	free(rs->mountinfo);
	cg_mnt_fds_close(rs);
	free(rs);
	crf_ctx_set_priv(ctx, NULL);
	return 0;
}
