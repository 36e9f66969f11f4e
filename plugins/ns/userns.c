// SPDX-License-Identifier: GPL-2.0-only
/*
 * User namespaces (the "user" kind of CRF_OBJ_NS, this plugin's own
 * handler).  See docs/ns-user-pid.md.
 *
 * Dump: once per namespace, userns-ID.img: its uid and gid maps, setgroups,
 * and its owner, all as crf's user namespace sees them, which must be the
 * namespace's parent (a nested one is refused).  Per task, what the restore
 * cannot make is refused by name: a namespace without maps, more than one
 * thread (see below), supplementary groups under "setgroups deny", a
 * namespace of another kind owned by it (every process: ns_userns_owners).
 * The core records each task's ids as its own user namespace sees them
 * (core/dump/creds-userns.c).
 *
 * Restore: in the first process of the namespace, at restore-premap, a
 * short-lived child takes the owner's uid and unshares one; the process
 * (still crf's, in crf's user namespace) writes its maps, keeps it open, and
 * the child exits.  The process stays outside until the last moment:
 * creating its children (clone3 set_tid) and its threads takes capabilities
 * in the user namespace that owns their PID namespaces, which is crf's.  At
 * restore-task a child joins the namespace and waits; once the fds are
 * placed, just before the restorer, the process opens the namespace through
 * that child, which is killed and reaped, and joins it (setns); the restorer
 * then sets the ids and capabilities inside it.  Every process of the tree
 * that was in the namespace does the same.
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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <crf/image.h>
#include <crf/log.h>
#include <crf/plugin.h>
#include <crf/restore.h>

#include "ns.h"
#include "userns.pb-c.h"

#define MAX_EXTENTS 340 /* the kernel's limit per map */

static void image_name(char *buf, size_t len, uint64_t id)
{
	snprintf(buf, len, "userns-%llu.img", (unsigned long long)id);
}

static int fd_inode(int fd, uint64_t *ino)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	*ino = st.st_ino;
	return 0;
}

static int path_inode(const char *path, uint64_t *ino)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	*ino = st.st_ino;
	return 0;
}

static int read_text(const char *path, char *buf, size_t len)
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
	for (p = text; sscanf(p, " %lu %lu %lu%n", &in, &outside, &count, &used) == 3;
	     p += used) {
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
	v->err = read_text(path, v->uid_map, sizeof(v->uid_map));
	if (!v->err) {
		snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)pid);
		v->err = read_text(path, v->gid_map, sizeof(v->gid_map));
	}
	if (!v->err) {
		snprintf(path, sizeof(path), "/proc/%d/setgroups", (int)pid);
		v->err = read_text(path, v->setgroups, sizeof(v->setgroups));
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
	struct parent_view *v = mmap(NULL, sizeof(*v), PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
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
	uint64_t mine;
	int r;

	*pfd = ioctl(fd, NS_GET_PARENT);
	if (*pfd < 0)
		return -errno;
	r = fd_inode(*pfd, parent);
	if (r >= 0)
		r = path_inode("/proc/self/ns/user", &mine);
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
	image_name(name, sizeof(name), ni->id);
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
	r = read_text(path, text, 65536);
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

/* What the restore of task @pid in @ni cannot make, refused by name. */
static int check_task(pid_t pid, const struct crf_ns_info *ni, bool allow)
{
	int threads = count_threads(pid), groups;

	if (threads < 0)
		return threads;
	if (threads > 1)
		return crf_error_errno(ENOTSUP,
				       "pid %d is in user namespace user:[%llu] and has %d threads: "
				       "crf creates threads with their TIDs, which takes crf's user "
				       "namespace, and a process with threads cannot join another",
				       (int)pid, (unsigned long long)ni->id, threads);
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

int ns_userns_dump(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_ns_info *ni = obj->data;
	char path[64], name[64], text[32];
	struct parent_view *v = NULL;
	pid_t pid = obj->pid;
	uint64_t parent;
	int fd, pfd, r;

	snprintf(path, sizeof(path), "/proc/%d/setgroups", (int)pid);
	r = read_text(path, text, sizeof(text));
	if (r < 0)
		return crf_error_errno(r, "pid %d: %s", (int)pid, path);
	r = check_task(pid, ni, !strncmp(text, "allow", 5));
	image_name(name, sizeof(name), ni->id);
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
		return crf_error_errno(r, "pid %d: user:[%llu]: NS_GET_PARENT (is it inside crf's?)",
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
	"mnt", "net", "uts", "ipc", "cgroup", "time", "time_for_children", "pid",
	"pid_for_children",
};

/* Those a restored user namespace may own: made inside it, then joined by pidfd. */
static const struct {
	const char *kind;
	int flag;
} inside_kinds[] = {
	{"mnt", CLONE_NEWNS},	  {"net", CLONE_NEWNET},	 {"uts", CLONE_NEWUTS},
	{"ipc", CLONE_NEWIPC},	  {"cgroup", CLONE_NEWCGROUP},
};

static int inside_flag(const char *kind)
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
	r = ofd < 0 ? -errno : fd_inode(ofd, owner);
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
	uint64_t owner, user, mine;
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
	r = path_inode(path, &user);
	if (r >= 0)
		r = path_inode("/proc/self/ns/user", &mine);
	if (r < 0)
		return crf_error_errno(r, "pid %d: %s", (int)pid, path);
	return owner == user && user != mine;
}

int ns_userns_owners(struct crf_ctx *ctx, pid_t pid)
{
	char path[80], mine[96], link[96], own[96], user[64];
	uint64_t owner, own_user, its_user;
	ssize_t n;
	int r;

	(void)ctx;
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	r = path_inode("/proc/self/ns/user", &own_user);
	if (r >= 0)
		r = path_inode(path, &its_user);
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
		if (owner == its_user && inside_flag(kind))
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

/* ---- restore ---------------------------------------------------------- */

/* Inherited through fork: the restored namespace, and which process joins it. */
static struct {
	int fd;		/* the user namespace now, or -1 */
	uint64_t id;	/* its inode at the dump */
	bool deny;	/* its setgroups is "deny" */
	pid_t enter;	/* the process that joins it before its restorer */
	pid_t holder;	/* the child that holds it for that, in that process */
} us = {.fd = -1};

static int write_map(pid_t pid, const char *which, Crf__Ns__IdExtent *const *e, size_t n)
{
	char path[64], *text = malloc(MAX_EXTENTS * 40 + 1);
	size_t len = 0;
	ssize_t w;
	int fd;

	if (!text)
		return -ENOMEM;
	for (size_t i = 0; i < n && i < MAX_EXTENTS; i++)
		len += (size_t)snprintf(text + len, 40, "%u %u %u\n", e[i]->inside,
					e[i]->outside, e[i]->count);
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, which);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	w = fd < 0 ? -1 : write(fd, text, len);
	w = w < 0 ? -errno : w;
	if (fd >= 0)
		close(fd);
	free(text);
	return w == (ssize_t)len ? 0 : w < 0 ? (int)w : -EIO;
}

static int read_image(struct crf_ctx *ctx, uint64_t id, Crf__Ns__UserNs **u)
{
	struct crf_img *img;
	char name[64];
	int r;

	image_name(name, sizeof(name), id);
	r = crf_img_open(crf_ctx_images(ctx), name, &crf__ns__user_ns__descriptor, &img);
	if (r < 0)
		return r;
	r = crf_img_read(img, (ProtobufCMessage **)u);
	crf_img_close(img);
	if (r == 0)
		return crf_error_errno(EBADMSG, "%s: no record", name);
	if (r > 0 && (*u)->id != id) {
		protobuf_c_message_free_unpacked(&(*u)->base, NULL);
		return crf_error_errno(EBADMSG, "%s: the record is of user:[%llu]", name,
				       (unsigned long long)(*u)->id);
	}
	return r < 0 ? r : 0;
}

/*
 * The child that makes the namespace: in its parent (@parent_fd, -1: crf's),
 * with the owner's uid and a gid the parent maps (the kernel wants both; the
 * group a namespace keeps is not readable, so not restored: the first of its
 * gid map), unshare, then wait to be told.
 */
static _Noreturn void maker(uid_t owner, gid_t group, int parent_fd, int ready, int go)
{
	/* Its PID as this /proc names it: the process may be in another PID namespace. */
	char self[16] = {0}, c = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (readlink("/proc/self", self + 1, sizeof(self) - 2) < 0 ||
	    (parent_fd >= 0 && setns(parent_fd, CLONE_NEWUSER) < 0) ||
	    (parent_fd >= 0 && setresgid((gid_t)-1, group, (gid_t)-1) < 0) ||
	    (geteuid() != owner && setresuid((uid_t)-1, owner, (uid_t)-1) < 0) ||
	    unshare(CLONE_NEWUSER) < 0)
		self[0] = (char)errno;
	if (write(ready, self, sizeof(self)) != sizeof(self) || self[0])
		_exit(1);
	while (read(go, &c, 1) < 0 && errno == EINTR)
		;
	_exit(0);
}

/* Write the maps of @child (its PID as /proc names it), from its parent namespace. */
static int write_maps(pid_t pid, pid_t child, const Crf__Ns__UserNs *u)
{
	char path[64];
	int r;

	r = write_map(child, "uid_map", u->uid_map, u->n_uid_map);
	if (r < 0)
		return crf_error_errno(r, "pid %d: cannot write the uid map of user:[%llu]",
				       (int)pid, (unsigned long long)u->id);
	if (!u->setgroups_allow) {
		snprintf(path, sizeof(path), "/proc/%d/setgroups", (int)child);
		r = open(path, O_WRONLY | O_CLOEXEC);
		if (r < 0 || write(r, "deny", 4) != 4) {
			r = crf_error_errno(errno, "pid %d: %s", (int)pid, path);
			return r;
		}
		close(r);
	}
	r = write_map(child, "gid_map", u->gid_map, u->n_gid_map);
	if (r < 0)
		return crf_error_errno(r, "pid %d: cannot write the gid map of user:[%llu]",
				       (int)pid, (unsigned long long)u->id);
	return 0;
}

/*
 * The maps written by crf when the parent is crf's, else by a child that
 * joins the parent (@parent_fd): only a process there may write them; then
 * the namespace kept open.
 */
static int fill(pid_t pid, pid_t child, const Crf__Ns__UserNs *u, int parent_fd)
{
	char path[64];
	pid_t w;
	int r, st;

	if (parent_fd < 0) {
		r = write_maps(pid, child, u);
	} else {
		w = fork();
		if (w == 0) {
			r = setns(parent_fd, CLONE_NEWUSER) < 0
				    ? crf_error_errno(errno, "pid %d: setns into user:[%llu]",
						      (int)pid, (unsigned long long)u->parent)
				    : write_maps(pid, child, u);
			_exit(r < 0 ? 1 : 0);
		}
		r = w < 0 ? crf_error_errno(errno, "fork") : 0;
		while (w > 0 && waitpid(w, &st, 0) < 0 && errno == EINTR)
			;
		if (w > 0 && (!WIFEXITED(st) || WEXITSTATUS(st)))
			r = -EPERM;
	}
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)child);
	r = open(path, O_RDONLY | O_CLOEXEC);
	if (r < 0)
		return crf_error_errno(errno, "pid %d: %s", (int)pid, path);
	if (us.fd >= 0)
		close(us.fd);
	us.fd = r;
	us.id = u->id;
	us.deny = !u->setgroups_allow;
	return 0;
}

static int create(pid_t pid, const Crf__Ns__UserNs *u, int parent_fd)
{
	int ready[2], go[2], r, st;
	char self[16];
	pid_t child;

	if (pipe2(ready, O_CLOEXEC) < 0)
		return crf_error_errno(errno, "pipe");
	if (pipe2(go, O_CLOEXEC) < 0) {
		r = crf_error_errno(errno, "pipe");
		close(ready[0]);
		close(ready[1]);
		return r;
	}
	child = fork();
	if (child == 0) {
		close(ready[0]);
		close(go[1]);
		maker(u->owner, u->n_gid_map ? u->gid_map[0]->outside : 0, parent_fd, ready[1],
		      go[0]);
	}
	close(ready[1]);
	close(go[0]);
	r = child < 0 ? crf_error_errno(errno, "fork") : 0;
	if (r >= 0 && read(ready[0], self, sizeof(self)) != sizeof(self))
		r = crf_error_errno(EIO, "pid %d: the child making user:[%llu] died", (int)pid,
				    (unsigned long long)u->id);
	if (r >= 0 && self[0])
		r = crf_error_errno(self[0],
				    "pid %d: cannot make user namespace user:[%llu] owned by "
				    "uid %u (or read /proc/self)",
				    (int)pid, (unsigned long long)u->id, u->owner);
	if (r >= 0)
		r = fill(pid, (pid_t)atoi(self + 1), u, parent_fd);
	close(ready[0]);
	close(go[1]);
	if (child > 0)
		while (waitpid(child, &st, 0) < 0 && errno == EINTR)
			;
	return r;
}

int ns_userns_restore(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_ns_info *ni = obj->data;
	Crf__Ns__UserNs *u;
	int r = 0;

	if (!ni->inherited) {
		r = read_image(ctx, ni->id, &u);
		if (r < 0)
			return r;
		/* Nested: made inside the parent, which an ancestor process restored. */
		if (u->has_parent && (us.fd < 0 || us.id != u->parent))
			r = crf_error_errno(ENOTSUP,
					    "pid %d: user namespace user:[%llu] is nested in "
					    "user:[%llu], which its parent process is not in: "
					    "not supported",
					    (int)obj->pid, (unsigned long long)ni->id,
					    (unsigned long long)u->parent);
		else
			r = create(obj->pid, u, u->has_parent ? us.fd : -1);
		protobuf_c_message_free_unpacked(&u->base, NULL);
	}
	if (r >= 0 && (us.fd < 0 || us.id != ni->id))
		r = crf_error_errno(EBADMSG, "pid %d: user:[%llu] is not the one its parent made",
				    (int)obj->pid, (unsigned long long)ni->id);
	if (r >= 0)
		us.enter = obj->pid;
	return r;
}

/* The holder: joins the namespace and waits to be killed. */
static int hold(void *arg)
{
	int ready = *(int *)arg;
	char c = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (setns(us.fd, CLONE_NEWUSER) < 0)
		c = (char)errno;
	if (write(ready, &c, 1) != 1 || c)
		_exit(1);
	for (;;)
		pause();
}

static void drop_holder(void *arg)
{
	(void)arg;
	if (us.holder <= 0)
		return;
	kill(us.holder, SIGKILL);
	while (waitpid(us.holder, NULL, __WALL) < 0 && errno == EINTR)
		;
	us.holder = 0;
}

/* Once the fds are placed: join the namespace, opened through the holder. */
static int enter(void *arg)
{
	int fd, r = 0;

	/* By pidfd: the holder's PID is the process's namespace's, whatever /proc shows. */
	fd = (int)syscall(SYS_pidfd_open, us.holder, 0);
	if (fd < 0)
		r = crf_error_errno(errno, "pid %d: pidfd_open of its child %d", (int)us.enter,
				    (int)us.holder);
	if (r >= 0 && setns(fd, CLONE_NEWUSER) < 0)
		r = crf_error_errno(errno, "pid %d: cannot join user namespace user:[%llu]",
				    (int)us.enter, (unsigned long long)us.id);
	drop_holder(arg);
	if (fd >= 0)
		close(fd);
	return r;
}

int ns_userns_restore_task(struct crf_ctx *ctx)
{
	struct clone_args ca = {.exit_signal = 0};
	int ready[2], r = 0;
	char c = 1;
	pid_t child;

	r = ns_pidfc_restore_task(ctx, false);
	if (r < 0 || us.enter != crf_ctx_pid(ctx) || us.fd < 0)
		return r < 0 ? r : ns_pidfc_restore_task(ctx, true);
	/* The groups are kept under "deny": none (check_task), set while crf may. */
	if (us.deny && setgroups(0, NULL) < 0)
		return crf_error_errno(errno, "pid %d: setgroups", (int)us.enter);
	if (pipe2(ready, O_CLOEXEC) < 0)
		return crf_error_errno(errno, "pipe");
	/* No exit signal: the program must not see a SIGCHLD of crf's. */
	child = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
	if (child == 0) {
		close(ready[0]);
		_exit(hold(&ready[1]));
	}
	close(ready[1]);
	if (child < 0)
		r = crf_error_errno(errno, "clone3");
	else
		us.holder = child;
	if (r >= 0 && (read(ready[0], &c, 1) != 1 || c))
		r = crf_error_errno(c > 1 ? c : EIO, "pid %d: a child cannot join user:[%llu]",
				    (int)us.enter, (unsigned long long)us.id);
	close(ready[0]);
	if (r >= 0)
		r = crf_rst_at_fds_placed(ctx, enter, NULL, drop_holder);
	else
		drop_holder(NULL);
	return r < 0 ? r : ns_pidfc_restore_task(ctx, true);
}

int ns_userns_inside(struct crf_ctx *ctx, const bool *owned, const char *const *kinds,
		     size_t n, int (*fn)(struct crf_ctx *ctx, void *arg), void *arg)
{
	pid_t pid = crf_ctx_pid(ctx), child;
	int flags = 0, ready[2], go[2], r = 0, st, fd;
	char c = 1;

	for (size_t k = 0; k < n; k++)
		if (owned[k])
			flags |= inside_flag(kinds[k]);
	if (!flags)
		return 0;
	if (us.fd < 0 || us.enter != pid)
		return crf_error_errno(EBADMSG,
				       "pid %d: namespaces owned by its user namespace, which it "
				       "is not restored in",
				       (int)pid);
	if (pipe2(ready, O_CLOEXEC) < 0)
		return crf_error_errno(errno, "pipe");
	if (pipe2(go, O_CLOEXEC) < 0) {
		r = crf_error_errno(errno, "pipe");
		close(ready[0]);
		close(ready[1]);
		return r;
	}
	child = fork();
	if (child == 0) {
		close(ready[0]);
		close(go[1]);
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		r = setns(us.fd, CLONE_NEWUSER) < 0
			    ? crf_error_errno(errno, "pid %d: join user:[%llu]", (int)pid,
					      (unsigned long long)us.id)
			    : fn(ctx, arg);
		c = r < 0;
		if (write(ready[1], &c, 1) != 1 || c)
			_exit(1);
		while (read(go[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	if (child < 0)
		r = crf_error_errno(errno, "fork");
	else if (read(ready[0], &c, 1) != 1 || c)
		r = crf_error_errno(EIO,
				    "pid %d: making the namespaces its user namespace owns "
				    "failed (see above)",
				    (int)pid);
	if (r >= 0) {
		/* By pidfd, every kind at once; the process stays in crf's user namespace. */
		fd = (int)syscall(SYS_pidfd_open, child, 0);
		if (fd < 0 || setns(fd, flags) < 0)
			r = crf_error_errno(errno,
					    "pid %d: cannot join the namespaces made in its user "
					    "namespace user:[%llu]",
					    (int)pid, (unsigned long long)us.id);
		if (fd >= 0)
			close(fd);
	}
	close(ready[0]);
	close(go[1]);
	while (child > 0 && waitpid(child, &st, 0) < 0 && errno == EINTR)
		;
	return r;
}
