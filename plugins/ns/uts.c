// SPDX-License-Identifier: GPL-2.0-only
/*
 * UTS namespaces (the ns plugin's "uts" handler, by name): the hostname and
 * the domain name, read by a child of crf that joins the namespace (a
 * task's names are those of the namespace it is in, seen only from there),
 * saved once per namespace in uts-ID.img.  The restore unshares a new one
 * in the first restored process that has it and sets both names; the
 * processes forked into it inherit it.
 *
 * One owned by the process's own user namespace is made inside the restored
 * one (claims.c, ns_userns_inside); one owned by any other user namespace
 * not crf's is refused at dump-task-data (userns.c).  A plugin
 * whose handler @match-es a UTS namespace claims it instead (the test
 * plugin crf-test-special does, for names starting "crf-special").
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/nsfs.h>

#include <crf/cleanup.h>
#include <crf/image.h>
#include <crf/log.h>
#include <crf/plugin.h>

#include "ns.h"
#include "uts.pb-c.h"

int ns_check_owner(const struct crf_object *obj, int nsfd)
{
	struct stat mine, owner;
	_cleanup_close_ int ufd = ioctl(nsfd, NS_GET_USERNS);

	if (ufd < 0)
		return crf_error_errno(errno, "pid %d: namespace %s: its user namespace",
				       (int)obj->pid, obj->desc);
	if (fstat(ufd, &owner) < 0 || stat("/proc/self/ns/user", &mine) < 0)
		return crf_error_errno(errno, "pid %d: namespace %s: its user namespace",
				       (int)obj->pid, obj->desc);
	if (owner.st_ino != mine.st_ino || owner.st_dev != mine.st_dev)
		return crf_error_errno(ENOTSUP,
				       "pid %d: namespace %s is owned by user namespace "
				       "user:[%llu], not crf's: the restored one would be crf's",
				       (int)obj->pid, obj->desc, (unsigned long long)owner.st_ino);
	return 0;
}

int ns_open_of(const struct crf_object *obj, const char *kind)
{
	char path[96];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/ns/%s", (int)obj->pid,
		 (int)((const struct crf_ns_info *)obj->data)->tid, kind);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return crf_error_errno(errno, "pid %d: namespace %s: %s", (int)obj->pid, obj->desc,
				       path);
	return fd;
}

int ns_in_child(int nsfd, int nstype, int (*fn)(int out, void *arg), void *arg, void *buf,
		size_t len)
{
	_cleanup_close_ int rd = -1;
	int p[2], status;
	size_t got = 0;
	ssize_t n = 0;
	pid_t child;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	child = fork();
	if (child < 0) {
		int e = errno;

		close(p[0]);
		close(p[1]);
		return -e;
	}
	if (child == 0) {
		close(p[0]);
		_exit(setns(nsfd, nstype) < 0 || fn(p[1], arg) < 0 ? 1 : 0);
	}
	close(p[1]);
	rd = p[0];
	while (got < len && (n = read(rd, (char *)buf + got, len - got)) > 0)
		got += (size_t)n;
	if (waitpid(child, &status, 0) != child)
		return -errno;
	if (n < 0 || got != len || !WIFEXITED(status) || WEXITSTATUS(status))
		return -EIO;
	return 0;
}

static void uts_image(char *buf, size_t len, uint64_t id)
{
	snprintf(buf, len, "uts-%llu.img", (unsigned long long)id);
}

static int uts_uname(int out, void *arg)
{
	struct utsname u;

	(void)arg;
	if (uname(&u) < 0)
		return -errno;
	return write(out, &u, sizeof(u)) == sizeof(u) ? 0 : -EIO;
}

int ns_uts_dump(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_ns_info *ni = obj->data;
	Crf__Ns__UtsNs m = CRF__NS__UTS_NS__INIT;
	_cleanup_img_ struct crf_img *img = NULL;
	_cleanup_close_ int fd = -1;
	struct utsname u;
	char name[64];
	int r;

	uts_image(name, sizeof(name), ni->id);
	r = ns_check_first(obj->pid, ni);
	if (r < 0)
		return r;
	/* Once per namespace: the tasks that share it are dispatched one by one. */
	if (faccessat(crf_imgdir_fd(crf_ctx_images(ctx)), name, F_OK, 0) == 0)
		return 0;
	fd = ns_open_of(obj, "uts");
	if (fd < 0)
		return fd;
	r = ns_in_child(fd, CLONE_NEWUTS, uts_uname, NULL, &u, sizeof(u));
	if (r < 0)
		return crf_error_errno(r, "pid %d: namespace %s: cannot read its names from inside",
				       (int)obj->pid, obj->desc);
	u.nodename[sizeof(u.nodename) - 1] = '\0';
	u.domainname[sizeof(u.domainname) - 1] = '\0';
	m.hostname = u.nodename;
	m.domainname = u.domainname;
	r = crf_img_create(crf_ctx_images(ctx), name, &crf__ns__uts_ns__descriptor, &img);
	if (r >= 0)
		r = crf_img_write(img, &m.base);
	if (r < 0)
		return r;
	crf_info("namespace %s: hostname '%s', domain name '%s'", obj->desc, m.hostname,
		 m.domainname);
	return crf_img_close(TAKE_PTR(img));
}

static int uts_read_image(struct crf_ctx *ctx, uint64_t id, Crf__Ns__UtsNs **out)
{
	_cleanup_img_ struct crf_img *img = NULL;
	char name[64];
	int r;

	uts_image(name, sizeof(name), id);
	r = crf_img_open(crf_ctx_images(ctx), name, &crf__ns__uts_ns__descriptor, &img);
	if (r < 0)
		return r;
	r = crf_img_read(img, (ProtobufCMessage **)out);
	if (r == 0)
		return crf_error_errno(EBADMSG, "%s: no record", name);
	if (r < 0)
		return r;
	if (strlen((*out)->hostname) > HOST_NAME_MAX ||
	    strlen((*out)->domainname) > HOST_NAME_MAX) {
		protobuf_c_message_free_unpacked(&(*out)->base, NULL);
		return crf_error_errno(EBADMSG, "%s: UtsNs: a name longer than %d bytes", name,
				       HOST_NAME_MAX);
	}
	return crf_img_close(TAKE_PTR(img));
}

/* In the restored process right after its fork (ns's restore-premap). */
int ns_uts_restore(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_ns_info *ni = obj->data;
	Crf__Ns__UtsNs *m = NULL;
	int r;

	if (ni->inherited)
		return 0;
	r = uts_read_image(ctx, ni->id, &m);
	if (r < 0)
		return r;
	if (unshare(CLONE_NEWUTS) < 0 || sethostname(m->hostname, strlen(m->hostname)) < 0 ||
	    setdomainname(m->domainname, strlen(m->domainname)) < 0)
		r = crf_error_errno(errno, "pid %d: namespace %s: a new UTS namespace named '%s'",
				    (int)obj->pid, obj->desc, m->hostname);
	protobuf_c_message_free_unpacked(&m->base, NULL);
	return r;
}
