// SPDX-License-Identifier: GPL-2.0-only
/*
 * The cgroup v2 freezer for crf_freeze().  Freezing a cgroup stops every
 * task in it at once, so no thread can clone or exit while crf seizes them
 * one by one; it is used only when the target is alone in its cgroup,
 * since it would stop everything else there too.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <crf/log.h>
#include <crf/mountinfo.h>

#include "freeze-cgroup.h"
#include "procfs.h"
#include "util.h"

/* The "0::PATH" line of /proc/PID/cgroup: the cgroup v2 path. */
static int v2_path(pid_t pid, char **path)
{
	_cleanup_free_ char *text = NULL;
	char file[64];
	char *line;
	int r;

	snprintf(file, sizeof(file), "/proc/%d/cgroup", (int)pid);
	r = crf_read_file(file, &text);
	if (r == -ENOENT)
		return crf_error_errno(ESRCH, "pid %d", (int)pid);
	if (r < 0)
		return crf_error_errno(r, "%s", file);
	for (line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		if (!strncmp(line, "0::", 3)) {
			*path = strdup(line + 3);
			return *path ? 0 : -ENOMEM;
		}
	}
	return -ENOENT;
}

static int cgroup2_mount(char *mnt, size_t len)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return crf_error_errno(errno, "/proc/self/mountinfo");
	return crf_cgroup2_mount_from_mountinfo(f, mnt, len);
}

/* Is any cgroup below @dir populated?  (Freezing @dir would stop it too.) */
static bool populated_below(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	bool busy = false;

	if (!d)
		return false;
	while (!busy && (e = readdir(d))) {
		_cleanup_free_ char *events = NULL;
		_cleanup_free_ char *path = NULL;

		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		path = xasprintf("%s/%s/cgroup.events", dir, e->d_name);
		if (path && crf_read_file(path, &events) >= 0)
			busy = strstr(events, "populated 1") != NULL;
	}
	closedir(d);
	return busy;
}

/* Is @pid the only process in DIR/cgroup.procs? */
static bool alone(const char *dir, pid_t pid)
{
	_cleanup_free_ char *procs = NULL;
	_cleanup_free_ char *path = xasprintf("%s/cgroup.procs", dir);
	char *end;

	if (!path || crf_read_file(path, &procs) < 0)
		return false;
	return strtol(procs, &end, 10) == pid && (*end == '\n' || !*end) && (!*end || !end[1]);
}

static int read_cg_file(const char *dir, const char *name, char **text)
{
	_cleanup_free_ char *path = xasprintf("%s/%s", dir, name);

	if (!path)
		return -ENOMEM;
	return crf_read_file(path, text);
}

int cgroup_of_lone(pid_t pid, char *dir, size_t len, char *why, size_t why_len)
{
	_cleanup_free_ char *rel = NULL;
	_cleanup_free_ char *freeze = NULL;
	char mnt[4096];
	int r;

	r = v2_path(pid, &rel);
	if (r == -ENOENT || (r >= 0 && !strcmp(rel, "/"))) {
		snprintf(why, why_len, "pid %d is in the root cgroup v2 (or none)", (int)pid);
		return -EBUSY;
	}
	if (r < 0)
		return r;
	r = cgroup2_mount(mnt, sizeof(mnt));
	if (r < 0) {
		snprintf(why, why_len, "no cgroup2 mount found: %s", strerror(-r));
		return -EBUSY;
	}
	if ((size_t)snprintf(dir, len, "%s%s", mnt, rel) >= len)
		return crf_error_errno(ENAMETOOLONG, "cgroup %s%s", mnt, rel);
	if (read_cg_file(dir, "cgroup.freeze", &freeze) < 0) {
		snprintf(why, why_len, "%s has no cgroup.freeze", dir);
		return -EBUSY;
	}
	/* Already frozen by someone else: thawing it afterwards would be wrong. */
	if (freeze[0] != '0') {
		snprintf(why, why_len, "%s is frozen already", dir);
		return -EBUSY;
	}
	if (!alone(dir, pid) || populated_below(dir)) {
		snprintf(why, why_len, "%s holds other processes than pid %d", dir, (int)pid);
		return -EBUSY;
	}
	return 0;
}

static int write_freeze(const char *dir, const char *val)
{
	_cleanup_free_ char *path = xasprintf("%s/cgroup.freeze", dir);
	_cleanup_close_ int fd = -1;

	if (!path)
		return -ENOMEM;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, val, 1) != 1)
		return crf_error_errno(errno, "writing %s to %s", val, path);
	return 0;
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000L + (t.tv_nsec - t0->tv_nsec) / 1000000L;
}

/*
 * cgroup.events changes are signalled to poll() as POLLPRI (kernfs notify);
 * the file is read again from the start after each one.
 */
static int wait_frozen(const char *path, int timeout_ms)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct timespec t0;
	char buf[256];
	ssize_t n;

	if (fd < 0)
		return crf_error_errno(errno, "%s", path);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd pfd = {.fd = fd, .events = POLLPRI};
		long left;

		n = pread(fd, buf, sizeof(buf) - 1, 0);
		if (n < 0)
			return crf_error_errno(errno, "%s", path);
		buf[n] = '\0';
		if (strstr(buf, "frozen 1"))
			return 0;
		left = timeout_ms - ms_since(&t0);
		if (left <= 0)
			return crf_error_errno(ETIMEDOUT, "%s: not frozen after %d ms", path,
					       timeout_ms);
		if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
			return crf_error_errno(errno, "poll %s", path);
	}
}

int crf_cgroup_freeze(const char *dir, int timeout_ms)
{
	_cleanup_free_ char *events = xasprintf("%s/cgroup.events", dir);
	int r;

	if (!events)
		return -ENOMEM;
	r = write_freeze(dir, "1");
	if (r < 0)
		return r;
	r = wait_frozen(events, timeout_ms);
	if (r < 0)
		cgroup_thaw(dir);
	return r;
}

int cgroup_thaw(const char *dir)
{
	return write_freeze(dir, "0");
}

/*
 * The cgroup freezer for a whole tree: used when the tree is exactly the
 * processes of a cgroup v2 subtree (every process there is of the tree,
 * and the tree has none elsewhere).  The subtree is the deepest cgroup
 * holding the cgroups of every process of the tree, found by a first walk
 * of the running tree (/proc/PID/task/TID/children); once it is frozen, the
 * tree is walked again with ptrace (pstree-freeze.c), the walk is final at
 * its first pass, and the processes of the subtree must be the tree's.
 */

static int pid_add(struct cgroup_pids *s, pid_t pid)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		pid_t *v = reallocarray(s->v, cap, sizeof(*v));

		if (!v)
			return crf_error_errno(ENOMEM, "pid list");
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = pid;
	return 0;
}

bool cgroup_pids_has(const struct cgroup_pids *s, pid_t pid)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i] == pid)
			return true;
	return false;
}

void cgroup_pids_free(struct cgroup_pids *s)
{
	free(s->v);
	*s = (struct cgroup_pids){0};
}

/* The children of every thread of @pid, appended to @s (gone: nothing). */
static int add_kids(pid_t pid, struct cgroup_pids *s)
{
	_cleanup_free_ char *dir = xasprintf("/proc/%d/task", (int)pid);
	DIR *d = dir ? opendir(dir) : NULL;
	struct dirent *e;
	int r = 0;

	if (!d)
		return dir ? 0 : -ENOMEM;
	while (r >= 0 && (e = readdir(d))) {
		_cleanup_free_ char *path = NULL, *text = NULL;
		char *p, *end;

		if (e->d_name[0] == '.')
			continue;
		path = xasprintf("%s/%s/children", dir, e->d_name);
		if (!path || crf_read_file(path, &text) < 0)
			continue;
		for (p = text;; p = end) {
			long v = strtol(p, &end, 10);

			if (end == p)
				break;
			if (!cgroup_pids_has(s, (pid_t)v))
				r = pid_add(s, (pid_t)v);
		}
	}
	closedir(d);
	return r;
}

/* The thread group of thread @tid (gone: 0). */
static pid_t tgid_of(pid_t tid)
{
	_cleanup_free_ char *text = NULL, *path = xasprintf("/proc/%d/status", (int)tid);
	const char *t;

	if (!path || crf_read_file(path, &text) < 0 || !(t = strstr(text, "\nTgid:")))
		return 0;
	return (pid_t)atoi(t + 6);
}

/* Every process of DIR/cgroup.procs and its descendants' into @s. */
static int subtree_procs(const char *dir, struct cgroup_pids *s, int depth)
{
	_cleanup_free_ char *procs = NULL;
	_cleanup_free_ char *path = xasprintf("%s/cgroup.procs", dir);
	DIR *d;
	struct dirent *e;
	char *p, *end;
	bool threads;
	int r;

	if (!path)
		return -ENOMEM;
	if (depth > 64)
		return crf_error_errno(ELOOP, "%s: cgroups nested too deep", dir);
	r = crf_read_file(path, &procs);
	/* A threaded cgroup lists no processes: its threads', by their thread group. */
	threads = r == -EOPNOTSUPP;
	if (threads) {
		free(path);
		path = xasprintf("%s/cgroup.threads", dir);
		r = path ? crf_read_file(path, &procs) : -ENOMEM;
	}
	if (r < 0)
		return crf_error_errno(r, "%s", path);
	for (p = procs;; p = end) {
		long v = strtol(p, &end, 10);

		if (end == p)
			break;
		if (threads)
			v = tgid_of((pid_t)v);
		if (v > 0 && !cgroup_pids_has(s, (pid_t)v) && (r = pid_add(s, (pid_t)v)) < 0)
			return r;
	}
	d = opendir(dir);
	if (!d)
		return crf_error_errno(errno, "%s", dir);
	while (r >= 0 && (e = readdir(d))) {
		_cleanup_free_ char *sub = NULL;

		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		sub = xasprintf("%s/%s", dir, e->d_name);
		r = sub ? subtree_procs(sub, s, depth + 1) : -ENOMEM;
	}
	closedir(d);
	return r;
}

/* The deepest cgroup path holding @a and @b, into @a. */
static void common_cgroup(char *a, const char *b)
{
	size_t end = 1;

	for (size_t i = 1;; i++) {
		if ((a[i] == '/' || !a[i]) && (b[i] == '/' || !b[i]) && !strncmp(a, b, i))
			end = i;
		if (!a[i] || !b[i] || a[i] != b[i])
			break;
	}
	a[end] = '\0';
}

/* Is @name one of the comma-separated @list? */
static bool has_controller(const char *list, const char *name)
{
	size_t len = strlen(name);

	for (const char *s = list; *s;) {
		size_t n = strcspn(s, ",");

		if (n == len && !strncmp(s, name, len))
			return true;
		s += n + (s[n] == ',');
	}
	return false;
}

/*
 * Is the cgroup of @pid frozen by someone else, v2 (its cgroup.freeze, or
 * cgroup.events: an ancestor's) or v1 (freezer.state not THAWED)?  A frozen
 * task does not run crf's parasite, and comes back running: refused.
 */
static int refuse_frozen(pid_t pid, const char *v2mnt, const char *rel)
{
	_cleanup_free_ char *text = NULL, *file = xasprintf("/proc/%d/cgroup", (int)pid);
	_cleanup_free_ char *freeze = NULL, *events = NULL, *state = NULL;
	char dir[4096];

	if (!file)
		return -ENOMEM;
	if (rel && snprintf(dir, sizeof(dir), "%s%s", v2mnt, rel) < (int)sizeof(dir) &&
	    ((read_cg_file(dir, "cgroup.freeze", &freeze) >= 0 && freeze[0] == '1') ||
	     (read_cg_file(dir, "cgroup.events", &events) >= 0 && strstr(events, "frozen 1"))))
		return crf_error_errno(
			EOPNOTSUPP,
			"pid %d: its cgroup v2 %s is frozen, not by crf: a frozen task "
			"runs no parasite and would come back running (thaw it first)",
			(int)pid, dir);
	if (crf_read_file(file, &text) < 0)
		return 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char *c = strchr(line, ':'), *p = c ? strchr(c + 1, ':') : NULL;
		_cleanup_fclose_ FILE *f = NULL;

		if (!p || !strcmp(p + 1, "/"))
			continue; /* the root cgroup has no freezer.state */
		*p = '\0';
		if (!has_controller(c + 1, "freezer") || !(f = fopen("/proc/self/mountinfo", "re")))
			continue;
		if (crf_cgroup_dir_from_mountinfo(f, c + 1, p + 1, dir, sizeof(dir)) >= 0 &&
		    read_cg_file(dir, "freezer.state", &state) >= 0 && strncmp(state, "THAWED", 6))
			return crf_error_errno(
				EOPNOTSUPP,
				"pid %d: its cgroup freezer:%s (%s) is frozen, not by "
				"crf: a frozen task runs no parasite and would come "
				"back running (thaw it first)",
				(int)pid, p + 1, dir);
	}
	return 0;
}

int cgroup_tree_plan(pid_t root, char *dir, size_t len, char *why, size_t why_len)
{
	struct cgroup_pids tree = {0}, in = {0};
	_cleanup_free_ char *common = NULL, *freeze = NULL, *events = NULL;
	char mnt[4096];
	int r = pid_add(&tree, root);

	*why = '\0';

	/* The running tree: t.n grows as children are found. */
	for (size_t i = 0; r >= 0 && i < tree.n; i++)
		r = add_kids(tree.v[i], &tree);
	if (cgroup2_mount(mnt, sizeof(mnt)) < 0)
		mnt[0] = '\0';
	for (size_t i = 0; r >= 0 && i < tree.n; i++) {
		_cleanup_free_ char *rel = NULL;
		int v2 = v2_path(tree.v[i], &rel);

		if (v2 == -ESRCH && i)
			continue; /* gone meanwhile */
		r = refuse_frozen(tree.v[i], mnt, *mnt && v2 >= 0 ? rel : NULL);
		if (r >= 0 && v2 < 0 && v2 != -ENOENT)
			r = v2;
		if (r < 0 || *why)
			continue;
		if (v2 == -ENOENT || !*mnt) {
			snprintf(why, why_len, "pid %d is in no cgroup v2 crf can reach",
				 (int)tree.v[i]);
		} else if (!common) {
			common = TAKE_PTR(rel);
		} else {
			common_cgroup(common, rel);
		}
	}
	if (r >= 0 && !*why && !strcmp(common, "/"))
		snprintf(why, why_len, "the tree's cgroups v2 are the root's or below it only");
	if (r >= 0 && *why)
		r = -EBUSY;
	if (r >= 0 && (size_t)snprintf(dir, len, "%s%s", mnt, common) >= len)
		r = crf_error_errno(ENAMETOOLONG, "cgroup %s%s", mnt, common);
	if (r >= 0 && (read_cg_file(dir, "cgroup.freeze", &freeze) < 0 ||
		       read_cg_file(dir, "cgroup.events", &events) < 0)) {
		snprintf(why, why_len, "%s has no cgroup.freeze", dir);
		r = -EBUSY;
	}
	/* Frozen by someone else (or below a frozen ancestor): it stays as it is. */
	if (r >= 0 && (freeze[0] != '0' || strstr(events, "frozen 1"))) {
		snprintf(why, why_len, "%s is frozen already", dir);
		r = -EBUSY;
	}
	if (r >= 0)
		r = subtree_procs(dir, &in, 0);
	for (size_t i = 0; r >= 0 && i < in.n; i++) {
		if (!cgroup_pids_has(&tree, in.v[i])) {
			snprintf(why, why_len, "%s holds pid %d, which is not of the tree", dir,
				 (int)in.v[i]);
			r = -EBUSY;
		}
	}
	cgroup_pids_free(&tree);
	cgroup_pids_free(&in);
	return r;
}

int cgroup_tree_exact(const char *dir, const struct cgroup_pids *tree, char *why, size_t why_len)
{
	struct cgroup_pids in = {0};
	int r = subtree_procs(dir, &in, 0);

	for (size_t i = 0; r >= 0 && i < in.n; i++) {
		if (!cgroup_pids_has(tree, in.v[i])) {
			snprintf(why, why_len, "%s holds pid %d, which is not of the tree", dir,
				 (int)in.v[i]);
			r = -EBUSY;
		}
	}
	for (size_t i = 0; r >= 0 && i < tree->n; i++) {
		if (tree->v[i] > 0 && !cgroup_pids_has(&in, tree->v[i])) {
			snprintf(why, why_len, "pid %d of the tree is not in %s", (int)tree->v[i],
				 dir);
			r = -EBUSY;
		}
	}
	cgroup_pids_free(&in);
	return r;
}
