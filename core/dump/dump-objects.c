// SPDX-License-Identifier: GPL-2.0-only
/*
 * The objects of a frozen task that the core dispatches itself, before the
 * task is infected: so that when no enabled plugin saves one of them (its
 * plugin is disabled, or none knows its kind) the dump stops before any
 * parasite runs, with the registry's one message naming the task, the
 * object and the plugin that would have handled it.
 *
 * This runs after the freeze, not before: a task that still runs could
 * unshare() or setns() between the check and the dump.  Frozen, it cannot,
 * and nothing here needs more than /proc.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dump-objects.h"
#include "procfs.h"
#include "util.h"

/*
 * The namespace links checked against crf's own.  pid is not among them:
 * nested PID namespaces are the core's (a namespace init is forked with
 * CLONE_NEWPID); pid_for_children is checked against the task's own pid.
 */
static const char *const ns_kinds[] = {
	"net", "uts", "mnt", "ipc", "user", "cgroup", "time", "time_for_children",
};

struct objects {
	struct crf_plugin_set *set;
	struct crf_imgdir *dir;
	pid_t pid;
	/* crf's own: each ns_kinds[] link ("" where the kernel has no such kind) */
	char self_ns[ARRAY_SIZE(ns_kinds)][96];
	char self_cgroup[8192]; /* /proc/self/cgroup */
};

static int dispatch(struct objects *o, enum crf_object_class cls, const char *kind,
		    const char *desc, int id)
{
	const struct crf_object obj = {
		.cls = cls,
		.kind = kind,
		.desc = desc,
		.pid = o->pid,
		.id = id,
	};

	return plugin_set_dispatch(o->set, o->dir, &obj);
}

/* readlinkat() into @buf; -ENOENT for a namespace kind this kernel does not have. */
static int read_link_at(int dir, const char *path, char *buf, size_t len)
{
	ssize_t n = readlinkat(dir, path, buf, len - 1);

	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

static int read_link(const char *path, char *buf, size_t len)
{
	return read_link_at(AT_FDCWD, path, buf, len);
}

/* The inode of a namespace link ("net:[4026532281]"), 0 for "pid:[?]". */
static uint64_t ns_inode(const char *link)
{
	const char *p = strchr(link, '[');

	return p ? strtoull(p + 1, NULL, 10) : 0;
}

/* One namespace of thread @tid: dispatched when it differs from @mine. */
static int check_ns(struct objects *o, pid_t tid, const char *kind, const char *mine)
{
	struct crf_ns_info ni = {.size = sizeof(ni), .kind = kind, .tid = tid};
	char path[96], link[96], desc[192];
	struct crf_object obj;
	int r;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/ns/%s", (int)o->pid, (int)tid, kind);
	r = read_link(path, link, sizeof(link));
	if (r == -ENOENT && !mine)
		return 0;
	/*
	 * After unshare(CLONE_NEWPID) the kernel shows no pid_for_children
	 * link until the namespace's init is forked: a namespace nonetheless.
	 */
	if (r == -ENOENT && !strcmp(kind, "pid_for_children"))
		snprintf(link, sizeof(link), "pid:[?]");
	else if (r < 0)
		return crf_error_errno(r, "pid %d: %s", (int)o->pid, path);
	else if (mine && !strcmp(link, mine))
		return 0;
	ni.id = ns_inode(link);
	crf_ns_object(&ni, link, o->pid, desc, sizeof(desc), &obj);
	return plugin_set_dispatch(o->set, o->dir, &obj);
}

static int thread_ns(struct objects *o, pid_t tid)
{
	char path[96], own_pid[96];
	int r = 0;

	for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(ns_kinds); i++)
		r = check_ns(o, tid, ns_kinds[i], *o->self_ns[i] ? o->self_ns[i] : NULL);
	/* Children forked after unshare(CLONE_NEWPID) would go to another namespace. */
	snprintf(path, sizeof(path), "/proc/%d/task/%d/ns/pid", (int)o->pid, (int)tid);
	if (r >= 0 && (r = read_link(path, own_pid, sizeof(own_pid))) < 0)
		return crf_error_errno(r, "pid %d: %s", (int)o->pid, path);
	if (r >= 0)
		r = check_ns(o, tid, "pid_for_children", own_pid);
	return r;
}

/* What the threads are compared with: crf's own namespaces and cgroups. */
static int read_self(struct objects *o)
{
	_cleanup_free_ char *cg = NULL;
	char path[64];
	int r;

	for (size_t i = 0; i < ARRAY_SIZE(ns_kinds); i++) {
		snprintf(path, sizeof(path), "/proc/self/ns/%s", ns_kinds[i]);
		r = read_link(path, o->self_ns[i], sizeof(o->self_ns[i]));
		if (r < 0 && r != -ENOENT)
			return crf_error_errno(r, "%s", path);
		if (r < 0)
			o->self_ns[i][0] = '\0';
	}
	r = crf_read_file("/proc/self/cgroup", &cg);
	if (r < 0)
		return crf_error_errno(r, "/proc/self/cgroup");
	if (strlen(cg) >= sizeof(o->self_cgroup))
		return crf_error_errno(ENAMETOOLONG, "/proc/self/cgroup");
	strcpy(o->self_cgroup, cg);
	return 0;
}

int cgroup_line_split(char *line, const char **controllers, const char **path)
{
	char *c = strchr(line, ':');
	char *p = c ? strchr(c + 1, ':') : NULL;

	if (!c || c == line || !p || p[1] != '/')
		return -EINVAL;
	*p = '\0';
	*controllers = c + 1;
	*path = p + 1;
	return 0;
}

/* crf's own path in the hierarchy of @controllers, or NULL. */
static const char *self_path(const struct objects *o, const char *controllers, char *buf,
			     size_t len)
{
	const char *l = o->self_cgroup, *c, *p;

	while (*l) {
		size_t n = strcspn(l, "\n");

		snprintf(buf, len, "%.*s", (int)n, l);
		if (cgroup_line_split(buf, &c, &p) == 0 && !strcmp(c, controllers))
			return p;
		l += n + (l[n] == '\n');
	}
	return NULL;
}

/* Each cgroup of thread @tid that is not crf's own in its hierarchy. */
static int thread_cgroups(struct objects *o, pid_t tid)
{
	_cleanup_free_ char *text = NULL;
	char path[96], desc[4200], mine[4200];
	const char *c, *p, *own;
	char *line, *save;
	int r;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/cgroup", (int)o->pid, (int)tid);
	r = crf_read_file(path, &text);
	if (r < 0)
		return crf_error_errno(r, "pid %d: %s", (int)o->pid, path);
	for (line = strtok_r(text, "\n", &save); r >= 0 && line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (cgroup_line_split(line, &c, &p) < 0)
			return crf_error_errno(EINVAL, "pid %d: %s: cannot parse '%s'", (int)o->pid,
					       path, line);
		own = self_path(o, c, mine, sizeof(mine));
		if (own && !strcmp(own, p))
			continue;
		snprintf(desc, sizeof(desc), "%s:%s%s", *c ? c : "v2", p,
			 tid == o->pid ? "" : " (a thread's)");
		r = dispatch(o, CRF_OBJ_CGROUP, *c ? "v1" : "v2", desc, tid);
	}
	return r;
}

/* Namespaces, then cgroups, of every thread of the (frozen) process. */
static int threads(struct objects *o)
{
	char path[64];
	struct dirent *e;
	int r = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)o->pid);
	d = opendir(path);
	if (!d)
		return crf_error_errno(errno, "pid %d: %s", (int)o->pid, path);
	for (int pass = 0; r >= 0 && pass < 2; pass++) {
		rewinddir(d);
		while (r >= 0 && (e = readdir(d))) {
			pid_t tid = (pid_t)atoi(e->d_name);

			if (tid > 0)
				r = pass ? thread_cgroups(o, tid) : thread_ns(o, tid);
		}
	}
	closedir(d);
	return r;
}

/* The fd table, named by its lowest fd, if the process has any. */
static int fd_table(struct objects *o)
{
	char path[64], name[32], link[512], desc[600];
	int fd = -1, n = 0, r;
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)o->pid);
	d = opendir(path);
	if (!d)
		return crf_error_errno(errno, "pid %d: %s", (int)o->pid, path);
	while ((e = readdir(d)))
		if (e->d_name[0] >= '0' && e->d_name[0] <= '9') {
			n++;
			if (fd < 0 || atoi(e->d_name) < fd)
				fd = atoi(e->d_name);
		}
	snprintf(name, sizeof(name), "%d", fd);
	r = fd < 0 ? 0 : read_link_at(dirfd(d), name, link, sizeof(link));
	closedir(d);
	if (fd < 0)
		return 0;
	if (r < 0)
		return crf_error_errno(r, "pid %d: fd %d", (int)o->pid, fd);
	if (n > 1)
		snprintf(desc, sizeof(desc), "fd %d (%s) and %d more", fd, link, n - 1);
	else
		snprintf(desc, sizeof(desc), "fd %d (%s)", fd, link);
	return dispatch(o, CRF_OBJ_FDTABLE, "fdtable", desc, fd);
}

/*
 * One line of /proc/PID/maps: "START-END PERMS OFFSET MAJOR:MINOR INODE   NAME",
 * dispatched with its crf_vma_info (crf/plugin.h, ABI 1.5) as data.
 */
static int vma(struct objects *o, char *line, int idx)
{
	unsigned long long start, end, pgoff, inode;
	struct crf_vma_info vi = {.size = sizeof(vi)};
	struct crf_object obj;
	char perms[8], desc[4200];
	int name_at = 0;

	line[strcspn(line, "\n")] = '\0';
	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &pgoff,
		   &vi.dev_major, &vi.dev_minor, &inode, &name_at) != 7 ||
	    !name_at || strlen(perms) != 4)
		return crf_error_errno(EINVAL, "pid %d: /proc/%d/maps: cannot parse '%s'",
				       (int)o->pid, (int)o->pid, line);
	vi.start = start;
	vi.end = end;
	vi.pgoff = pgoff;
	vi.inode = inode;
	vi.prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
		  (perms[2] == 'x' ? PROT_EXEC : 0);
	vi.flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
	vi.path = line + name_at;
	crf_vma_object(&vi, o->pid, idx, desc, sizeof(desc), &obj);
	return plugin_set_dispatch(o->set, o->dir, &obj);
}

static int mappings(struct objects *o)
{
	char path[64];
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	int r = 0, idx = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)o->pid);
	f = fopen(path, "re");
	if (!f)
		return crf_error_errno(errno, "pid %d: %s", (int)o->pid, path);
	while (r >= 0 && getline(&line, &cap, f) > 0)
		r = vma(o, line, idx++);
	if (r >= 0 && ferror(f))
		return crf_error_errno(EIO, "pid %d: %s", (int)o->pid, path);
	return r;
}

int crf_dump_task_objects(struct crf_plugin_set *set, struct crf_imgdir *dir, pid_t pid)
{
	_cleanup_free_ struct objects *o = calloc(1, sizeof(*o));
	int r;

	if (!o)
		return crf_error_errno(ENOMEM, "pid %d", (int)pid);
	o->set = set;
	o->dir = dir;
	o->pid = pid;
	r = read_self(o);
	if (r >= 0)
		r = threads(o);
	if (r >= 0)
		r = fd_table(o);
	if (r >= 0)
		r = mappings(o);
	return r;
}
