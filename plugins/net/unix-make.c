// SPDX-License-Identifier: GPL-2.0-only
/*
 * Making one unix socket as its record says: its buffer sizes, its name
 * (an abstract name, or a path whose socket file is replaced, or made and
 * deleted again when it was deleted at the dump), its connection to a
 * listener, and last its options and shutdown state.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <crf/log.h>

#include "unix.h"

static int set_buf(int fd, int get, int force, uint32_t want, const char *what)
{
	int now = 0, half = (int)(want / 2);
	socklen_t sl = sizeof(now);

	if (getsockopt(fd, SOL_SOCKET, get, &now, &sl))
		return crf_error_errno(errno, "%s: getsockopt", what);
	if ((uint32_t)now == want)
		return 0;
	/* getsockopt gives twice what was set; FORCE passes over the sysctl maximum. */
	if (setsockopt(fd, SOL_SOCKET, force, &half, sizeof(half)))
		return crf_error_errno(errno, "%s: buffer size %u", what, want);
	return 0;
}

int unix_set_before(int fd, const Crf__Net__UnixSk *m, const char *what)
{
	int r = set_buf(fd, SO_SNDBUF, SO_SNDBUFFORCE, m->sndbuf, what);

	return r < 0 ? r : set_buf(fd, SO_RCVBUF, SO_RCVBUFFORCE, m->rcvbuf, what);
}

int unix_set_after(int fd, const Crf__Net__UnixSk *m, const char *what)
{
	static const int how[4] = {-1, SHUT_RD, SHUT_WR, SHUT_RDWR};
	int on = 1, off = m->peek_off;

	if (m->passcred && setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)))
		return crf_error_errno(errno, "%s: SO_PASSCRED", what);
	if (off >= 0 && setsockopt(fd, SOL_SOCKET, SO_PEEK_OFF, &off, sizeof(off)))
		return crf_error_errno(errno, "%s: SO_PEEK_OFF %d", what, off);
	if (m->shutdown & 3 && shutdown(fd, how[m->shutdown & 3]))
		return crf_error_errno(errno, "%s: shutdown %u", what, m->shutdown);
	return 0;
}

socklen_t unix_addr(const ProtobufCBinaryData *name, struct sockaddr_un *a)
{
	size_t len = name->len < sizeof(a->sun_path) ? name->len : sizeof(a->sun_path);

	*a = (struct sockaddr_un){.sun_family = AF_UNIX};
	memcpy(a->sun_path, name->data, len);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
}

/* The path of a path name, NUL-terminated, in @buf. */
static const char *path_of(const Crf__Net__UnixSk *m, char *buf, size_t size)
{
	snprintf(buf, size, "%.*s", (int)m->name.len, (const char *)m->name.data);
	return buf;
}

/*
 * A socket file still at its path is the dumped socket's own (its inode
 * then): it goes, and bind() makes a new one there, with the old one's
 * mode and owner.  Anything else at the path is left alone and refused.
 */
static int free_path(const Crf__Net__UnixSk *m, const char *path, const char *what)
{
	struct stat st;

	if (lstat(path, &st)) {
		if (errno == ENOENT)
			return 0;
		return crf_error_errno(errno, "%s: %s", what, path);
	}
	if (m->file_gone)
		return crf_error_errno(EEXIST,
				       "%s: its socket file was deleted at the dump, and "
				       "%s is another file now",
				       what, path);
	if (!S_ISSOCK(st.st_mode) || st.st_ino != m->file_ino)
		return crf_error_errno(EEXIST,
				       "%s: %s is another file now (inode %llu, not the "
				       "socket's %llu)",
				       what, path, (unsigned long long)st.st_ino,
				       (unsigned long long)m->file_ino);
	if (unlink(path))
		return crf_error_errno(errno, "%s: unlink %s", what, path);
	return 0;
}

int unix_bind(int fd, const Crf__Net__UnixSk *m, const char *what)
{
	struct sockaddr_un a;
	socklen_t len;
	char path[sizeof(a.sun_path) + 1];
	bool is_path;
	int r;

	if (!m->has_name)
		return 0;
	is_path = m->name.len && m->name.data[0];
	if (is_path) {
		path_of(m, path, sizeof(path));
		r = free_path(m, path, what);
		if (r < 0)
			return r;
	}
	len = unix_addr(&m->name, &a);
	if (bind(fd, (struct sockaddr *)&a, len))
		return crf_error_errno(errno, "%s: bind", what);
	if (!is_path || m->file_gone)
		return 0;
	if (m->has_file_mode && chmod(path, m->file_mode & 07777))
		return crf_error_errno(errno, "%s: chmod %s", what, path);
	if (m->has_file_uid && lchown(path, m->file_uid, m->file_gid))
		return crf_error_errno(errno, "%s: chown %s", what, path);
	return 0;
}

int unix_unlink_gone(const Crf__Net__UnixSk *m, const char *what)
{
	char path[sizeof(((struct sockaddr_un *)0)->sun_path) + 1];

	if (!m->has_name || !m->name.len || !m->name.data[0] || !m->file_gone)
		return 0;
	if (unlink(path_of(m, path, sizeof(path))))
		return crf_error_errno(errno, "%s: unlink %s (deleted at the dump)", what, path);
	return 0;
}

int unix_connect(int fd, const Crf__Net__UnixSk *to, const char *what)
{
	struct sockaddr_un a;
	socklen_t len = unix_addr(&to->name, &a);
	int fl = fcntl(fd, F_GETFL), r = 0;

	/* A full backlog would block: the listener's had room for them all. */
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK))
		return crf_error_errno(errno, "%s: fcntl", what);
	if (connect(fd, (struct sockaddr *)&a, len))
		r = crf_error_errno(errno, "%s: connect", what);
	if (fcntl(fd, F_SETFL, fl) && r == 0)
		r = crf_error_errno(errno, "%s: fcntl", what);
	return r;
}
