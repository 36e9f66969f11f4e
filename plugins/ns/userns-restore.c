// SPDX-License-Identifier: GPL-2.0-only
/*
 * User namespaces, the restore (see userns.c for the whole story and
 * docs/ns-user-pid.md): made at restore-premap in the first process of
 * each, inside its restored parent when nested; the namespaces of other
 * kinds it owns made inside it (ns_userns_inside); joined just before the
 * restorer (ns_userns_restore_task).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
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

/* Inherited through fork: the restored namespace, and which process joins it. */
static struct {
	int fd;	      /* the user namespace now, or -1 */
	uint64_t id;  /* its inode at the dump */
	bool deny;    /* its setgroups is "deny" */
	pid_t enter;  /* the process that joins it before its restorer */
	pid_t holder; /* the child that holds it for that, in that process */
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
		len += (size_t)snprintf(text + len, 40, "%u %u %u\n", e[i]->inside, e[i]->outside,
					e[i]->count);
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

	userns_image_name(name, sizeof(name), id);
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

/* The two pipes a helper child and its parent step each other with; 0 or -errno (logged). */
static int ready_go_pipes(int ready[2], int go[2])
{
	int r;

	if (pipe2(ready, O_CLOEXEC) < 0)
		return crf_error_errno(errno, "pipe");
	if (pipe2(go, O_CLOEXEC) < 0) {
		r = crf_error_errno(errno, "pipe");
		close(ready[0]);
		close(ready[1]);
		return r;
	}
	return 0;
}

static int create(pid_t pid, const Crf__Ns__UserNs *u, int parent_fd)
{
	int ready[2], go[2], r, st;
	char self[16];
	pid_t child;

	r = ready_go_pipes(ready, go);
	if (r < 0)
		return r;
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

int ns_userns_inside(struct crf_ctx *ctx, const bool *owned, const char *const *kinds, size_t n,
		     int (*fn)(struct crf_ctx *ctx, void *arg), void *arg)
{
	pid_t pid = crf_ctx_pid(ctx), child;
	int flags = 0, ready[2], go[2], r = 0, st, fd;
	char c = 1;

	for (size_t k = 0; k < n; k++)
		if (owned[k])
			flags |= userns_inside_flag(kinds[k]);
	if (!flags)
		return 0;
	if (us.fd < 0 || us.enter != pid)
		return crf_error_errno(EBADMSG,
				       "pid %d: namespaces owned by its user namespace, which it "
				       "is not restored in",
				       (int)pid);
	r = ready_go_pipes(ready, go);
	if (r < 0)
		return r;
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
