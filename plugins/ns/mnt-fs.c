// SPDX-License-Identifier: GPL-2.0-only
/*
 * Filesystems a mount namespace made, and whose they are (docs/ns-mnt.md).
 *
 * sysfs and mqueue have one superblock per net and IPC namespace: a sysfs
 * the dump saves as made in the namespace must be the one of the task's
 * own net namespace (crf's, or one its handler restores before the mount
 * namespace: ns_kinds[]), so that the restore, mounting sysfs in the
 * namespace it is in, gets that one back.  A short-lived child joins the
 * task's namespace, makes a detached mount of the filesystem (the kernel
 * hands the namespace's superblock back) and says its device.
 *
 * devpts: an instance of its own is made again empty: one with a pty in it
 * (a master open anywhere) is refused.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <linux/mount.h>
#include <unistd.h>

#include <crf/log.h>

#include "mnt.h"

/* The child: join @nsfd, mount @fstype detached, write its device to @out. */
static void fs_child(int nsfd, const char *fstype, int out)
{
	struct stat st;
	int fs, mfd;

	if (setns(nsfd, 0) < 0)
		_exit(1);
	fs = (int)syscall(SYS_fsopen, fstype, FSOPEN_CLOEXEC);
	if (fs < 0 || syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		_exit(2);
	mfd = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, 0);
	if (mfd < 0 || fstat(mfd, &st) < 0)
		_exit(3);
	if (write(out, &st.st_dev, sizeof(st.st_dev)) != sizeof(st.st_dev))
		_exit(4);
	_exit(0);
}

int mnt_fs_of_ns(pid_t pid, const char *kind, const struct mnt_line *m)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, kind);
	return mnt_fs_of_ns_at(AT_FDCWD, path, m);
}

int mnt_fs_of_ns_at(int dirfd, const char *path, const struct mnt_line *m)
{
	int nsfd, p[2], status, r = 0;
	dev_t dev = 0;
	pid_t c;

	nsfd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	if (nsfd < 0)
		return crf_error_errno(errno, "%s", path);
	if (pipe2(p, O_CLOEXEC) < 0) {
		r = -errno;
		close(nsfd);
		return crf_error_errno(r, "pipe");
	}
	c = fork();
	if (c == 0) {
		close(p[0]);
		fs_child(nsfd, m->fstype, p[1]);
	}
	if (c < 0)
		r = crf_error_errno(errno, "fork");
	close(p[1]);
	close(nsfd);
	if (c > 0) {
		ssize_t n = read(p[0], &dev, sizeof(dev));

		while (waitpid(c, &status, 0) < 0 && errno == EINTR)
			;
		if (n != sizeof(dev))
			r = crf_error_errno(EIO,
					    "cannot mount %s in namespace %s to tell whose the "
					    "one at %s is",
					    m->fstype, path, m->mount_point);
	}
	close(p[0]);
	if (r < 0)
		return r;
	return major(dev) == m->major && minor(dev) == m->minor;
}

int mnt_ns_is_crf(pid_t pid, const char *kind)
{
	char a[64], b[64], la[64], lb[64];
	ssize_t n, k;

	snprintf(a, sizeof(a), "/proc/%d/ns/%s", (int)pid, kind);
	snprintf(b, sizeof(b), "/proc/self/ns/%s", kind);
	n = readlink(a, la, sizeof(la) - 1);
	k = readlink(b, lb, sizeof(lb) - 1);
	return n > 0 && n == k && !memcmp(la, lb, (size_t)n);
}

int mnt_fs_empty(int fd, const char *where, const char *keep, const char *what)
{
	/* open_tree's fd is an O_PATH one: no getdents on it. */
	int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *de;
	DIR *dir;
	int r = 0;

	if (dfd < 0 || !(dir = fdopendir(dfd))) {
		r = crf_error_errno(errno, "%s", where);
		if (dfd >= 0)
			close(dfd);
		return r;
	}
	while ((errno = 0, de = readdir(dir)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    (!keep || strcmp(de->d_name, keep))) {
			r = crf_error_errno(ENOTSUP, "%s: holds %s %s, not restored", where, what,
					    de->d_name);
			break;
		}
	if (!de && errno)
		r = crf_error_errno(errno, "%s: readdir", where);
	closedir(dir);
	return r;
}

bool mnt_root_ok(const char *root)
{
	if (root[0] != '/')
		return false;
	for (const char *p = root; *p;) {
		size_t n;

		p++; /* the '/' */
		n = strcspn(p, "/");
		if (!n ? p[0] != '\0' || p - 1 != root
		       : (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += n;
	}
	return true;
}
