// SPDX-License-Identifier: GPL-2.0-only
/*
 * A tmpfs's contents (mnt-NS-MOUNT.img, MntNode records): the dump walks a
 * detached clone of the mount alone (open_tree, no submounts: the
 * directories other mounts cover are seen), depth first, parents before
 * children (an unbindable one, which cannot be cloned, is read in place and
 * refused when another mount covers a part of it); the restore makes each file in a fresh tmpfs not
 * yet attached, then sets owners, modes and times (directories' last, deepest first: a child made
 * changes its parent's mtime).  Directories, regular files, symlinks, FIFOs and device nodes are
 * restored; a socket, a file with another hard link, a file with extended attributes (ACLs
 * included) or larger than MNT_FILE_MAX is refused by its path.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <crf/image.h>
#include <crf/log.h>

#include "mnt.h"
#include "mnt.pb-c.h"

#define MNT_FILE_MAX (16u << 20)

static int refuse(const char *where, const char *path, const char *why)
{
	return crf_error_errno(ENOTSUP, "%s: %s: %s, which crf does not restore", where, path, why);
}

static int read_all(int fd, uint8_t *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, buf + got, len - got, (off_t)got);

		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO; /* shrank: the tree is frozen, it should not */
		got += (size_t)n;
	}
	return 0;
}

static int save_node(int dir, const char *name, const char *path, const char *where, dev_t dev,
		     struct crf_img *img);

static int save_dir(int fd, const char *path, const char *where, dev_t dev, struct crf_img *img)
{
	int dfd = dup(fd), r = 0;
	struct dirent *e;
	DIR *d;

	if (dfd < 0)
		return crf_error_errno(errno, "%s: %s", where, path);
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return crf_error_errno(errno, "%s: %s", where, path);
	}
	while (r >= 0 && (errno = 0, e = readdir(d))) {
		char *sub;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (asprintf(&sub, "%s/%s", path, e->d_name) < 0) {
			r = -ENOMEM;
			break;
		}
		r = save_node(fd, e->d_name, sub, where, dev, img);
		free(sub);
	}
	if (r >= 0 && errno)
		r = crf_error_errno(errno, "%s: readdir %s", where, path);
	closedir(d);
	return r;
}

static int save_node(int dir, const char *name, const char *path, const char *where, dev_t dev,
		     struct crf_img *img)
{
	Crf__Ns__MntNode n = CRF__NS__MNT_NODE__INIT;
	char target[4097];
	uint8_t *data = NULL;
	struct stat st;
	int fd = -1, r = 0;
	ssize_t len;

	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return crf_error_errno(errno, "%s: %s", where, path);
	if (st.st_dev != dev)
		return refuse(where, path,
			      "a mount point on an unbindable tmpfs (what the mount "
			      "covers cannot be read)");
	if (S_ISSOCK(st.st_mode))
		return refuse(where, path, "a unix socket's file");
	if (!S_ISDIR(st.st_mode) && st.st_nlink > 1)
		return refuse(where, path, "a file with more than one hard link");
	n.path = (char *)path;
	n.mode = st.st_mode;
	n.uid = st.st_uid;
	n.gid = st.st_gid;
	n.atime_sec = st.st_atim.tv_sec;
	n.atime_nsec = (uint32_t)st.st_atim.tv_nsec;
	n.mtime_sec = st.st_mtim.tv_sec;
	n.mtime_nsec = (uint32_t)st.st_mtim.tv_nsec;
	if (S_ISLNK(st.st_mode)) {
		len = readlinkat(dir, name, target, sizeof(target) - 1);
		if (len < 0)
			return crf_error_errno(errno, "%s: %s", where, path);
		target[len] = '\0';
		n.target = target;
		return crf_img_write(img, &n.base);
	}
	if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
		n.has_rdev = true;
		n.rdev = st.st_rdev;
		return crf_img_write(img, &n.base);
	}
	if (S_ISFIFO(st.st_mode))
		return crf_img_write(img, &n.base);
	/* A directory or a regular file: opened, not following, not touching its atime. */
	fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NOATIME | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return crf_error_errno(errno, "%s: %s", where, path);
	len = flistxattr(fd, NULL, 0);
	if (len != 0)
		r = len < 0 ? crf_error_errno(errno, "%s: %s: listxattr", where, path)
			    : refuse(where, path, "a file with extended attributes");
	if (r >= 0 && S_ISREG(st.st_mode)) {
		if ((uint64_t)st.st_size > MNT_FILE_MAX)
			r = refuse(where, path, "a file larger than 16 MiB on a tmpfs");
		else if (st.st_size && !(data = malloc((size_t)st.st_size)))
			r = -ENOMEM;
		else if (st.st_size && (r = read_all(fd, data, (size_t)st.st_size)) < 0)
			r = crf_error_errno(r, "%s: read %s", where, path);
		n.has_data = true;
		n.data.data = data;
		n.data.len = (size_t)st.st_size;
	}
	if (r >= 0)
		r = crf_img_write(img, &n.base);
	if (r >= 0 && S_ISDIR(st.st_mode))
		r = save_dir(fd, path, where, dev, img);
	free(data);
	close(fd);
	return r;
}

int mnt_tmpfs_save(int fd, const char *where, struct crf_img *img)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return crf_error_errno(errno, "%s", where);
	return save_node(fd, ".", ".", where, st.st_dev, img);
}

/* ---- restore ------------------------------------------------------------ */

struct dir_times {
	char *path;
	struct timespec ts[2];
};

static int make_node(int root, const Crf__Ns__MntNode *n, const char *where)
{
	mode_t type = n->mode & S_IFMT, perm = n->mode & 07777;
	int fd;

	if (!strcmp(n->path, "."))
		return type == S_IFDIR ? 0 : crf_error_errno(EBADMSG, "%s: root not a dir", where);
	if (strncmp(n->path, "./", 2) || strstr(n->path, "/../") || strstr(n->path, "/./"))
		return crf_error_errno(EBADMSG, "%s: node path '%s'", where, n->path);
	switch (type) {
	case S_IFDIR:
		if (mkdirat(root, n->path, 0700) < 0)
			return crf_error_errno(errno, "%s: mkdir %s", where, n->path);
		return 0;
	case S_IFREG:
		fd = openat(root, n->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0600);
		if (fd < 0)
			return crf_error_errno(errno, "%s: create %s", where, n->path);
		for (size_t off = 0; off < n->data.len;) {
			ssize_t w = write(fd, n->data.data + off, n->data.len - off);

			if (w <= 0) {
				int e = w < 0 ? errno : EIO;

				close(fd);
				return crf_error_errno(e, "%s: write %s", where, n->path);
			}
			off += (size_t)w;
		}
		if (close(fd) < 0)
			return crf_error_errno(errno, "%s: close %s", where, n->path);
		return 0;
	case S_IFLNK:
		if (!n->target)
			return crf_error_errno(EBADMSG, "%s: %s: symlink without target", where,
					       n->path);
		if (symlinkat(n->target, root, n->path) < 0)
			return crf_error_errno(errno, "%s: symlink %s", where, n->path);
		return 0;
	case S_IFIFO:
	case S_IFCHR:
	case S_IFBLK:
		if (type != S_IFIFO && !n->has_rdev)
			return crf_error_errno(EBADMSG, "%s: %s: device without rdev", where,
					       n->path);
		if (mknodat(root, n->path, type | perm, type == S_IFIFO ? 0 : (dev_t)n->rdev) < 0)
			return crf_error_errno(errno, "%s: mknod %s", where, n->path);
		return 0;
	default:
		return crf_error_errno(EBADMSG, "%s: %s: mode %#o", where, n->path, n->mode);
	}
}

static int set_attrs(int root, const Crf__Ns__MntNode *n, const char *where)
{
	const char *p = n->path;
	int flags = AT_SYMLINK_NOFOLLOW;

	if (!strcmp(p, ".")) {
		p = "";
		flags |= AT_EMPTY_PATH;
	}
	if (fchownat(root, p, n->uid, n->gid, flags) < 0)
		return crf_error_errno(errno, "%s: chown %s", where, n->path);
	if (!S_ISLNK(n->mode) && fchmodat(root, *p ? p : ".", n->mode & 07777, 0) < 0)
		return crf_error_errno(errno, "%s: chmod %s", where, n->path);
	return 0;
}

static int set_times(int root, const char *path, const struct timespec ts[2], const char *where)
{
	if (utimensat(root, path, ts, AT_SYMLINK_NOFOLLOW) < 0)
		return crf_error_errno(errno, "%s: utimensat %s", where, path);
	return 0;
}

int mnt_tmpfs_fill(int root, const char *where, struct crf_img *img)
{
	struct dir_times *dirs = NULL;
	size_t n_dirs = 0, cap = 0;
	Crf__Ns__MntNode *n;
	int r;

	while ((r = crf_img_read(img, (ProtobufCMessage **)&n)) > 0) {
		struct timespec ts[2] = {{n->atime_sec, n->atime_nsec},
					 {n->mtime_sec, n->mtime_nsec}};

		r = make_node(root, n, where);
		if (r >= 0)
			r = set_attrs(root, n, where);
		if (r >= 0 && !S_ISDIR(n->mode))
			r = set_times(root, n->path, ts, where);
		if (r >= 0 && S_ISDIR(n->mode)) {
			if (n_dirs == cap) {
				struct dir_times *v;

				cap = cap ? cap * 2 : 16;
				v = realloc(dirs, cap * sizeof(*v));
				if (!v)
					r = -ENOMEM;
				else
					dirs = v;
			}
			if (r >= 0 && !(dirs[n_dirs].path = strdup(n->path)))
				r = -ENOMEM;
			if (r >= 0) {
				memcpy(dirs[n_dirs].ts, ts, sizeof(ts));
				n_dirs++;
			}
		}
		protobuf_c_message_free_unpacked(&n->base, NULL);
		if (r < 0)
			break;
	}
	for (size_t i = n_dirs; i-- > 0;) {
		if (r >= 0)
			r = set_times(root, dirs[i].path, dirs[i].ts, where);
		free(dirs[i].path);
	}
	free(dirs);
	return r;
}
