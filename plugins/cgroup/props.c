// SPDX-License-Identifier: GPL-2.0-only
/*
 * The cgroup settings crf saves (docs/cgroup.md), and their dump.
 *
 * For each hierarchy, the cgroups of the tree that are not crf dump's own
 * are found: the tree's cgroups branch off crf's at a cgroup, the root
 * (crf's own cgroup or one of its ancestors), and every cgroup strictly
 * below the root on the way to a task's is saved, parents first, with the
 * files of the list below that it has.  A controller not enabled there has
 * no files, so nothing of it is saved, and nothing of it is written back.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/image.h>
#include <crf/mountinfo.h>

#include "cgprops.pb-c.h"
#include "props.h"

/* The deepest cgroup holding both @a and @b (each may be it). */
static char *common(const char *a, const char *b)
{
	size_t end = 1;

	for (size_t i = 1;; i++) {
		if ((a[i] == '/' || !a[i]) && (b[i] == '/' || !b[i]) && !strncmp(a, b, i))
			end = i;
		if (!a[i] || !b[i] || a[i] != b[i])
			break;
	}
	return strndup(a, end);
}

static void props_free(Crf__Cgroup__Prop **v, size_t n)
{
	for (size_t j = 0; j < n; j++) {
		free(v[j]->name);
		free(v[j]->value);
		free(v[j]);
	}
	free(v);
}

struct hier {
	Crf__Cgroup__Hierarchy msg;
	Crf__Cgroup__Dir *dirs;
	Crf__Cgroup__Dir **pdirs;
	size_t cap;
};

static void hier_free(struct hier *h)
{
	for (size_t i = 0; i < h->msg.n_dirs; i++) {
		props_free(h->dirs[i].props, h->dirs[i].n_props);
		props_free(h->dirs[i].checked, h->dirs[i].n_checked);
		free(h->dirs[i].path);
	}
	free(h->dirs);
	free(h->pdirs);
	free(h->msg.root);
}

static int add_dir(struct hier *h, const char *path)
{
	for (size_t i = 0; i < h->msg.n_dirs; i++)
		if (!strcmp(h->dirs[i].path, path))
			return 0;
	if (h->msg.n_dirs == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 8;
		Crf__Cgroup__Dir *v = realloc(h->dirs, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		h->dirs = v;
		h->cap = cap;
	}
	crf__cgroup__dir__init(&h->dirs[h->msg.n_dirs]);
	h->dirs[h->msg.n_dirs].path = strdup(path);
	if (!h->dirs[h->msg.n_dirs].path)
		return -ENOMEM;
	h->msg.n_dirs++;
	return 0;
}

/* @path and its ancestors strictly below @root. */
static int add_chain(struct hier *h, const char *path, const char *root)
{
	_cleanup_free_ char *p = strdup(path);
	int r = 0;

	if (!p)
		return -ENOMEM;
	while (r >= 0 && cg_below(p, root)) {
		char *slash = strrchr(p, '/');

		r = add_dir(h, p);
		if (slash == p)
			break;
		*slash = '\0';
	}
	return r;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const Crf__Cgroup__Dir *)a)->path, ((const Crf__Cgroup__Dir *)b)->path);
}

/*
 * The root and the dirs of the hierarchy @ctl: @own is crf's cgroup in it.
 * Paths sort parents first (a parent is a prefix of its children).
 */
static int plan_hier(struct hier *h, const struct cg_members *seen, const char *ctl,
		     const char *own)
{
	int r = 0;

	h->msg.controllers = (char *)ctl;
	for (size_t i = 0; i < seen->n; i++) {
		const char *p = seen->v[i].path;
		char *c;

		if (strcmp(seen->v[i].controllers, ctl) || !strcmp(p, own) || cg_below(own, p))
			continue; /* crf's own or an ancestor of it */
		c = common(p, own);
		if (!c)
			return -ENOMEM;
		if (!h->msg.root || strlen(c) < strlen(h->msg.root)) {
			free(h->msg.root);
			h->msg.root = c;
		} else {
			free(c);
		}
	}
	if (!h->msg.root && !(h->msg.root = strdup(own)))
		return -ENOMEM;
	for (size_t i = 0; r >= 0 && i < seen->n; i++)
		if (!strcmp(seen->v[i].controllers, ctl))
			r = add_chain(h, seen->v[i].path, h->msg.root);
	if (h->msg.n_dirs)
		qsort(h->dirs, h->msg.n_dirs, sizeof(*h->dirs), by_path);
	return r;
}

int cg_add_prop(Crf__Cgroup__Prop ***v, size_t *n, const char *name, char *value)
{
	Crf__Cgroup__Prop *p = malloc(sizeof(*p)), **nv = NULL;

	if (p)
		nv = realloc(*v, (*n + 1) * sizeof(*nv));
	if (!nv) {
		free(p);
		free(value);
		return -ENOMEM;
	}
	*v = nv;
	crf__cgroup__prop__init(p);
	p->value = value;
	p->name = strdup(name);
	nv[(*n)++] = p;
	return p->name ? 0 : -ENOMEM;
}

/* A task of the dump in @path of hierarchy @ctl or below it, for messages. */
static pid_t task_in(const struct cg_members *seen, const char *ctl, const char *path)
{
	for (size_t i = 0; i < seen->n; i++)
		if (!strcmp(seen->v[i].controllers, ctl) &&
		    (!strcmp(seen->v[i].path, path) || cg_below(seen->v[i].path, path)))
			return seen->v[i].pid;
	return 0;
}

/* The settings of @d, a cgroup of the hierarchy @ctl, found through @mountinfo. */
static int read_dir(Crf__Cgroup__Dir *d, const char *ctl, const char *mountinfo, pid_t pid,
		    bool keep)
{
	char dir[4096], file[4200], name[4200];
	_cleanup_fclose_ FILE *f = fmemopen((void *)mountinfo, strlen(mountinfo), "r");
	const char *prop;
	int r;

	cg_name(ctl, d->path, name, sizeof(name));
	if (!f)
		return crf_log_errno(CRF_LOG_ERROR, errno, "reading mountinfo");
	r = crf_cgroup_dir_from_mountinfo(f, ctl, d->path, dir, sizeof(dir));
	if (r < 0) {
		crf_error("cgroup %s: cannot be reached through a mount of its hierarchy (%s): "
			  "its settings cannot be saved",
			  name, strerror(-r));
		return r;
	}
	for (int i = 0; r >= 0 && (prop = cg_prop_name(ctl, i)); i++) {
		char *text = NULL;

		snprintf(file, sizeof(file), "%s/%s", dir, prop);
		r = cg_read_value(file, &text);
		if (r == -ENOENT) {
			r = 0;
			continue;
		}
		if (r < 0)
			return crf_log_errno(CRF_LOG_ERROR, -r, "cgroup %s: cannot read %s", name,
					     file);
		if (!strcmp(prop, "cpuset.cpus.partition") && strstr(text, "invalid")) {
			crf_error("cgroup %s: %s is \"%s\": an invalid partition cannot be made "
				  "again",
				  name, prop, text);
			free(text);
			return -EOPNOTSUPP;
		}
		r = cg_add_prop(&d->props, &d->n_props, prop, text);
	}
	return r < 0 ? r : cg_check_unsaved(d, dir, ctl, name, pid, keep);
}

int cg_props_dump(struct crf_ctx *ctx, const struct cg_members *seen)
{
	_cleanup_free_ char *self_text = NULL, *mountinfo = NULL;
	_cleanup_img_ struct crf_img *img = NULL;
	const char *mode = crf_ctx_config(ctx, "manage-cgroups");
	/* none and props take the cgroups as they are at restore: what differs is checked then. */
	bool keep = mode && (!strcmp(mode, "none") || !strcmp(mode, "props"));
	struct cg_members self = {0};
	int r;

	r = cg_read_text("/proc/self/cgroup", &self_text);
	if (r >= 0)
		r = cg_parse(self_text, &self);
	if (r >= 0)
		r = cg_read_text("/proc/self/mountinfo", &mountinfo);
	if (r < 0)
		return crf_log_errno(CRF_LOG_ERROR, -r, "reading crf's own cgroups and mounts");
	r = crf_img_create(crf_ctx_images(ctx), CG_PROPS_IMG, &crf__cgroup__hierarchy__descriptor,
			   &img);
	for (size_t i = 0; r >= 0 && i < seen->n; i++) {
		const char *ctl = seen->v[i].controllers;
		const struct cg_member *own = cg_find(&self, ctl);
		struct hier h = {.msg = CRF__CGROUP__HIERARCHY__INIT};
		bool done = false;

		for (size_t k = 0; k < i && !done; k++)
			done = !strcmp(seen->v[k].controllers, ctl);
		if (done)
			continue; /* one record per hierarchy */
		r = plan_hier(&h, seen, ctl, own ? own->path : "/");
		if (r >= 0 && h.msg.n_dirs && !(h.pdirs = calloc(h.msg.n_dirs, sizeof(*h.pdirs))))
			r = -ENOMEM;
		for (size_t k = 0; r >= 0 && k < h.msg.n_dirs; k++) {
			h.pdirs[k] = &h.dirs[k];
			r = read_dir(&h.dirs[k], ctl, mountinfo, task_in(seen, ctl, h.dirs[k].path),
				     keep);
		}
		h.msg.dirs = h.pdirs;
		if (r >= 0)
			r = crf_img_write(img, &h.msg.base);
		hier_free(&h);
	}
	cg_members_free(&self);
	if (r == -ENOMEM)
		crf_error("%s: %s", CG_PROPS_IMG, strerror(ENOMEM));
	if (r >= 0)
		r = crf_img_close(TAKE_PTR(img));
	return r;
}
