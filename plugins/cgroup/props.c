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
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
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

struct hier {
	Crf__Cgroup__Hierarchy msg;
	Crf__Cgroup__Dir *dirs;
	Crf__Cgroup__Dir **pdirs;
	size_t cap;
};

static void hier_free(struct hier *h)
{
	for (size_t i = 0; i < h->msg.n_dirs; i++) {
		for (size_t j = 0; j < h->dirs[i].n_props; j++) {
			free(h->dirs[i].props[j]->name);
			free(h->dirs[i].props[j]->value);
			free(h->dirs[i].props[j]);
		}
		free(h->dirs[i].props);
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

static int add_prop(Crf__Cgroup__Dir *d, const char *name, char *value)
{
	Crf__Cgroup__Prop *p = malloc(sizeof(*p)), **v;

	if (!p)
		return -ENOMEM;
	v = realloc(d->props, (d->n_props + 1) * sizeof(*v));
	if (!v) {
		free(p);
		return -ENOMEM;
	}
	d->props = v;
	crf__cgroup__prop__init(p);
	p->value = value;
	p->name = strdup(name);
	d->props[d->n_props++] = p;
	return p->name ? 0 : -ENOMEM;
}

/*
 * Settings crf does not restore: each must read as a new cgroup has it, or
 * the dump is refused, naming the cgroup and the file.  @ctl: the v1
 * controller of the file, NULL for cgroup v2.  @ok: the value a new cgroup
 * has; starting with '~', a line it holds; with '^', how every line starts
 * (blkio.bfq.weight_device: "default 100", the weight, saved apart).
 */
static const struct unsaved {
	const char *pattern, *ctl, *ok;
} unsaved[] = {
	{"hugetlb.*.max", NULL, "max"},
	{"hugetlb.*.rsvd.max", NULL, "max"},
	{"io.latency", NULL, ""},
	{"rdma.max", NULL, ""},
	{"cpu.max.burst", NULL, "0"},
	{"cpu.idle", NULL, "0"},
	{"cpu.uclamp.min", NULL, "0.00"},
	{"cpu.uclamp.max", NULL, "max"},
	{"cpuset.cpus.exclusive", NULL, ""},
	{"memory.swap.high", NULL, "max"},
	{"memory.zswap.max", NULL, "max"},
	{"io.bfq.weight", NULL, "default 100"},
	{"blkio.throttle.*_device", "blkio", ""},
	{"blkio.weight_device", "blkio", "^default "},
	{"blkio.bfq.weight_device", "blkio", "^default "},
	{"hugetlb.*.limit_in_bytes", "hugetlb", "9223372036854771712"},
	{"memory.oom_control", "memory", "~oom_kill_disable 0"},
	{"memory.kmem.limit_in_bytes", "memory", "9223372036854771712"},
	{"memory.kmem.tcp.limit_in_bytes", "memory", "9223372036854771712"},
	{"memory.move_charge_at_immigrate", "memory", "0"},
	{"cpu.rt_runtime_us", "cpu", "0"},
	{"cpu.rt_period_us", "cpu", "1000000"},
	{"cpu.cfs_burst_us", "cpu", "0"},
	{"cpu.idle", "cpu", "0"},
	{"cpuset.cpu_exclusive", "cpuset", "0"},
	{"cpuset.mem_exclusive", "cpuset", "0"},
	{"cpuset.mem_hardwall", "cpuset", "0"},
	{"cpuset.memory_migrate", "cpuset", "0"},
	{"cpuset.sched_load_balance", "cpuset", "1"},
	{"cpuset.sched_relax_domain_level", "cpuset", "-1"},
	{"devices.list", "devices", "a *:* rwm"},
	{"net_cls.classid", "net_cls", "0"},
};

static bool reads_ok(const char *value, const char *ok)
{
	if (*ok == '^') {
		for (const char *s = value; *s;) {
			size_t n = strcspn(s, "\n");

			if (n && strncmp(s, ok + 1, strlen(ok + 1)))
				return false;
			s += n + (s[n] == '\n');
		}
		return true;
	}
	if (*ok != '~')
		return !strcmp(value, ok);
	for (const char *s = value; *s;) {
		size_t n = strcspn(s, "\n");

		if (n == strlen(ok + 1) && !strncmp(s, ok + 1, n))
			return true;
		s += n + (s[n] == '\n');
	}
	return false;
}

/* Every file of @dir that is a setting crf does not restore reads as in a new cgroup. */
static int check_unsaved(const char *dir, const char *ctl, const char *name)
{
	_cleanup_closedir_ DIR *d = opendir(dir);
	char file[4096 + 512];
	struct dirent *e;

	if (!d)
		return crf_log_errno(CRF_LOG_ERROR, errno, "cgroup %s: %s", name, dir);
	while ((e = readdir(d))) {
		for (size_t i = 0; i < sizeof(unsaved) / sizeof(unsaved[0]); i++) {
			const struct unsaved *u = &unsaved[i];
			_cleanup_free_ char *text = NULL;
			int r;

			if (!u->ctl != !*ctl || (u->ctl && !cg_v1_has(ctl, u->ctl)) ||
			    fnmatch(u->pattern, e->d_name, 0))
				continue;
			snprintf(file, sizeof(file), "%s/%s", dir, e->d_name);
			r = cg_read_value(file, &text);
			if (r < 0)
				return crf_log_errno(CRF_LOG_ERROR, -r, "cgroup %s: cannot read %s",
						     name, file);
			if (reads_ok(text, u->ok))
				continue;
			for (char *c = text; (c = strchr(c, '\n'));)
				*c = ',';
			crf_error(
				"cgroup %s: %s reads \"%.200s\", not as in a new cgroup: crf does "
				"not restore this setting (docs/cgroup.md)",
				name, e->d_name, text);
			return -EOPNOTSUPP;
		}
	}
	return 0;
}

/* The settings of @d, a cgroup of the hierarchy @ctl, found through @mountinfo. */
static int read_dir(Crf__Cgroup__Dir *d, const char *ctl, const char *mountinfo)
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
		r = add_prop(d, prop, text);
		if (r < 0)
			free(text);
	}
	return r < 0 ? r : check_unsaved(dir, ctl, name);
}

int cg_props_dump(struct crf_ctx *ctx, const struct cg_members *seen)
{
	_cleanup_free_ char *self_text = NULL, *mountinfo = NULL;
	_cleanup_img_ struct crf_img *img = NULL;
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
			r = read_dir(&h.dirs[k], ctl, mountinfo);
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
