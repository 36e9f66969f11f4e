// SPDX-License-Identifier: GPL-2.0-only
/*
 * cgroup.img, checked before the tree is forked (restore-prepare's first
 * step, and the fuzzer's): one record per live process of the dump, each
 * hierarchy once per task, and every path a cgroup path that stays inside
 * its hierarchy's mount (the restore joins it to that mount's directory and
 * writes the task's PID into a file there: "/../.." would leave it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/image.h>
#include <crf/log.h>

#include "cgroup-restore.h"
#include "cgroup.pb-c.h"
#include "validate.h"

#define bad(i, fmt, ...)                                                                           \
	crf_error_errno(EBADMSG, "%s/%s: record %zu: " fmt, crf_imgdir_path(dir), CG_IMG, i,       \
			##__VA_ARGS__)

/* An absolute path without empty, "." or ".." components, other than "/" itself. */
static bool path_ok(const char *p)
{
	if (p[0] != '/' || strlen(p) >= CG_PATH_MAX || strchr(p, '\n'))
		return false;
	if (!p[1])
		return true;
	for (const char *c = p + 1;; c++) {
		size_t len = strcspn(c, "/");

		if (!len || (len == 1 && c[0] == '.') || (len == 2 && !strncmp(c, "..", 2)))
			return false;
		c += len;
		if (!*c)
			return true;
	}
}

static int check_members(struct crf_imgdir *dir, size_t i, const char *field,
			 Crf__Cgroup__Member *const *m, size_t n)
{
	for (size_t j = 0; j < n; j++) {
		if (strchr(m[j]->controllers, ':') || strchr(m[j]->controllers, '\n'))
			return bad(i, "%s[%zu].controllers: '%.64s'", field, j, m[j]->controllers);
		if (!path_ok(m[j]->path))
			return bad(i, "%s[%zu].path: '%.200s' is not a cgroup path", field, j,
				   m[j]->path);
		for (size_t k = 0; k < j; k++)
			if (!strcmp(m[k]->controllers, m[j]->controllers))
				return bad(i, "%s[%zu]: hierarchy '%s' twice", field, j,
					   m[j]->controllers);
	}
	return 0;
}

static int check_record(struct crf_imgdir *dir, size_t i, const Crf__Cgroup__TaskCgroups *t)
{
	char field[64];
	int r;

	snprintf(field, sizeof(field), "%s: record %zu", CG_IMG, i);
	r = crf_img_check_task(dir, field, t->pid);

	if (r >= 0)
		r = check_members(dir, i, "TaskCgroups.members", t->members, t->n_members);
	for (size_t j = 0; r >= 0 && j < t->n_threads; j++) {
		const Crf__Cgroup__ThreadCgroups *th = t->threads[j];

		if (th->tid <= 0 || th->tid == t->pid)
			return bad(i, "TaskCgroups.threads[%zu].tid: %d", j, (int)th->tid);
		for (size_t k = 0; k < j; k++)
			if (t->threads[k]->tid == th->tid)
				return bad(i, "TaskCgroups.threads[%zu].tid: thread %d twice", j,
					   (int)th->tid);
		snprintf(field, sizeof(field), "TaskCgroups.threads[%zu].members", j);
		r = check_members(dir, i, field, th->members, th->n_members);
	}
	return r;
}

int cgroup_validate(struct crf_imgdir *dir)
{
	_cleanup_img_ struct crf_img *img = NULL;
	_cleanup_free_ pid_t *pids = NULL;
	ProtobufCMessage *msg;
	size_t i = 0;
	int r;

	if (faccessat(crf_imgdir_fd(dir), CG_IMG, F_OK, 0) < 0)
		return 0;
	r = crf_img_open(dir, CG_IMG, &crf__cgroup__task_cgroups__descriptor, &img);
	while (r >= 0 && (r = crf_img_read(img, &msg)) > 0) {
		const Crf__Cgroup__TaskCgroups *t = (Crf__Cgroup__TaskCgroups *)msg;
		pid_t *v = realloc(pids, (i + 1) * sizeof(*pids));

		r = v ? check_record(dir, i, t) : crf_error_errno(ENOMEM, "%s", CG_IMG);
		if (v)
			pids = v;
		for (size_t k = 0; r >= 0 && k < i; k++)
			if (pids[k] == t->pid)
				r = bad(i, "TaskCgroups.pid: PID %d twice", (int)t->pid);
		if (r >= 0)
			pids[i++] = t->pid;
		protobuf_c_message_free_unpacked(msg, NULL);
	}
	return r;
}
