// SPDX-License-Identifier: GPL-2.0-only
/*
 * The attributes of an unlinked file beyond its stat: extended attributes
 * (ACLs, file capabilities, user.*) and the inode flags a user may set
 * (chattr), read at the dump and set again on the new file at restore.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/xattr.h>

#include <linux/fs.h>

#include <crf/cleanup.h>
#include <crf/log.h>

#include "files.pb-c.h"
#include "unlinked.h"

/* Immutable or append-only: its descriptions could not be opened again for writing. */
#define IFLAGS_REFUSED (FS_IMMUTABLE_FL | FS_APPEND_FL)

void files_unlinked_attrs_free(Crf__Files__Xattr **v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i]->name);
		free(v[i]->value.data);
		free(v[i]);
	}
	free(v);
}

/* Append attribute @name of @fd to *@v; 0 or -errno (not logged). */
static int read_one(int fd, const char *name, Crf__Files__Xattr ***v, size_t *n)
{
	ssize_t len = fgetxattr(fd, name, NULL, 0);
	Crf__Files__Xattr *x, **w;

	if (len < 0)
		return -errno;
	w = reallocarray(*v, *n + 1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	*v = w;
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	crf__files__xattr__init(x);
	x->name = strdup(name);
	x->value.data = malloc(len ? (size_t)len : 1);
	w[(*n)++] = x;
	if (!x->name || !x->value.data)
		return -ENOMEM;
	len = fgetxattr(fd, name, x->value.data, (size_t)len);
	if (len < 0)
		return -errno;
	x->value.len = (size_t)len;
	return 0;
}

int files_unlinked_attrs_read(int fd, const char *what, Crf__Files__UnlinkedFile *m)
{
	ssize_t len = flistxattr(fd, NULL, 0);
	_cleanup_free_ char *names = NULL;
	int flags = 0, r = 0;

	if (len < 0 && errno != ENOTSUP)
		return crf_error_errno(errno, "%s: listing its extended attributes", what);
	if (len > 0 && !(names = malloc((size_t)len)))
		return crf_error_errno(ENOMEM, "%s", what);
	if (len > 0)
		len = flistxattr(fd, names, (size_t)len);
	for (ssize_t off = 0; r == 0 && len > 0 && off < len;
	     off += (ssize_t)strlen(names + off) + 1)
		r = read_one(fd, names + off, &m->xattrs, &m->n_xattrs);
	if (r < 0 || len < 0)
		return crf_error_errno(r < 0 ? -r : errno, "%s: reading its extended attributes",
				       what);
	/* A file system without inode flags has none to restore. */
	m->has_inode_flags = ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0;
	m->inode_flags = (uint32_t)flags & FS_FL_USER_MODIFIABLE;
	if (m->inode_flags & IFLAGS_REFUSED)
		return crf_error_errno(ENOTSUP,
				       "%s is immutable or append-only (chattr +i/+a): "
				       "its fds could not be opened again for writing",
				       what);
	return 0;
}

int files_unlinked_xattrs_set(int fd, const char *what, const Crf__Files__UnlinkedFile *rec)
{
	for (size_t i = 0; i < rec->n_xattrs; i++) {
		const Crf__Files__Xattr *x = rec->xattrs[i];

		if (fsetxattr(fd, x->name, x->value.data, x->value.len, 0) < 0)
			return crf_error_errno(errno, "%s: setting its attribute %s", what,
					       x->name);
	}
	return 0;
}

int files_unlinked_iflags_set(int fd, const char *what, const Crf__Files__UnlinkedFile *rec)
{
	int cur = 0, want;

	if (!rec->has_inode_flags)
		return 0;
	if (ioctl(fd, FS_IOC_GETFLAGS, &cur) < 0)
		return crf_error_errno(errno, "%s: its inode flags", what);
	want = (cur & ~FS_FL_USER_MODIFIABLE) | (int)(rec->inode_flags & FS_FL_USER_MODIFIABLE);
	if (want != cur && ioctl(fd, FS_IOC_SETFLAGS, &want) < 0)
		return crf_error_errno(errno, "%s: inode flags %#x", what, rec->inode_flags);
	return 0;
}
