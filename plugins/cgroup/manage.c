// SPDX-License-Identifier: GPL-2.0-only
/*
 * --manage-cgroups and --cgroup-root, in restore-prepare, before anything
 * is forked.  The modes are CRIU's:
 *
 *   none    every cgroup of the tree must exist; its settings are not
 *           written, and must read as the dump saved them
 *   props   every cgroup must exist; the saved settings are written
 *   soft    (the default) a cgroup that is gone is made and its settings
 *           written; one that exists is left alone, and must read as saved
 *   full    a cgroup that is gone is made; every cgroup's settings are written
 *   strict  every cgroup must be gone: each is made, its settings written
 *
 * CRIU leaves a cgroup that it does not write to as it is; crf then checks
 * that it reads as saved, since a setting that differs would not be
 * restored (THE rule: refused, naming the cgroup and the file).
 *
 * The cgroups are made and written parents first (a parent's
 * cgroup.subtree_control before its children are made, so that they have
 * the controllers' files), and every saved setting is read back once all
 * are written (a parent's cgroup.type becomes "domain threaded" only once
 * its child is threaded): one that does not read as saved refuses.  What
 * was made is removed again when the restore fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/image.h>
#include <crf/mountinfo.h>

#include "cgroup-restore.h"
#include "props.h"

static const char *const mode_names[] = {"none", "props", "soft", "full", "strict"};

char *cg_remap(const struct cg_restore *rs, const char *controllers, const char *path)
{
	for (size_t i = 0; i < rs->n_hiers; i++) {
		const char *root =
			rs->from_root && rs->from_root[i] ? rs->from_root[i] : rs->hiers[i]->root;
		const char *nr = rs->new_root[i];
		char *out;

		if (strcmp(rs->hiers[i]->controllers, controllers) || !nr)
			continue;
		if (!strcmp(path, root))
			return strdup(nr);
		if (!cg_below(path, root))
			break;
		if (asprintf(&out, "%s%s", strcmp(nr, "/") ? nr : "",
			     strcmp(root, "/") ? path + strlen(root) : path) < 0)
			return NULL;
		return out;
	}
	return strdup(path);
}

/* Does --cgroup-root's CONTROLLER @c ("v2", "cpu", "cpu,cpuacct") name the hierarchy @h? */
static bool names(const char *c, size_t len, const char *h)
{
	if (len == 2 && !strncmp(c, "v2", 2))
		return !*h;
	for (const char *p = h; *h && *p;) {
		size_t n = strcspn(p, ",");

		if ((n == len && !strncmp(p, c, len)) || (strlen(h) == len && !strncmp(h, c, len)))
			return true;
		p += n + (p[n] == ',');
	}
	return false;
}

/* One word of cgroup-root (into @to: rs->new_root or rs->from_root): [CONTROLLER:]PATH. */
static int root_word(struct cg_restore *rs, char **to, const char *w, size_t len, bool dflt)
{
	const char *colon = memchr(w, ':', len), *path = colon ? colon + 1 : w;
	size_t plen = len - (size_t)(path - w);
	_cleanup_free_ char *p = strndup(path, plen);
	bool any = false;

	if (!p)
		return -ENOMEM;
	if (!cg_path_ok(p)) {
		crf_error("--cgroup-root %.*s: '%s' is not a cgroup path", (int)len, w, p);
		return -EINVAL;
	}
	if (!colon != dflt)
		return 0;
	for (size_t i = 0; i < rs->n_hiers; i++) {
		const char *h = rs->hiers[i]->controllers;

		if (colon && !names(w, (size_t)(colon - w), h))
			continue;
		any = true;
		if (dflt && to[i])
			continue; /* a CONTROLLER: word said it */
		free(to[i]);
		if (!(to[i] = strdup(p)))
			return -ENOMEM;
	}
	if (colon && !any) {
		crf_error("--cgroup-root %.*s: the dump has no cgroup hierarchy %.*s", (int)len, w,
			  (int)(colon - w), w);
		return -ENOENT;
	}
	return 0;
}

static int parse_roots(struct cg_restore *rs, char **to, const char *v)
{
	int r = 0;

	/* The words with a CONTROLLER first, then the default for the others. */
	for (int pass = 0; pass < 2; pass++)
		for (const char *s = v; r >= 0 && *s;) {
			size_t len = strcspn(s, " ");

			if (len)
				r = root_word(rs, to, s, len, pass == 1);
			s += len + (s[len] == ' ');
		}
	return r;
}

int cg_manage_load(struct crf_ctx *ctx, struct cg_restore *rs)
{
	const char *mode = crf_ctx_config(ctx, "manage-cgroups");
	const char *roots = crf_ctx_config(ctx, "cgroup-root");
	const char *from = crf_ctx_config(ctx, "cgroup-root-from");
	_cleanup_img_ struct crf_img *img = NULL;
	ProtobufCMessage *msg;
	int r = 0;

	rs->mode = CG_SOFT;
	for (int i = 0; mode && i <= CG_STRICT; i++)
		if (!strcmp(mode, mode_names[i]))
			rs->mode = (enum cg_mode)i;
	if (mode && strcmp(mode, mode_names[rs->mode])) {
		crf_error("manage-cgroups = %s: not none, props, soft, full or strict", mode);
		return -EINVAL;
	}
	if (faccessat(crf_imgdir_fd(crf_ctx_images(ctx)), CG_PROPS_IMG, F_OK, 0) < 0) {
		if (!roots || !*roots)
			return 0;
		crf_error("--cgroup-root: this dump saved no %s (made by an older crf): where its "
			  "cgroups branch off is not known",
			  CG_PROPS_IMG);
		return -EOPNOTSUPP;
	}
	r = crf_img_open(crf_ctx_images(ctx), CG_PROPS_IMG, &crf__cgroup__hierarchy__descriptor,
			 &img);
	while (r >= 0 && (r = crf_img_read(img, &msg)) > 0) {
		void *v = realloc(rs->hiers, (rs->n_hiers + 1) * sizeof(*rs->hiers));

		if (!v) {
			protobuf_c_message_free_unpacked(msg, NULL);
			return crf_log_errno(CRF_LOG_ERROR, ENOMEM, "%s", CG_PROPS_IMG);
		}
		rs->hiers = v;
		rs->hiers[rs->n_hiers++] = (Crf__Cgroup__Hierarchy *)msg;
	}
	if (r < 0)
		return r;
	rs->new_root = calloc(rs->n_hiers ? rs->n_hiers : 1, sizeof(*rs->new_root));
	if (!rs->new_root)
		return crf_log_errno(CRF_LOG_ERROR, ENOMEM, "%s", CG_PROPS_IMG);
	r = roots ? parse_roots(rs, rs->new_root, roots) : 0;
	if (r >= 0 && from && *from) {
		rs->from_root = calloc(rs->n_hiers ? rs->n_hiers : 1, sizeof(*rs->from_root));
		r = rs->from_root ? parse_roots(rs, rs->from_root, from) : -ENOMEM;
	}
	if (r == -ENOMEM)
		crf_error("--cgroup-root: %s", strerror(ENOMEM));
	/* FROM is the hierarchy's root or below it, and moves only with a new root. */
	for (size_t i = 0; r >= 0 && rs->from_root && i < rs->n_hiers; i++) {
		const char *f = rs->from_root[i], *root = rs->hiers[i]->root;

		if (!f)
			continue;
		if (!rs->new_root[i] || (strcmp(f, root) && !cg_below(f, root))) {
			crf_error("--cgroup-root-from %s: %s", f,
				  rs->new_root[i] ? "not where the tree's cgroups branch off "
						    "crf's, nor below"
						  : "no --cgroup-root for its hierarchy");
			r = -EINVAL;
		}
	}
	return r;
}

/* Where @path of the hierarchy @ctl is, through crf restore's mounts. */
static int locate(const struct cg_restore *rs, const char *ctl, const char *path, char *dir,
		  size_t len)
{
	_cleanup_fclose_ FILE *f = fmemopen(rs->mountinfo, strlen(rs->mountinfo), "r");
	char name[CG_PATH_MAX + 64];
	int r;

	if (!f)
		return crf_log_errno(CRF_LOG_ERROR, errno, "reading mountinfo");
	r = crf_cgroup_dir_from_mountinfo(f, ctl, path, dir, len);
	if (r < 0)
		crf_error("cgroup %s cannot be reached: %s", cg_name(ctl, path, name, sizeof(name)),
			  r == -ENOENT ? "its hierarchy is not mounted here"
				       : "no mount of its hierarchy shows it");
	return r;
}

/* A cgroup file, its trailing newlines removed (malloc'd into @out). */
static int read_prop(const char *dir, const char *name, char **out)
{
	char file[CG_PATH_MAX + 64];

	snprintf(file, sizeof(file), "%s/%s", dir, name);
	return cg_read_value(file, out);
}

static int write_text(const char *dir, const char *name, const char *text, size_t len)
{
	char file[CG_PATH_MAX + 64];
	_cleanup_close_ int fd = -1;

	snprintf(file, sizeof(file), "%s/%s", dir, name);
	fd = open(file, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, text, len) < 0)
		return -errno;
	return 0;
}

/* Is the word @w (@len bytes) one of the words of @list? */
static bool has_word(const char *list, const char *w, size_t len)
{
	for (const char *s = list; *s;) {
		size_t n = strcspn(s, " ");

		if (n == len && !strncmp(s, w, len))
			return true;
		s += n + (s[n] == ' ');
	}
	return false;
}

/* cgroup.subtree_control: each controller not saved switched off, each saved one on. */
static int write_subtree(const char *dir, const char *want, const char *now)
{
	char op[128];
	int r = 0;

	for (int on = 0; on < 2; on++) {
		const char *from = on ? want : now, *other = on ? now : want;

		for (const char *s = from; r >= 0 && *s;) {
			size_t n = strcspn(s, " ");

			if (n && n < sizeof(op) - 1 && !has_word(other, s, n)) {
				snprintf(op, sizeof(op), "%c%.*s", on ? '+' : '-', (int)n, s);
				r = write_text(dir, "cgroup.subtree_control", op, strlen(op));
			}
			s += n + (s[n] == ' ');
		}
	}
	return r;
}

/* Write one saved setting; 0 or -errno. */
static int write_prop(const char *dir, const Crf__Cgroup__Prop *p)
{
	_cleanup_free_ char *now = NULL;
	int r = 0;

	if (!strcmp(p->name, "cgroup.type") || !strcmp(p->name, "cgroup.subtree_control")) {
		r = read_prop(dir, p->name, &now);
		if (r < 0)
			return r;
	}
	/* A cgroup's type is its own only when threaded; "domain threaded" follows from its
	 * children's and is checked once they are set. */
	if (!strcmp(p->name, "cgroup.type"))
		return strcmp(p->value, "threaded") || !strcmp(now, "threaded")
			       ? 0
			       : write_text(dir, p->name, "threaded", 8);
	if (!strcmp(p->name, "cgroup.subtree_control"))
		return write_subtree(dir, p->value, now);
	/* The v1 device list: every device denied, then each saved line allowed, in order. */
	if (!strcmp(p->name, "devices.list")) {
		r = write_text(dir, "devices.deny", "a", 1);
		for (const char *s = p->value; r >= 0 && *s;) {
			size_t n = strcspn(s, "\n");

			if (n)
				r = write_text(dir, "devices.allow", s, n);
			s += n + (s[n] == '\n');
		}
		return r;
	}
	/* io.max, io.weight: a line each, written one by one. */
	for (const char *s = p->value; r >= 0 && *s;) {
		size_t n = strcspn(s, "\n");

		if (n)
			r = write_text(dir, p->name, s, n);
		s += n + (s[n] == '\n');
	}
	return r;
}

static bool writes(enum cg_mode mode, bool made)
{
	return mode == CG_PROPS || mode == CG_FULL || mode == CG_STRICT ||
	       (mode == CG_SOFT && made);
}

static int remember(struct cg_restore *rs, const char *dir)
{
	char **v = realloc(rs->made, (rs->n_made + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	rs->made = v;
	v[rs->n_made] = strdup(dir);
	return v[rs->n_made++] ? 0 : -ENOMEM;
}

/* Make (as the mode says) and set up one saved cgroup; @wrote: its settings were written. */
static int setup_dir(struct cg_restore *rs, const char *ctl, const Crf__Cgroup__Dir *d, bool *wrote)
{
	_cleanup_free_ char *path = cg_remap(rs, ctl, d->path);
	char dir[CG_PATH_MAX], name[CG_PATH_MAX + 64];
	const char *mode = mode_names[rs->mode];
	struct stat st;
	bool made = false;
	int r;

	if (!path)
		return -ENOMEM;
	cg_name(ctl, path, name, sizeof(name));
	r = locate(rs, ctl, path, dir, sizeof(dir));
	if (r < 0)
		return r;
	if (stat(dir, &st) == 0) {
		if (rs->mode == CG_STRICT) {
			crf_error("cgroup %s (%s) exists: --manage-cgroups=strict restores only "
				  "cgroups that are gone",
				  name, dir);
			return -EEXIST;
		}
	} else if (errno != ENOENT) {
		return crf_log_errno(CRF_LOG_ERROR, errno, "cgroup %s (%s)", name, dir);
	} else if (rs->mode == CG_NONE || rs->mode == CG_PROPS) {
		crf_error("cgroup %s (%s) does not exist: --manage-cgroups=%s makes none (soft, "
			  "full or strict makes it)",
			  name, dir, mode);
		return -ENOENT;
	} else if (mkdir(dir, 0755) < 0) {
		return crf_log_errno(CRF_LOG_ERROR, errno, "cgroup %s: cannot make %s", name, dir);
	} else {
		made = true;
		r = remember(rs, dir);
		crf_debug("cgroup %s: made %s", name, dir);
	}
	*wrote = writes(rs->mode, made);
	for (size_t i = 0; r >= 0 && *wrote && i < d->n_props; i++) {
		r = write_prop(dir, d->props[i]);
		if (r < 0)
			crf_error("cgroup %s (%s): cannot write %s \"%s\": %s", name, dir,
				  d->props[i]->name, d->props[i]->value, strerror(-r));
	}
	return r;
}

/* Every saved setting of @d reads as saved. */
static int verify_dir(const struct cg_restore *rs, const char *ctl, const Crf__Cgroup__Dir *d,
		      bool wrote)
{
	_cleanup_free_ char *path = cg_remap(rs, ctl, d->path);
	char dir[CG_PATH_MAX], name[CG_PATH_MAX + 64];
	int r;

	if (!path)
		return -ENOMEM;
	cg_name(ctl, path, name, sizeof(name));
	r = locate(rs, ctl, path, dir, sizeof(dir));
	for (size_t i = 0; r >= 0 && i < d->n_props; i++) {
		const Crf__Cgroup__Prop *p = d->props[i];
		_cleanup_free_ char *now = NULL;

		r = read_prop(dir, p->name, &now);
		if (r < 0) {
			crf_error("cgroup %s (%s): %s, saved \"%s\", cannot be read here: %s", name,
				  dir, p->name, p->value, strerror(-r));
			return r;
		}
		if (!strcmp(now, p->value))
			continue;
		if (wrote)
			crf_error("cgroup %s (%s): %s cannot be restored exactly: it reads \"%s\" "
				  "once \"%s\" is written",
				  name, dir, p->name, now, p->value);
		else
			crf_error("cgroup %s (%s): %s is \"%s\", the dump saved \"%s\" "
				  "(--manage-cgroups=%s leaves this cgroup's settings as they are: "
				  "props or full writes them)",
				  name, dir, p->name, now, p->value, mode_names[rs->mode]);
		return -EBUSY;
	}
	/* The settings crf does not write: as at the dump, whatever the mode (unsaved.c). */
	for (size_t i = 0; r >= 0 && i < d->n_checked; i++) {
		const Crf__Cgroup__Prop *p = d->checked[i];
		_cleanup_free_ char *now = NULL;

		/* A frozen cgroup is refused after, naming the task put in it (prepare.c). */
		if (!strcmp(p->name, "cgroup.freeze") || !strcmp(p->name, "freezer.state"))
			continue;
		r = read_prop(dir, p->name, &now);
		if (r < 0) {
			crf_error("cgroup %s (%s): %s, \"%s\" at the dump, cannot be read here: %s",
				  name, dir, p->name, p->value, strerror(-r));
			return r;
		}
		if (strcmp(now, p->value)) {
			crf_error("cgroup %s (%s): %s is \"%s\", \"%s\" at the dump: crf does not "
				  "write this setting (docs/cgroup.md)",
				  name, dir, p->name, now, p->value);
			return -EBUSY;
		}
	}
	return r;
}

/* --cgroup-root's paths must exist: the tree's cgroups are made below them. */
static int check_roots(const struct cg_restore *rs)
{
	char dir[CG_PATH_MAX], name[CG_PATH_MAX + 64];
	struct stat st;

	for (size_t i = 0; i < rs->n_hiers; i++) {
		const char *ctl = rs->hiers[i]->controllers;
		int r;

		/* A new root that replaces a saved cgroup is made with it (setup_dir). */
		if (!rs->new_root[i] || (rs->from_root && rs->from_root[i] &&
					 strcmp(rs->from_root[i], rs->hiers[i]->root)))
			continue;
		r = locate(rs, ctl, rs->new_root[i], dir, sizeof(dir));
		if (r < 0)
			return r;
		if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
			crf_error("--cgroup-root: cgroup %s (%s) does not exist",
				  cg_name(ctl, rs->new_root[i], name, sizeof(name)), dir);
			return -ENOENT;
		}
	}
	return 0;
}

int cg_manage(struct cg_restore *rs)
{
	_cleanup_free_ bool *wrote = NULL;
	size_t n = 0, k = 0;
	int r = check_roots(rs);

	for (size_t i = 0; i < rs->n_hiers; i++)
		n += rs->hiers[i]->n_dirs;
	if (r >= 0 && !(wrote = calloc(n ? n : 1, sizeof(*wrote))))
		r = -ENOMEM;
	for (size_t i = 0; r >= 0 && i < rs->n_hiers; i++)
		for (size_t j = 0; r >= 0 && j < rs->hiers[i]->n_dirs; j++)
			r = setup_dir(rs, rs->hiers[i]->controllers, rs->hiers[i]->dirs[j],
				      &wrote[k++]);
	k = 0;
	for (size_t i = 0; r >= 0 && i < rs->n_hiers; i++)
		for (size_t j = 0; r >= 0 && j < rs->hiers[i]->n_dirs; j++)
			r = verify_dir(rs, rs->hiers[i]->controllers, rs->hiers[i]->dirs[j],
				       wrote[k++]);
	if (r == -ENOMEM)
		crf_error("setting up the cgroups: %s", strerror(ENOMEM));
	if (r < 0)
		cg_unmake(rs);
	return r;
}

void cg_unmake(struct cg_restore *rs)
{
	const struct timespec tick = {.tv_nsec = 10 * 1000 * 1000};

	while (rs->n_made) {
		char *dir = rs->made[--rs->n_made];

		/* The tasks of a failed restore may still be dying in it: 2 s at most. */
		for (int i = 0; rmdir(dir) < 0 && errno == EBUSY && i < 200; i++)
			nanosleep(&tick, NULL);
		if (access(dir, F_OK) == 0)
			crf_log_errno(CRF_LOG_WARN, errno,
				      "cannot remove the cgroup %s made for "
				      "the restore",
				      dir);
		free(dir);
	}
	free(rs->made);
	rs->made = NULL;
}
