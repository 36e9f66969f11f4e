// SPDX-License-Identifier: GPL-2.0-only
/*
 * The cgroup namespace (CRF_OBJ_NS kind "cgroup"): its root in every
 * hierarchy, the cgroups the namespace was made in.
 *
 * Dump: /proc/PID/cgroup read by crf gives the task's cgroups from crf's
 * namespace; read by a child of crf that entered the task's cgroup
 * namespace (setns), it gives them from the task's, relative to the root.
 * The root is crf's path less that suffix.  A task whose cgroup lies
 * outside its namespace's root ("/.." in its view) is refused: its root is
 * not known.  Every task in the namespace must give the same roots.
 *
 * Restore, in the first restored process of the namespace, right after it
 * is forked (the ns plugin's restore-premap; the others inherit it): it
 * moves into the roots (as --cgroup-root puts them), unshares
 * CLONE_NEWCGROUP, moves back into its cgroups, and checks that its own
 * /proc/self/cgroup reads as its view did at the dump.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/image.h>
#include <crf/mountinfo.h>

#include "cgns.h"
#include "cgroup-restore.h"
#include "props.h"

/* /proc/@pid/cgroup as the members of @pid's cgroup namespace see it. */
static int read_inside(pid_t pid, struct cg_members *out)
{
	char path[64], buf[16384];
	int p[2], status;
	size_t len = 0;
	ssize_t n;
	pid_t kid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	kid = fork();
	if (kid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (kid == 0) {
		_cleanup_free_ char *text = NULL;
		int fd;

		snprintf(path, sizeof(path), "/proc/%d/ns/cgroup", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || setns(fd, CLONE_NEWCGROUP) < 0)
			_exit(1);
		snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
		if (cg_read_text(path, &text) < 0 || write(p[1], text, strlen(text)) < 0)
			_exit(2);
		_exit(0);
	}
	close(p[1]);
	while (len < sizeof(buf) - 1 && (n = read(p[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	close(p[0]);
	buf[len] = '\0';
	if (waitpid(kid, &status, 0) != kid || !WIFEXITED(status) || WEXITSTATUS(status))
		return -EIO;
	return cg_parse(buf, out);
}

/* @full less the suffix @rel ("/" the whole of it), or NULL where it does not end so. */
static char *root_of(const char *full, const char *rel)
{
	size_t fl = strlen(full), rl = strlen(rel);

	if (!strcmp(rel, "/"))
		return strdup(full);
	if (rl > fl || strcmp(full + fl - rl, rel))
		return NULL;
	if (fl == rl)
		return strdup("/");
	return strndup(full, fl - rl);
}

static void ns_free(Crf__Cgroup__CgroupNs *ns)
{
	for (size_t i = 0; i < ns->n_roots; i++) {
		free(ns->roots[i]->controllers);
		free(ns->roots[i]->path);
		free(ns->roots[i]);
	}
	free(ns->roots);
	free(ns);
}

void cg_ns_free_all(Crf__Cgroup__CgroupNs **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ns_free(v[i]);
	free(v);
}

/* The roots task @pid gives for its namespace @id, into a new record. */
static int roots_of(const struct crf_object *obj, uint64_t id, Crf__Cgroup__CgroupNs **out)
{
	struct cg_members full = {0}, in = {0};
	_cleanup_free_ char *text = NULL;
	Crf__Cgroup__CgroupNs *ns = calloc(1, sizeof(*ns));
	char path[64], name[CG_PATH_MAX + 64];
	int r;

	if (!ns)
		return -ENOMEM;
	crf__cgroup__cgroup_ns__init(ns);
	ns->id = id;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)obj->pid);
	r = cg_read_text(path, &text);
	if (r >= 0)
		r = cg_parse(text, &full);
	if (r >= 0 && (r = read_inside(obj->pid, &in)) < 0)
		crf_log_errno(CRF_LOG_ERROR, -r,
			      "pid %d: namespace %s: cannot read its cgroups "
			      "from inside it",
			      (int)obj->pid, obj->desc);
	if (r >= 0 && !(ns->roots = calloc(full.n ? full.n : 1, sizeof(*ns->roots))))
		r = -ENOMEM;
	for (size_t i = 0; r >= 0 && i < full.n; i++) {
		const struct cg_member *m = cg_find(&in, full.v[i].controllers);
		Crf__Cgroup__NsRoot *nr;
		char *root = m ? root_of(full.v[i].path, m->path) : NULL;

		if (!root || strstr(m->path, "/..")) {
			crf_error(
				"pid %d: namespace %s: its cgroup %s reads \"%s\" from inside: it "
				"is outside the namespace's root, which is then not known",
				(int)obj->pid, obj->desc,
				cg_name(full.v[i].controllers, full.v[i].path, name, sizeof(name)),
				m ? m->path : "(none)");
			free(root);
			r = -EOPNOTSUPP;
			break;
		}
		nr = malloc(sizeof(*nr));
		if (!nr) {
			free(root);
			r = -ENOMEM;
			break;
		}
		crf__cgroup__ns_root__init(nr);
		nr->path = root;
		nr->controllers = strdup(full.v[i].controllers);
		ns->roots[ns->n_roots++] = nr;
		if (!nr->controllers)
			r = -ENOMEM;
	}
	cg_members_free(&full);
	cg_members_free(&in);
	if (r == -ENOMEM)
		crf_error("pid %d: namespace %s: %s", (int)obj->pid, obj->desc, strerror(ENOMEM));
	if (r < 0) {
		ns_free(ns);
		return r;
	}
	*out = ns;
	return 0;
}

static bool same_roots(const Crf__Cgroup__CgroupNs *a, const Crf__Cgroup__CgroupNs *b)
{
	if (a->n_roots != b->n_roots)
		return false;
	for (size_t i = 0; i < a->n_roots; i++)
		if (strcmp(a->roots[i]->controllers, b->roots[i]->controllers) ||
		    strcmp(a->roots[i]->path, b->roots[i]->path))
			return false;
	return true;
}

int cg_ns_dump(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_ns_info *ni = obj->data;
	struct cg_dump *d = crf_ctx_priv(ctx);
	Crf__Cgroup__CgroupNs *ns, **v;
	int r;

	if (!d)
		return crf_error_errno(EINVAL, "pid %d: namespace %s: no dump", (int)obj->pid,
				       obj->desc);
	r = roots_of(obj, ni->id, &ns);
	if (r < 0)
		return r;
	for (size_t i = 0; i < d->n_ns; i++) {
		if (d->ns[i]->id != ni->id)
			continue;
		r = same_roots(d->ns[i], ns) ? 0 : -EOPNOTSUPP;
		if (r < 0)
			crf_error("pid %d: namespace %s: its cgroups give other roots than another "
				  "task's in it",
				  (int)obj->pid, obj->desc);
		ns_free(ns);
		return r;
	}
	v = realloc(d->ns, (d->n_ns + 1) * sizeof(*v));
	if (!v) {
		ns_free(ns);
		return crf_error_errno(ENOMEM, "pid %d: namespace %s", (int)obj->pid, obj->desc);
	}
	d->ns = v;
	d->ns[d->n_ns++] = ns;
	crf_debug("pid %d: namespace %s: %zu roots", (int)obj->pid, obj->desc, ns->n_roots);
	return 0;
}

int cg_ns_write(struct crf_ctx *ctx, struct cg_dump *d)
{
	_cleanup_img_ struct crf_img *img = NULL;
	int r = crf_img_create(crf_ctx_images(ctx), CG_NS_IMG, &crf__cgroup__cgroup_ns__descriptor,
			       &img);

	for (size_t i = 0; r >= 0 && i < d->n_ns; i++)
		r = crf_img_write(img, &d->ns[i]->base);
	if (r >= 0)
		r = crf_img_close(TAKE_PTR(img));
	return r;
}

int cg_ns_load(struct crf_ctx *ctx, struct cg_restore *rs)
{
	_cleanup_img_ struct crf_img *img = NULL;
	ProtobufCMessage *msg;
	int r;

	if (faccessat(crf_imgdir_fd(crf_ctx_images(ctx)), CG_NS_IMG, F_OK, 0) < 0)
		return 0;
	r = crf_img_open(crf_ctx_images(ctx), CG_NS_IMG, &crf__cgroup__cgroup_ns__descriptor, &img);
	while (r >= 0 && (r = crf_img_read(img, &msg)) > 0) {
		const Crf__Cgroup__CgroupNs *ns = (Crf__Cgroup__CgroupNs *)msg;
		void *v;

		for (size_t i = 0; r >= 0 && i < ns->n_roots; i++)
			if (!cg_path_ok(ns->roots[i]->path))
				r = crf_error_errno(EBADMSG, "%s: namespace %llu: root '%.200s'",
						    CG_NS_IMG, (unsigned long long)ns->id,
						    ns->roots[i]->path);
		v = r >= 0 ? realloc(rs->ns, (rs->n_ns + 1) * sizeof(*rs->ns)) : NULL;
		if (!v) {
			protobuf_c_message_free_unpacked(msg, NULL);
			return r < 0 ? r : crf_error_errno(ENOMEM, "%s", CG_NS_IMG);
		}
		rs->ns = v;
		rs->ns[rs->n_ns++] = (Crf__Cgroup__CgroupNs *)msg;
	}
	return r;
}

/* Write 0 (ourselves) to cgroup.procs of @path of the hierarchy @ctl. */
static int enter(const struct cg_restore *rs, const char *ctl, const char *path, pid_t pid)
{
	_cleanup_fclose_ FILE *f = fmemopen(rs->mountinfo, strlen(rs->mountinfo), "r");
	_cleanup_free_ char *p = cg_remap(rs, ctl, path);
	char dir[CG_PATH_MAX], file[CG_PATH_MAX + 32], name[CG_PATH_MAX + 64];
	_cleanup_close_ int fd = -1;
	int r;

	if (!f || !p)
		return crf_error_errno(ENOMEM, "pid %d: cgroup namespace", (int)pid);
	cg_name(ctl, p, name, sizeof(name));
	r = crf_cgroup_dir_from_mountinfo(f, ctl, p, dir, sizeof(dir));
	if (r < 0)
		return crf_error_errno(-r, "pid %d: cgroup %s cannot be reached", (int)pid, name);
	snprintf(file, sizeof(file), "%s/cgroup.procs", dir);
	fd = cg_open_at_mount(rs, file, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "0", 1) < 0)
		return crf_error_errno(errno,
				       "pid %d: cgroup namespace: cannot join cgroup %s (%s)",
				       (int)pid, name, file);
	return 0;
}

/* What the task saw: @path relative to @root ("/" for the root itself). */
static const char *view(const char *path, const char *root)
{
	if (!strcmp(path, root))
		return "/";
	return strcmp(root, "/") ? path + strlen(root) : path;
}

int cg_ns_restore(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_ns_info *ni = obj->data;
	const struct cg_restore *rs = crf_ctx_priv(ctx);
	const Crf__Cgroup__CgroupNs *ns = NULL;
	const Crf__Cgroup__TaskCgroups *t = NULL;
	_cleanup_free_ char *text = NULL;
	struct cg_members now = {0};
	int r = 0;

	if (ni->inherited)
		return 0;
	for (size_t i = 0; rs && i < rs->n_ns && !ns; i++)
		if (rs->ns[i]->id == ni->id)
			ns = rs->ns[i];
	for (size_t i = 0; rs && i < rs->n_tasks && !t; i++)
		if (rs->tasks[i]->pid == obj->pid)
			t = rs->tasks[i];
	if (!ns || !t)
		return crf_error_errno(EBADMSG,
				       "pid %d: namespace %s: %s or %s has no record of it",
				       (int)obj->pid, obj->desc, CG_NS_IMG, CG_IMG);
	for (size_t i = 0; r >= 0 && i < ns->n_roots; i++)
		r = enter(rs, ns->roots[i]->controllers, ns->roots[i]->path, obj->pid);
	if (r >= 0 && unshare(CLONE_NEWCGROUP) < 0)
		r = crf_error_errno(errno, "pid %d: namespace %s: unshare", (int)obj->pid,
				    obj->desc);
	for (size_t i = 0; r >= 0 && i < t->n_members; i++)
		r = enter(rs, t->members[i]->controllers, t->members[i]->path, obj->pid);
	/* From inside, as the task will read it. */
	if (r >= 0)
		r = cg_read_text("/proc/self/cgroup", &text);
	if (r >= 0)
		r = cg_parse(text, &now);
	for (size_t i = 0; r >= 0 && i < ns->n_roots; i++) {
		const Crf__Cgroup__NsRoot *root = ns->roots[i];
		const struct cg_member *m = cg_find(&now, root->controllers);
		const char *want = NULL;
		char name[CG_PATH_MAX + 64];

		for (size_t j = 0; j < t->n_members && !want; j++)
			if (!strcmp(t->members[j]->controllers, root->controllers))
				want = view(t->members[j]->path, root->path);
		if (!m || !want || strcmp(m->path, want)) {
			crf_error(
				"pid %d: namespace %s: its cgroup %s reads \"%s\" from inside, not "
				"\"%s\" as at the dump",
				(int)obj->pid, obj->desc,
				cg_name(root->controllers, root->path, name, sizeof(name)),
				m ? m->path : "(none)", want ? want : "(none)");
			r = -EIO;
		}
	}
	cg_members_free(&now);
	return r;
}
