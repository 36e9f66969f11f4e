// SPDX-License-Identifier: GPL-2.0-only
/*
 * Dump: each live process's cgroups (and those of its threads where they
 * differ) as one TaskCgroups record of cgroup.img.  The image is opened in
 * dump-prepare, written in dump-task and closed in dump-finish; a failed
 * dump drops it in dump-cleanup.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/image.h>

#include "cgroup.h"
#include "cgroup.pb-c.h"
#include "cgns.h"
#include "props.h"

int cg_read_text(const char *path, char **text)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0, cap = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	do {
		if (len + 1 >= cap) {
			char *b = realloc(buf, cap = cap ? cap * 2 : 1024);

			if (!b)
				return -ENOMEM;
			buf = b;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n > 0)
			len += (size_t)n;
	} while (n > 0);
	if (n < 0)
		return -errno;
	buf[len] = '\0';
	*text = TAKE_PTR(buf);
	return 0;
}

int cg_read_value(const char *path, char **text)
{
	int r = cg_read_text(path, text);
	size_t n;

	if (r < 0)
		return r;
	n = strlen(*text);
	while (n && (*text)[n - 1] == '\n')
		(*text)[--n] = '\0';
	return 0;
}

static int read_members(pid_t pid, pid_t tid, struct cg_members *m)
{
	_cleanup_free_ char *text = NULL;
	char path[64];
	int r;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/cgroup", (int)pid, (int)tid);
	r = cg_read_text(path, &text);
	if (r < 0)
		return crf_log_errno(CRF_LOG_ERROR, -r, "pid %d: %s", (int)pid, path);
	r = cg_parse(text, m);
	if (r == -EINVAL)
		crf_error("pid %d: %s: not in the format ID:CONTROLLERS:PATH", (int)pid, path);
	return r;
}

/* Protobuf views of @m: the strings stay @m's. */
static int to_msg(const struct cg_members *m, Crf__Cgroup__Member **v, Crf__Cgroup__Member ***pv)
{
	*v = calloc(m->n ? m->n : 1, sizeof(**v));
	*pv = calloc(m->n ? m->n : 1, sizeof(**pv));
	if (!*v || !*pv)
		return -ENOMEM;
	for (size_t i = 0; i < m->n; i++) {
		crf__cgroup__member__init(&(*v)[i]);
		(*v)[i].controllers = m->v[i].controllers;
		(*v)[i].path = m->v[i].path;
		(*pv)[i] = &(*v)[i];
	}
	return 0;
}

struct thread_rec {
	Crf__Cgroup__ThreadCgroups msg;
	struct cg_members m;
	Crf__Cgroup__Member *v, **pv;
};

static void threads_free(struct thread_rec *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		cg_members_free(&t[i].m);
		free(t[i].v);
		free(t[i].pv);
	}
	free(t);
}

/* The threads of @pid whose cgroups are not @proc's, into @out. */
static int odd_threads(pid_t pid, const struct cg_members *proc, struct thread_rec **out, size_t *n)
{
	_cleanup_closedir_ DIR *d = NULL;
	char path[64];
	struct dirent *e;
	size_t cap = 0;
	int r = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return crf_log_errno(CRF_LOG_ERROR, errno, "pid %d: %s", (int)pid, path);
	while (r >= 0 && (e = readdir(d))) {
		pid_t tid = (pid_t)atoi(e->d_name);
		struct thread_rec t = {0};

		if (tid <= 0 || tid == pid)
			continue;
		r = read_members(pid, tid, &t.m);
		if (r < 0 || cg_same(&t.m, proc)) {
			cg_members_free(&t.m);
			continue;
		}
		if (*n == cap) {
			struct thread_rec *v =
				realloc(*out, (cap = cap ? cap * 2 : 4) * sizeof(*v));

			if (!v) {
				cg_members_free(&t.m);
				r = -ENOMEM;
				break;
			}
			*out = v;
		}
		crf__cgroup__thread_cgroups__init(&t.msg);
		t.msg.tid = tid;
		(*out)[(*n)++] = t;
		r = to_msg(&t.m, &(*out)[*n - 1].v, &(*out)[*n - 1].pv);
	}
	return r;
}

/* Remember the cgroups of @m in @seen, each once. */
static int see(struct cg_members *seen, const struct cg_members *m, pid_t pid)
{
	for (size_t i = 0; i < m->n; i++) {
		bool known = false;
		struct cg_member *v;

		for (size_t k = 0; k < seen->n && !known; k++)
			known = !strcmp(seen->v[k].controllers, m->v[i].controllers) &&
				!strcmp(seen->v[k].path, m->v[i].path);
		if (known)
			continue;
		v = realloc(seen->v, (seen->n + 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		seen->v = v;
		v[seen->n].controllers = strdup(m->v[i].controllers);
		v[seen->n].path = strdup(m->v[i].path);
		v[seen->n].pid = pid;
		seen->n++;
		if (!v[seen->n - 1].controllers || !v[seen->n - 1].path)
			return -ENOMEM;
	}
	return 0;
}

int cgroup_dump_prepare(struct crf_ctx *ctx)
{
	struct cg_dump *d = calloc(1, sizeof(*d));
	int r;

	if (!d)
		return crf_log_errno(CRF_LOG_ERROR, ENOMEM, "%s", CG_IMG);
	r = crf_img_create(crf_ctx_images(ctx), CG_IMG, &crf__cgroup__task_cgroups__descriptor,
			   &d->img);
	if (r < 0) {
		free(d);
		return r;
	}
	crf_ctx_set_priv(ctx, d);
	return 0;
}

int cgroup_dump_task(struct crf_ctx *ctx)
{
	Crf__Cgroup__TaskCgroups rec = CRF__CGROUP__TASK_CGROUPS__INIT;
	_cleanup_free_ Crf__Cgroup__ThreadCgroups **pt = NULL;
	_cleanup_free_ Crf__Cgroup__Member *v = NULL, **pv = NULL;
	struct cg_members m = {0};
	struct cg_dump *d = crf_ctx_priv(ctx);
	struct thread_rec *t = NULL;
	pid_t pid = crf_ctx_pid(ctx);
	size_t nt = 0;
	int r;

	r = read_members(pid, pid, &m);
	if (r >= 0)
		r = to_msg(&m, &v, &pv);
	if (r >= 0)
		r = odd_threads(pid, &m, &t, &nt);
	if (r >= 0 && nt && !(pt = calloc(nt, sizeof(*pt))))
		r = -ENOMEM;
	if (r >= 0)
		r = see(&d->seen, &m, pid);
	for (size_t i = 0; r >= 0 && i < nt; i++) {
		r = see(&d->seen, &t[i].m, t[i].msg.tid);
		t[i].msg.n_members = t[i].m.n;
		t[i].msg.members = t[i].pv;
		pt[i] = &t[i].msg;
	}
	if (r >= 0) {
		rec.pid = pid;
		rec.n_members = m.n;
		rec.members = pv;
		rec.n_threads = nt;
		rec.threads = pt;
		r = crf_img_write(d->img, &rec.base);
	}
	if (r == -ENOMEM)
		crf_error("pid %d: %s", (int)pid, strerror(ENOMEM));
	threads_free(t, nt);
	cg_members_free(&m);
	return r;
}

int cgroup_dump_finish(struct crf_ctx *ctx)
{
	struct cg_dump *d = crf_ctx_priv(ctx);
	int r = crf_img_close(TAKE_PTR(d->img));

	if (r >= 0)
		r = cg_props_dump(ctx, &d->seen);
	return r < 0 ? r : cg_ns_write(ctx, d);
}

int cgroup_dump_cleanup(struct crf_ctx *ctx)
{
	struct cg_dump *d = crf_ctx_priv(ctx);

	if (d) {
		crf_img_abort(d->img);
		cg_members_free(&d->seen);
		cg_ns_free_all(d->ns, d->n_ns);
		free(d);
	}
	crf_ctx_set_priv(ctx, NULL);
	return 0;
}
