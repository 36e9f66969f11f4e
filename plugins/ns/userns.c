// SPDX-License-Identifier: GPL-2.0-only
/*
 * User namespaces (the "user" kind of CRF_OBJ_NS, this plugin's own
 * handler), the dump; the restore is userns-restore.c.  See
 * docs/ns-user-pid.md.
 *
 * Dump: once per namespace, userns-ID.img: its uid and gid maps, setgroups
 * and owner as its parent sees them (crf's, or for a nested one its parent,
 * read by a child of crf's that joins it), and the parent.  Per task, what
 * the restore cannot make is refused by name: a namespace without maps,
 * more than one thread, supplementary groups under "setgroups deny"; and in
 * every process (ns_userns_owners) a namespace owned by a user namespace
 * that is neither crf's nor its own, a PID namespace owned by its own, or
 * one of a kind its own cannot own here (time).  The core records each
 * task's ids as its own user namespace sees them (core/dump/creds-userns.c).
 *
 * Restore, in short: the first process of the namespace makes it at
 * restore-premap through a short-lived child and writes its maps from the
 * parent, but stays outside until the last moment: creating its children
 * and threads with their PIDs (clone3 set_tid) takes capabilities in the
 * user namespace that owns crf's PID namespace.  It joins just before its
 * restorer, which then sets its ids and capabilities inside.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/nsfs.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <crf/image.h>
#include <crf/log.h>
#include <crf/plugin.h>
#include <crf/restore.h>

#include "ns.h"
#include "userns.h"
#include "userns.pb-c.h"

void userns_image_name(char *buf, size_t len, uint64_t id)
{
	snprintf(buf, len, "userns-%llu.img", (unsigned long long)id);
}

int userns_fd_inode(int fd, uint64_t *ino)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	*ino = st.st_ino;
	return 0;
}

int userns_path_inode(const char *path, uint64_t *ino)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	*ino = st.st_ino;
	return 0;
}

int userns_read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return (int)n;
	}
	close(fd);
	buf[n] = '\0';
	return 0;
}

/* ---- dump ------------------------------------------------------------- */

static void free_map(Crf__Ns__IdExtent **e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(e[i]);
	free(e);
}

/* A map's text ("inside outside count" lines) into extents. */
static int parse_map(const char *text, Crf__Ns__IdExtent ***out, size_t *n_out)
{
	Crf__Ns__IdExtent **e = calloc(MAX_EXTENTS, sizeof(*e));
	unsigned long in, outside, count;
	const char *p;
	size_t n = 0;
	int used;

	if (!e)
		return -ENOMEM;
	for (p = text; sscanf(p, " %lu %lu %lu%n", &in, &outside, &count, &used) == 3; p += used) {
		if (n == MAX_EXTENTS)
			break;
		e[n] = malloc(sizeof(*e[n]));
		if (!e[n]) {
			free_map(e, n);
			return -ENOMEM;
		}
		crf__ns__id_extent__init(e[n]);
		e[n]->inside = (uint32_t)in;
		e[n]->outside = (uint32_t)outside;
		e[n]->count = (uint32_t)count;
		n++;
	}
	*out = e;
	*n_out = n;
	return 0;
}

/*
 * What the parent user namespace sees of a task's: its maps (the outside
 * ids are the parent's), setgroups and owner.  Read in that parent: by crf
 * when it is crf's, else by a child of crf's that joins it.
 */
struct parent_view {
	char uid_map[MAX_EXTENTS * 40], gid_map[MAX_EXTENTS * 40], setgroups[16];
	uid_t owner;
	int err; /* -errno of the first step that failed, in @what */
	char what[64];
};

static void read_view(pid_t pid, int fd, struct parent_view *v)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
	v->err = userns_read_text(path, v->uid_map, sizeof(v->uid_map));
	if (!v->err) {
		snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)pid);
		v->err = userns_read_text(path, v->gid_map, sizeof(v->gid_map));
	}
	if (!v->err) {
		snprintf(path, sizeof(path), "/proc/%d/setgroups", (int)pid);
		v->err = userns_read_text(path, v->setgroups, sizeof(v->setgroups));
	}
	/* By crf's fd on it: the task may not be open to a process of its parent. */
	if (!v->err) {
		snprintf(path, sizeof(path), "NS_GET_OWNER_UID");
		v->err = ioctl(fd, NS_GET_OWNER_UID, &v->owner) < 0 ? -errno : 0;
	}
	if (v->err)
		snprintf(v->what, sizeof(v->what), "%s", path);
}

/* @fd: the task's user namespace; @parent_fd: its parent, or -1 for crf's. */
static int parent_view(pid_t pid, int fd, int parent_fd, struct parent_view **out)
{
	struct parent_view *v =
		mmap(NULL, sizeof(*v), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t child;
	int st;

	if (v == MAP_FAILED)
		return crf_error_errno(errno, "mmap");
	*out = v;
	if (parent_fd < 0) {
		read_view(pid, fd, v);
		return 0;
	}
	child = fork();
	if (child == 0) {
		if (setns(parent_fd, CLONE_NEWUSER) < 0) {
			v->err = -errno;
			snprintf(v->what, sizeof(v->what), "setns into its parent");
		} else {
			read_view(pid, fd, v);
		}
		_exit(0);
	}
	if (child < 0)
		return crf_error_errno(errno, "fork");
	while (waitpid(child, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st))
		return crf_error_errno(EIO, "pid %d: the child reading its user namespace died",
				       (int)pid);
	return 0;
}

/*
 * The parent of user namespace @fd: its inode in *@parent, 0 when it is
 * crf's own, and an fd on it in *@pfd when it is not (else -1).
 */
static int ns_parent(int fd, uint64_t *parent, int *pfd)
{
	uint64_t mine = 0;
	int r;

	*pfd = ioctl(fd, NS_GET_PARENT);
	if (*pfd < 0)
		return -errno;
	r = userns_fd_inode(*pfd, parent);
	if (r >= 0)
		r = userns_path_inode("/proc/self/ns/user", &mine);
	if (r >= 0 && *parent == mine) {
		*parent = 0;
		close(*pfd);
		*pfd = -1;
	}
	return r;
}

static int write_image(struct crf_ctx *ctx, pid_t pid, const struct crf_ns_info *ni,
		       uint64_t parent, const struct parent_view *v)
{
	Crf__Ns__UserNs u = CRF__NS__USER_NS__INIT;
	struct crf_img *img;
	char name[64];
	int r;

	if (v->err)
		return crf_error_errno(v->err, "pid %d: user:[%llu]: %s", (int)pid,
				       (unsigned long long)ni->id, v->what);
	u.id = ni->id;
	u.owner = v->owner;
	u.setgroups_allow = !strncmp(v->setgroups, "allow", 5);
	u.has_parent = parent != 0;
	u.parent = parent;
	r = parse_map(v->uid_map, &u.uid_map, &u.n_uid_map);
	if (r >= 0)
		r = parse_map(v->gid_map, &u.gid_map, &u.n_gid_map);
	if (r >= 0 && (!u.n_uid_map || !u.n_gid_map))
		r = crf_error_errno(ENOTSUP,
				    "pid %d: user namespace user:[%llu] has no %s map: the "
				    "ids of its tasks cannot be set again in a new one",
				    (int)pid, (unsigned long long)ni->id,
				    u.n_uid_map ? "gid" : "uid");
	userns_image_name(name, sizeof(name), ni->id);
	if (r >= 0)
		r = crf_img_create(crf_ctx_images(ctx), name, &crf__ns__user_ns__descriptor, &img);
	if (r >= 0) {
		r = crf_img_write(img, &u.base);
		if (r < 0)
			crf_img_abort(img);
		else
			r = crf_img_close(img);
	}
	free_map(u.uid_map, u.n_uid_map);
	free_map(u.gid_map, u.n_gid_map);
	return r;
}

/* The number of entries of the "Groups:" line of /proc/@pid/status, or <0. */
static int count_groups(pid_t pid)
{
	char path[64], *text = malloc(65536), *p, *end;
	int n = 0, r;

	if (!text)
		return -ENOMEM;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	r = userns_read_text(path, text, 65536);
	p = r < 0 ? NULL : strstr(text, "\nGroups:");
	if (p) {
		p += strlen("\nGroups:");
		end = strchr(p, '\n');
		if (end)
			*end = '\0';
		for (; strtoul(p, &end, 10), end != p; p = end)
			n++;
	}
	free(text);
	return r < 0 ? crf_error_errno(r, "pid %d: %s", (int)pid, path) : n;
}

static int count_threads(pid_t pid)
{
	char path[64];
	struct stat st;

	/* A /proc/PID/task directory links one entry per thread, plus . and .. */
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (stat(path, &st) < 0)
		return crf_error_errno(errno, "pid %d: %s", (int)pid, path);
	return (int)st.st_nlink - 2;
}

/*
 * The restorer sets a task's rlimits once inside its user namespace, where
 * no hard limit can be raised (that takes CAP_SYS_RESOURCE in crf's): one
 * above crf's own (crf restore is expected to run with crf dump's limits)
 * would fail there.
 */
static int check_rlimits(pid_t pid, const struct crf_ns_info *ni)
{
	static const char *const names[] = {
		"CPU",	   "FSIZE", "DATA",  "STACK",	   "CORE",     "RSS",  "NPROC",	 "NOFILE",
		"MEMLOCK", "AS",    "LOCKS", "SIGPENDING", "MSGQUEUE", "NICE", "RTPRIO", "RTTIME",
	};
	/* /proc/PID/limits: prlimit() on a task of another user namespace takes more. */
	char path[64], *text = malloc(8192), *line, *save = NULL;
	struct rlimit its, mine;
	int i = -1, r;

	if (!text)
		return -ENOMEM;
	snprintf(path, sizeof(path), "/proc/%d/limits", (int)pid);
	r = userns_read_text(path, text, 8192);
	if (r < 0) {
		free(text);
		return crf_error_errno(r, "pid %d: %s", (int)pid, path);
	}
	/* "%-25s %-20s %-20s %-10s": a header, then one line per resource, in order. */
	for (line = strtok_r(text, "\n", &save); line && i < 16;
	     line = strtok_r(NULL, "\n", &save), i++) {
		char hard[32] = "";

		if (i < 0 || strlen(line) < 47 || sscanf(line + 47, "%31s", hard) != 1)
			continue;
		its.rlim_max =
			!strcmp(hard, "unlimited") ? RLIM_INFINITY : strtoull(hard, NULL, 10);
		if (getrlimit(i, &mine) < 0) {
			free(text);
			return crf_error_errno(errno, "getrlimit %d", i);
		}
		if (its.rlim_max == RLIM_INFINITY
			    ? mine.rlim_max != RLIM_INFINITY
			    : mine.rlim_max != RLIM_INFINITY && its.rlim_max > mine.rlim_max) {
			free(text);
			return crf_error_errno(
				ENOTSUP,
				"pid %d is in user namespace user:[%llu] with a hard RLIMIT_%s "
				"(%llu) above crf's (%llu): the restorer sets it inside that "
				"namespace, where it cannot be raised",
				(int)pid, (unsigned long long)ni->id, names[i],
				(unsigned long long)its.rlim_max,
				(unsigned long long)mine.rlim_max);
		}
	}
	free(text);
	return 0;
}

/* What the restore of task @pid in @ni cannot make, refused by name. */
static int check_task(pid_t pid, const struct crf_ns_info *ni, bool allow)
{
	int threads = count_threads(pid), groups;

	if (threads < 0)
		return threads;
	if (threads > 1)
		return crf_error_errno(
			ENOTSUP,
			"pid %d is in user namespace user:[%llu] and has %d threads: "
			"crf creates threads with their TIDs, which takes crf's user "
			"namespace, and a process with threads cannot join another",
			(int)pid, (unsigned long long)ni->id, threads);
	groups = check_rlimits(pid, ni);
	if (groups < 0)
		return groups;
	if (allow)
		return 0;
	groups = count_groups(pid);
	if (groups < 0)
		return groups;
	if (groups)
		return crf_error_errno(ENOTSUP,
				       "pid %d has %d supplementary groups in user namespace "
				       "user:[%llu], whose setgroups is \"deny\": a restored task "
				       "cannot set them there",
				       (int)pid, groups, (unsigned long long)ni->id);
	return 0;
}

/*
 * Two processes of one namespace neither of which inherits it: checked for
 * every kind at dump-task-data (share.c, which the restore joins or the dump
 * refuses); nothing is left to check at the handler's dispatch.
 */
int ns_check_first(pid_t pid, const struct crf_ns_info *ni)
{
	(void)pid;
	(void)ni;
	return 0;
}

/*
 * Nested in a user namespace not crf's: the restore makes it inside the one
 * its first process's parent restored, so the first process of the
 * namespace (its parent not in it) must have its parent in the parent
 * namespace.  (Another process of it that does not inherit it is refused by
 * share.c: user namespaces are not joined.)
 */
static int check_nested(pid_t pid, const struct crf_ns_info *ni)
{
	uint64_t parent = 0, its = 0;
	pid_t ppid = ns_share_ppid(pid);
	char path[64];
	int fd, pfd, r;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/ns/user", (int)pid, (int)ni->tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return crf_error_errno(errno, "pid %d: %s", (int)pid, path);
	r = ns_parent(fd, &parent, &pfd);
	close(fd);
	if (r < 0)
		return crf_error_errno(r,
				       "pid %d: user:[%llu]: NS_GET_PARENT (is it inside crf's?)",
				       (int)pid, (unsigned long long)ni->id);
	if (pfd >= 0)
		close(pfd);
	if (!parent)
		return 0;
	if (ppid < 0)
		return crf_error_errno(ppid, "pid %d: its parent", (int)pid);
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)ppid);
	if (ppid > 0 && ns_share_in_tree(ppid) && userns_path_inode(path, &its) == 0 &&
	    (its == ni->id || its == parent))
		return 0;
	return crf_error_errno(ENOTSUP,
			       "pid %d is the first process of user namespace user:[%llu], which "
			       "is nested in user:[%llu], and its parent process %d is not in "
			       "user:[%llu]%s: the restore makes a nested user namespace inside "
			       "the one its first process's parent restored",
			       (int)pid, (unsigned long long)ni->id, (unsigned long long)parent,
			       (int)ppid, (unsigned long long)parent,
			       ppid > 0 && ns_share_in_tree(ppid) ? "" : " (nor in the tree)");
}

int ns_userns_dump(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_ns_info *ni = obj->data;
	char path[64], name[64], text[32];
	struct parent_view *v = NULL;
	pid_t pid = obj->pid;
	uint64_t parent = 0;
	int fd, pfd, r;

	snprintf(path, sizeof(path), "/proc/%d/setgroups", (int)pid);
	r = userns_read_text(path, text, sizeof(text));
	if (r < 0)
		return crf_error_errno(r, "pid %d: %s", (int)pid, path);
	r = check_task(pid, ni, !strncmp(text, "allow", 5));
	if (r >= 0)
		r = check_nested(pid, ni);
	userns_image_name(name, sizeof(name), ni->id);
	/* Once per namespace: the tasks that share it are dispatched one by one. */
	if (r < 0 || faccessat(crf_imgdir_fd(crf_ctx_images(ctx)), name, F_OK, 0) == 0)
		return r;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/ns/user", (int)pid, (int)ni->tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return crf_error_errno(errno, "pid %d: %s", (int)pid, path);
	r = ns_parent(fd, &parent, &pfd);
	if (r < 0) {
		close(fd);
		return crf_error_errno(r,
				       "pid %d: user:[%llu]: NS_GET_PARENT (is it inside crf's?)",
				       (int)pid, (unsigned long long)ni->id);
	}
	r = parent_view(pid, fd, pfd, &v);
	close(fd);
	if (pfd >= 0)
		close(pfd);
	if (r >= 0)
		r = write_image(ctx, pid, ni, parent, v);
	munmap(v, sizeof(*v));
	return r;
}

/* The namespace kinds whose owner is checked: those /proc/PID/ns/ has, but user. */
static const char *const owned_kinds[] = {
	"mnt",
	"net",
	"uts",
	"ipc",
	"cgroup",
	"time",
	"time_for_children",
	"pid",
	"pid_for_children",
};

/* Those a restored user namespace may own: made inside it, then joined by pidfd. */
static const struct {
	const char *kind;
	int flag;
} inside_kinds[] = {
	{"mnt", CLONE_NEWNS},  {"net", CLONE_NEWNET},	    {"uts", CLONE_NEWUTS},
	{"ipc", CLONE_NEWIPC}, {"cgroup", CLONE_NEWCGROUP},
};

int userns_inside_flag(const char *kind)
{
	for (size_t i = 0; i < sizeof(inside_kinds) / sizeof(inside_kinds[0]); i++)
		if (!strcmp(inside_kinds[i].kind, kind))
			return inside_kinds[i].flag;
	return 0;
}

/* The inode of the user namespace that owns namespace file @path; -ENOENT: none there. */
static int owner_of(const char *path, uint64_t *owner)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ofd, r;

	if (fd < 0)
		return -errno;
	ofd = ioctl(fd, NS_GET_USERNS);
	r = ofd < 0 ? -errno : userns_fd_inode(ofd, owner);
	close(fd);
	if (ofd >= 0)
		close(ofd);
	if (r == -EPERM) {
		*owner = 0; /* above crf's */
		r = 0;
	}
	return r;
}

int ns_userns_owns(pid_t pid, const char *kind)
{
	uint64_t owner = 0, user = 0, mine = 0;
	char path[80];
	int r;

	if (!strcmp(kind, "user"))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, kind);
	r = owner_of(path, &owner);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return crf_error_errno(r, "pid %d: %s: NS_GET_USERNS", (int)pid, path);
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	r = userns_path_inode(path, &user);
	if (r >= 0)
		r = userns_path_inode("/proc/self/ns/user", &mine);
	if (r < 0)
		return crf_error_errno(r, "pid %d: %s", (int)pid, path);
	return owner == user && user != mine;
}

int ns_userns_owners(struct crf_ctx *ctx, pid_t pid)
{
	char path[80], mine[96], link[96], own[96], user[64];
	uint64_t owner = 0, own_user = 0, its_user = 0;
	ssize_t n;
	int r;

	(void)ctx;
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	r = userns_path_inode("/proc/self/ns/user", &own_user);
	if (r >= 0)
		r = userns_path_inode(path, &its_user);
	if (r < 0)
		return crf_error_errno(r, "pid %d: %s", (int)pid, path);
	for (size_t i = 0; i < sizeof(owned_kinds) / sizeof(owned_kinds[0]); i++) {
		const char *kind = owned_kinds[i];

		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, kind);
		n = readlink(path, link, sizeof(link) - 1);
		if (n < 0 && errno == ENOENT)
			continue;
		if (n < 0)
			return crf_error_errno(errno, "pid %d: %s", (int)pid, path);
		link[n] = '\0';
		snprintf(own, sizeof(own), "/proc/self/ns/%s", kind);
		n = readlink(own, mine, sizeof(mine) - 1);
		if (n >= 0) {
			mine[n] = '\0';
			if (!strcmp(mine, link))
				continue;
		}
		r = owner_of(path, &owner);
		if (r < 0)
			return crf_error_errno(r, "pid %d: %s: NS_GET_USERNS", (int)pid, path);
		if (owner == own_user)
			continue;
		snprintf(user, sizeof(user), owner ? "user:[%llu]" : "(one above crf's)",
			 (unsigned long long)owner);
		/* Its own restored user namespace: made inside it (claims.c, ns_userns_inside). */
		if (owner == its_user && userns_inside_flag(kind))
			continue;
		if (owner == its_user && !strncmp(kind, "pid", 3))
			return crf_error_errno(
				ENOTSUP,
				"pid %d: namespace %s is owned by its user namespace %s: a PID "
				"namespace made there cannot get the PIDs of crf's back (clone3 "
				"set_tid in crf's PID namespace takes crf's user namespace)",
				(int)pid, link, user);
		return crf_error_errno(ENOTSUP,
				       "pid %d: namespace %s is owned by user namespace %s, not "
				       "crf's%s: not supported",
				       (int)pid, link, user,
				       owner == its_user ? " (its own, but not for this kind)"
							 : " nor its own");
	}
	return 0;
}
