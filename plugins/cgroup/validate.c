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
#include "cgprops.pb-c.h"
#include "cgroup.pb-c.h"
#include "props.h"
#include "validate.h"

#define bad(i, fmt, ...)                                                                           \
	crf_error_errno(EBADMSG, "%s/%s: record %zu: " fmt, crf_imgdir_path(dir), CG_IMG, i,       \
			##__VA_ARGS__)

/* An absolute path without empty, "." or ".." components, other than "/" itself. */
bool cg_path_ok(const char *p)
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
		if (!cg_path_ok(m[j]->path))
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

#define bad_props(i, fmt, ...)                                                                     \
	crf_error_errno(EBADMSG, "%s/%s: record %zu: " fmt, crf_imgdir_path(dir), CG_PROPS_IMG, i, \
			##__VA_ARGS__)

/* Is the parent of @path @root or one of the first @n of @d? */
static bool parent_known(const char *path, const char *root, Crf__Cgroup__Dir *const *d, size_t n)
{
	size_t len = (size_t)(strrchr(path, '/') - path);

	if (!len)
		return !strcmp(root, "/");
	if (strlen(root) == len && !strncmp(root, path, len))
		return true;
	for (size_t i = 0; i < n; i++)
		if (strlen(d[i]->path) == len && !strncmp(d[i]->path, path, len))
			return true;
	return false;
}

static int check_hier(struct crf_imgdir *dir, size_t i, const Crf__Cgroup__Hierarchy *h)
{
	const char *c = h->controllers;

	if (strchr(c, ':') || strchr(c, '\n') || strchr(c, '/'))
		return bad_props(i, "Hierarchy.controllers: '%.64s'", c);
	if (!cg_path_ok(h->root))
		return bad_props(i, "Hierarchy.root: '%.200s' is not a cgroup path", h->root);
	for (size_t j = 0; j < h->n_dirs; j++) {
		const Crf__Cgroup__Dir *d = h->dirs[j];

		if (!cg_path_ok(d->path) || !cg_below(d->path, h->root))
			return bad_props(i,
					 "Hierarchy.dirs[%zu].path: '%.200s' is not a cgroup below "
					 "'%.200s'",
					 j, d->path, h->root);
		if (!parent_known(d->path, h->root, h->dirs, j))
			return bad_props(i, "Hierarchy.dirs[%zu].path: '%.200s' before its parent",
					 j, d->path);
		for (size_t k = 0; k < j; k++)
			if (!strcmp(h->dirs[k]->path, d->path))
				return bad_props(i, "Hierarchy.dirs[%zu].path: '%.200s' twice", j,
						 d->path);
		for (size_t k = 0; k < d->n_checked; k++) {
			const char *n = d->checked[k]->name;

			/* Read back only, by name: a file of the cgroup, not a path. */
			if (!*n || *n == '.' || strchr(n, '/') || strlen(n) > 255 ||
			    cg_prop_index(c, n) >= 0)
				return bad_props(
					i,
					"Hierarchy.dirs[%zu].checked[%zu].name: '%.64s' is "
					"not a setting crf checks",
					j, k, n);
		}
		for (size_t k = 0; k < d->n_props; k++) {
			if (cg_prop_index(c, d->props[k]->name) < 0)
				return bad_props(i,
						 "Hierarchy.dirs[%zu].props[%zu].name: '%.64s' is "
						 "not a setting crf restores here",
						 j, k, d->props[k]->name);
			for (size_t l = 0; l < k; l++)
				if (!strcmp(d->props[l]->name, d->props[k]->name))
					return bad_props(i,
							 "Hierarchy.dirs[%zu].props[%zu]: '%s' "
							 "twice",
							 j, k, d->props[k]->name);
		}
	}
	return 0;
}

int cgprops_validate(struct crf_imgdir *dir)
{
	_cleanup_img_ struct crf_img *img = NULL;
	_cleanup_free_ char **seen = NULL;
	ProtobufCMessage *msg;
	size_t i = 0;
	int r;

	if (faccessat(crf_imgdir_fd(dir), CG_PROPS_IMG, F_OK, 0) < 0)
		return 0;
	r = crf_img_open(dir, CG_PROPS_IMG, &crf__cgroup__hierarchy__descriptor, &img);
	while (r >= 0 && (r = crf_img_read(img, &msg)) > 0) {
		const Crf__Cgroup__Hierarchy *h = (Crf__Cgroup__Hierarchy *)msg;

		r = check_hier(dir, i, h);
		for (size_t k = 0; r >= 0 && k < i; k++)
			if (!strcmp(seen[k], h->controllers))
				r = bad_props(i, "Hierarchy.controllers: '%s' twice",
					      h->controllers);
		if (r >= 0) {
			char **v = realloc(seen, (i + 1) * sizeof(*v));

			r = v ? 0 : crf_error_errno(ENOMEM, "%s", CG_PROPS_IMG);
			if (v) {
				seen = v;
				seen[i++] = strdup(h->controllers);
				r = seen[i - 1] ? 0 : crf_error_errno(ENOMEM, "%s", CG_PROPS_IMG);
			}
		}
		protobuf_c_message_free_unpacked(msg, NULL);
	}
	for (size_t k = 0; k < i; k++)
		free(seen[k]);
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
	if (r >= 0)
		r = cgprops_validate(dir);
	return r;
}
