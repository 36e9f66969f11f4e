// SPDX-License-Identifier: GPL-2.0-only
/*
 * restore-prepare: before the tree is forked, every cgroup a task must be
 * put back in is found and checked.  A task inherits crf restore's cgroups
 * (every process is forked before any moves itself), so only a cgroup that
 * is not crf's own in its hierarchy needs a move; a thread needs one where
 * it is not in its process's.  Each such cgroup must be reachable through a
 * mount of its hierarchy (/proc/self/mountinfo, never a fixed path), exist
 * (crf does not create cgroups: the limits of one that is gone are not
 * saved), be joinable, and not be frozen (a task put in it would stop).
 * Anything else refuses the restore here, naming the task and the cgroup.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/image.h>
#include <crf/mountinfo.h>

#include "cgns.h"
#include "cgroup-restore.h"
#include "cgroup.pb-c.h"
#include "validate.h"

/* A small cgroup file, its trailing newline removed; -errno when unreadable. */
static int read_small(const char *dir, const char *name, char *buf, size_t len)
{
	char path[CG_PATH_MAX + 32];
	_cleanup_close_ int fd = -1;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		return -errno;
	while (n > 0 && buf[n - 1] == '\n')
		n--;
	buf[n] = '\0';
	return 0;
}

static int refuse(const struct cg_move *m, int err, const char *why)
{
	char name[CG_PATH_MAX + 64];

	cg_name(m->controllers, m->path, name, sizeof(name));
	if (m->tid)
		crf_error("pid %d: thread %d: cgroup %s (%s) %s", (int)m->pid, (int)m->tid, name,
			  m->dir ? m->dir : "?", why);
	else
		crf_error("pid %d: cgroup %s (%s) %s", (int)m->pid, name, m->dir ? m->dir : "?",
			  why);
	return -err;
}

/* cgroup v2: not a domain that only children may hold, not frozen. */
static int check_v2(const struct cg_move *m)
{
	char type[64], sub[1024], events[256];

	if (read_small(m->dir, "cgroup.type", type, sizeof(type)) < 0)
		return 0; /* the root cgroup: any task may be in it */
	if (!strcmp(type, "domain invalid"))
		return refuse(m, EOPNOTSUPP, "is of type \"domain invalid\": no task may join it");
	if (!strcmp(type, "domain") && !m->tid &&
	    read_small(m->dir, "cgroup.subtree_control", sub, sizeof(sub)) == 0 && *sub)
		return refuse(m, EBUSY,
			      "enables controllers for its children (cgroup.subtree_control), so "
			      "no process may join it");
	if (read_small(m->dir, "cgroup.events", events, sizeof(events)) == 0 &&
	    strstr(events, "frozen 1"))
		return refuse(m, EBUSY, "is frozen: a task put in it would not run (thaw it)");
	return 0;
}

/* The v1 freezer: a task joining a frozen cgroup would stop. */
static int check_v1(const struct cg_move *m)
{
	char state[64];

	if (read_small(m->dir, "freezer.state", state, sizeof(state)) == 0 &&
	    strcmp(state, "THAWED"))
		return refuse(m, EBUSY,
			      "is frozen (freezer.state is not THAWED): a task put in "
			      "it would not run");
	return 0;
}

static int check_dir(const struct cg_move *m)
{
	char file[CG_PATH_MAX + 32];
	struct stat st;

	if (stat(m->dir, &st) < 0 && errno == ENOENT)
		return refuse(m, ENOENT,
			      "does not exist: crf puts a task back in the cgroup it "
			      "was in, and does not create one (its limits would be "
			      "lost)");
	if (stat(m->dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return refuse(m, errno ? errno : ENOTDIR, "is not a cgroup directory");
	snprintf(file, sizeof(file), "%s/%s", m->dir, cg_move_file(m));
	if (access(file, W_OK) < 0) {
		char why[128];
		int err = errno;

		snprintf(why, sizeof(why), "cannot be joined: %s: %s", cg_move_file(m),
			 strerror(err));
		return refuse(m, err, why);
	}
	return *m->controllers ? check_v1(m) : check_v2(m);
}

/* Where the cgroup of @m is, through a mount of its hierarchy. */
static int resolve(struct cg_move *m, const char *mountinfo)
{
	char dir[CG_PATH_MAX];
	_cleanup_fclose_ FILE *f = fmemopen((void *)mountinfo, strlen(mountinfo), "r");
	int r;

	if (!f)
		return crf_log_errno(CRF_LOG_ERROR, errno, "reading mountinfo");
	r = crf_cgroup_dir_from_mountinfo(f, m->controllers, m->path, dir, sizeof(dir));
	if (r == -ENOENT)
		return refuse(m, ENOENT,
			      "cannot be reached: its hierarchy is not mounted here "
			      "(no mount of it in /proc/self/mountinfo)");
	if (r == -EXDEV)
		return refuse(m, EXDEV, "cannot be reached: no mount of its hierarchy shows it");
	if (r < 0)
		return crf_log_errno(CRF_LOG_ERROR, -r, "/proc/self/mountinfo");
	m->dir = strdup(dir);
	return m->dir ? 0 : -ENOMEM;
}

static int add_move(struct cg_restore *rs, pid_t pid, pid_t tid, const Crf__Cgroup__Member *mb)
{
	struct cg_move *m;

	if (rs->n_moves == rs->cap_moves) {
		size_t cap = rs->cap_moves ? rs->cap_moves * 2 : 8;

		m = realloc(rs->moves, cap * sizeof(*m));
		if (!m)
			return -ENOMEM;
		rs->moves = m;
		rs->cap_moves = cap;
	}
	m = &rs->moves[rs->n_moves];
	*m = (struct cg_move){.pid = pid, .tid = tid, .fd = -1, .procs = -1};
	m->controllers = strdup(mb->controllers);
	m->path = cg_remap(rs, mb->controllers, mb->path);
	rs->n_moves++;
	return m->controllers && m->path ? 0 : -ENOMEM;
}

static bool same_place(const Crf__Cgroup__Member *const *v, size_t n, const Crf__Cgroup__Member *mb)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i]->controllers, mb->controllers))
			return !strcmp(v[i]->path, mb->path);
	return false;
}

/* The moves one saved process needs: its own, then its odd threads'. */
static int plan_task(struct cg_restore *rs, const Crf__Cgroup__TaskCgroups *t)
{
	char name[CG_PATH_MAX + 64];
	int r = 0;

	for (size_t i = 0; r >= 0 && i < t->n_members; i++) {
		const Crf__Cgroup__Member *mb = t->members[i];
		const struct cg_member *own = cg_find(&rs->self, mb->controllers);

		if (!own) {
			crf_error("pid %d: cgroup %s: this host has no such hierarchy (crf restore "
				  "is in none: /proc/self/cgroup)",
				  (int)t->pid,
				  cg_name(mb->controllers, mb->path, name, sizeof(name)));
			return -ENOENT;
		}
		r = add_move(rs, t->pid, 0, mb);
		/* Only where its cgroup is not crf's (as --cgroup-root puts it). */
		if (r >= 0 && !strcmp(own->path, rs->moves[rs->n_moves - 1].path)) {
			rs->n_moves--;
			free(rs->moves[rs->n_moves].path);
			free(rs->moves[rs->n_moves].controllers);
		}
	}
	for (size_t i = 0; r >= 0 && i < t->n_threads; i++) {
		const Crf__Cgroup__ThreadCgroups *th = t->threads[i];

		for (size_t j = 0; r >= 0 && j < th->n_members; j++)
			if (!same_place((const Crf__Cgroup__Member *const *)t->members,
					t->n_members, th->members[j]))
				r = add_move(rs, t->pid, th->tid, th->members[j]);
	}
	return r;
}

/*
 * A process goes into its cgroup v2 as it is created (clone3's
 * CLONE_INTO_CGROUP, ABI 1.6), so that it never runs outside it; its v1
 * cgroups and its threads' are joined in restore-task and restore-finish.
 */
static int clone_into(struct crf_ctx *ctx, struct cg_move *m)
{
	int r;

	if (*m->controllers || m->tid)
		return 0;
	m->fd = open(m->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (m->fd < 0)
		return refuse(m, errno, "cannot be opened to create the process in it");
	r = crf_rst_clone_into_cgroup(ctx, m->pid, m->fd);
	if (r < 0)
		return crf_log_errno(CRF_LOG_ERROR, -r,
				     "pid %d: cannot be created in its cgroup v2", (int)m->pid);
	return 0;
}

/* A process's v1 cgroup: its cgroup.procs opened now, in crf's mount namespace. */
static int open_procs(struct cg_move *m)
{
	char file[CG_PATH_MAX + 32];

	if (!*m->controllers || m->tid)
		return 0;
	snprintf(file, sizeof(file), "%s/%s", m->dir, cg_move_file(m));
	m->procs = open(file, O_WRONLY | O_CLOEXEC);
	return m->procs < 0 ? refuse(m, errno, "its cgroup.procs cannot be opened") : 0;
}

static int read_records(struct crf_ctx *ctx, struct cg_restore *rs)
{
	_cleanup_img_ struct crf_img *img = NULL;
	ProtobufCMessage *msg;
	int r;

	r = crf_img_open(crf_ctx_images(ctx), CG_IMG, &crf__cgroup__task_cgroups__descriptor, &img);
	while (r >= 0 && (r = crf_img_read(img, &msg)) > 0) {
		void *v = realloc(rs->tasks, (rs->n_tasks + 1) * sizeof(*rs->tasks));

		if (!v) {
			protobuf_c_message_free_unpacked(msg, NULL);
			r = crf_log_errno(CRF_LOG_ERROR, ENOMEM, "%s", CG_IMG);
			break;
		}
		rs->tasks = v;
		rs->tasks[rs->n_tasks++] = (Crf__Cgroup__TaskCgroups *)msg;
	}
	return r;
}

static int read_self(struct cg_restore *rs)
{
	_cleanup_free_ char *cg = NULL;
	int r = cg_read_text("/proc/self/cgroup", &cg);

	if (r >= 0)
		r = cg_parse(cg, &rs->self);
	if (r >= 0)
		r = cg_read_text("/proc/self/mountinfo", &rs->mountinfo);
	if (r >= 0)
		r = cg_mnt_fds_open(rs);
	if (r < 0)
		return crf_log_errno(CRF_LOG_ERROR, -r, "reading crf's own cgroups and mounts");
	return 0;
}

int cgroup_restore_prepare(struct crf_ctx *ctx)
{
	struct cg_restore *rs = calloc(1, sizeof(*rs));
	int r;

	if (!rs)
		return crf_log_errno(CRF_LOG_ERROR, ENOMEM, "restore");
	crf_ctx_set_priv(ctx, rs);
	r = cgroup_validate(crf_ctx_images(ctx));
	if (r >= 0)
		r = read_records(ctx, rs);
	if (r >= 0)
		r = read_self(rs);
	if (r >= 0)
		r = cg_manage_load(ctx, rs);
	if (r >= 0)
		r = cg_ns_load(ctx, rs);
	for (size_t i = 0; r >= 0 && i < rs->n_tasks; i++)
		r = plan_task(rs, rs->tasks[i]);
	if (r == -ENOMEM)
		crf_error("planning the cgroup moves: %s", strerror(ENOMEM));
	if (r >= 0)
		r = cg_manage(rs);
	for (size_t i = 0; r >= 0 && i < rs->n_moves; i++) {
		r = resolve(&rs->moves[i], rs->mountinfo);
		if (r >= 0)
			r = check_dir(&rs->moves[i]);
	}
	for (size_t i = 0; r >= 0 && i < rs->n_moves; i++)
		r = clone_into(ctx, &rs->moves[i]);
	for (size_t i = 0; r >= 0 && i < rs->n_moves; i++)
		r = open_procs(&rs->moves[i]);
	for (size_t i = 0; r >= 0 && i < rs->n_moves; i++)
		crf_debug("pid %d%s%.0d: to be moved into %s", (int)rs->moves[i].pid,
			  rs->moves[i].tid ? " thread " : "", (int)rs->moves[i].tid,
			  rs->moves[i].dir);
	return r;
}
