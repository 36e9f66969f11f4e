// SPDX-License-Identifier: GPL-2.0-only
/*
 * inotify fds: every watch listed in the fd's fdinfo ("inotify wd:HEX
 * ino:HEX sdev:HEX mask:HEX ... f_handle:HEX") is saved with its mask and
 * the path its file handle resolves to at the dump (open_by_handle_at on a
 * mount of the watched file system, from the task's mountinfo), and added
 * again at restore with inotify_add_watch.
 *
 * Watch descriptors are handed out in increasing order, never reused
 * while the counter goes up: the watches are added in wd order, and where
 * the program had removed some (a gap), the watch is added and removed
 * until it gets its number.  The removals queue IN_IGNORED events, which
 * restore reads away before the program resumes.  Events queued at the
 * dump and not read yet are lost (a warning says how many bytes); the
 * paths are those of crf's mount namespace.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <crf/cleanup.h>

#include "epoll.h"
#include "fdinfo.h"
#include "files.h"
#include "files.pb-c.h"

#define HANDLE_MAX 128

/* One "inotify" line of an fdinfo text. */
struct watch_line {
	unsigned int wd, mask, sdev, bytes, type;
	uint64_t ino;
	unsigned char handle[HANDLE_MAX];
};

static int parse_watch(const char *l, struct watch_line *w)
{
	unsigned int ignored;
	int off = 0;

	if (sscanf(l,
		   "inotify wd:%x ino:%" SCNx64 " sdev:%x mask:%x ignored_mask:%x "
		   "fhandle-bytes:%x fhandle-type:%x f_handle:%n",
		   &w->wd, &w->ino, &w->sdev, &w->mask, &ignored, &w->bytes, &w->type, &off) != 7 ||
	    !off || w->bytes == 0 || w->bytes > HANDLE_MAX)
		return -EBADMSG;
	for (unsigned int i = 0; i < w->bytes; i++) {
		unsigned int b;

		if (sscanf(l + off + 2 * i, "%2x", &b) != 1)
			return -EBADMSG;
		w->handle[i] = (unsigned char)b;
	}
	return 0;
}

/* An fd on a mount point of the file system @sdev in the task's mountinfo. */
static int open_mount(int pid, unsigned int sdev)
{
	unsigned int major = sdev >> 20, minor = sdev & 0xfffff;
	char path[4200], line[4096], mnt[4096];
	_cleanup_fclose_ FILE *f = NULL;
	int fd = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/mountinfo", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fd == -ENOENT && fgets(line, sizeof(line), f)) {
		unsigned int ma, mi;

		if (sscanf(line, "%*d %*d %u:%u %*s %4095s", &ma, &mi, mnt) != 3 || ma != major ||
		    mi != minor)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/root%s", pid, mnt);
		/* Not O_PATH: open_by_handle_at() refuses those. */
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd < 0)
			fd = -ENOENT;
	}
	return fd;
}

/* The path of the watched file, in crf's namespace, into @w; 0 or -errno (logged). */
static int resolve_watch(const struct files_dump *d, int fd, const struct watch_line *l,
			 Crf__Files__InotifyWatch *w, char *path, size_t size)
{
	_cleanup_free_ struct file_handle *fh = malloc(sizeof(*fh) + HANDLE_MAX);
	_cleanup_close_ int mfd = open_mount(d->pid, l->sdev), f = -1;
	int r = 0;
	char link[64];
	struct stat st;
	ssize_t n;

	if (fh && mfd >= 0) {
		fh->handle_bytes = l->bytes;
		fh->handle_type = (int)l->type;
		memcpy(fh->f_handle, l->handle, l->bytes);
		f = open_by_handle_at(mfd, fh, O_PATH | O_CLOEXEC);
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", f);
	if (!fh)
		r = crf_error_errno(ENOMEM, "pid %d: inotify fd %d", d->pid, fd);
	else if (mfd < 0)
		r = crf_error_errno(-mfd, "pid %d: inotify fd %d, wd %u: no mount of device %#x",
				    d->pid, fd, l->wd, l->sdev);
	else if (f < 0)
		r = crf_error_errno(errno,
				    "pid %d: inotify fd %d, wd %u: the watched inode %" PRIu64
				    " cannot be opened by its handle",
				    d->pid, fd, l->wd, l->ino);
	else if ((n = readlink(link, path, size - 1)) < 0 || fstat(f, &st) < 0)
		r = crf_error_errno(errno, "pid %d: inotify fd %d, wd %u", d->pid, fd, l->wd);
	else {
		path[n] = '\0';
		if (path[0] != '/' || strstr(path, " (deleted)"))
			r = crf_error_errno(ENOTSUP,
					    "pid %d: inotify fd %d, wd %u watches %s, which has no "
					    "path crf can add a watch on",
					    d->pid, fd, l->wd, path);
		w->wd = (int)l->wd;
		w->mask = l->mask;
		w->path = path;
		w->inode = st.st_ino;
	}
	return r;
}

/*
 * Events queued and not read yet cannot be queued again (reading them here
 * would take them from a tree that may run on, and no call puts an event
 * in): such an fd is refused, naming the count.
 */
static int refuse_pending(struct files_dump *d, int fd)
{
	int copy = files_cur_copy(d), n = 0;

	if (copy < 0)
		return copy;
	if (ioctl(copy, FIONREAD, &n) < 0)
		return crf_error_errno(errno, "pid %d: inotify fd %d: FIONREAD", d->pid, fd);
	if (n > 0)
		return crf_error_errno(ENOTSUP,
				       "pid %d: inotify fd %d has %d bytes of events not read yet, "
				       "which crf cannot queue again",
				       d->pid, fd, n);
	return 0;
}

static int dump_watches(const struct files_dump *d, int fd, const char *text,
			Crf__Files__Inotify *in, char (*paths)[PATH_MAX], size_t max)
{
	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		Crf__Files__InotifyWatch *w;
		struct watch_line wl;
		int r;

		if (strncmp(l, "inotify ", 8))
			continue;
		if (in->n_watches == max || parse_watch(l, &wl) < 0)
			return crf_error_errno(EBADMSG, "pid %d: fdinfo of inotify fd %d", d->pid,
					       fd);
		w = in->watches[in->n_watches];
		crf__files__inotify_watch__init(w);
		r = resolve_watch(d, fd, &wl, w, paths[in->n_watches], PATH_MAX);
		if (r < 0)
			return r;
		in->n_watches++;
	}
	return 0;
}

static int cmp_wd(const void *a, const void *b)
{
	const Crf__Files__InotifyWatch *const *x = a, *const *y = b;

	return ((*x)->wd > (*y)->wd) - ((*x)->wd < (*y)->wd);
}

/* The watches of @text into @in, sorted by wd; 0 or -errno (logged). */
static int dump_inotify(struct files_dump *d, int fd, const char *text, Crf__Files__Inotify *in,
			void **mem)
{
	size_t max = 1;
	char *p;
	int r;

	for (const char *t = text; *t; t++)
		max += *t == '\n';
	p = calloc(max, sizeof(Crf__Files__InotifyWatch) + sizeof(void *) + PATH_MAX);
	if (!p)
		return crf_error_errno(ENOMEM, "pid %d: inotify fd %d", d->pid, fd);
	*mem = p;
	in->watches = (Crf__Files__InotifyWatch **)p;
	for (size_t i = 0; i < max; i++)
		in->watches[i] = (Crf__Files__InotifyWatch *)(p + max * sizeof(void *)) + i;
	r = dump_watches(
		d, fd, text, in,
		(char(*)[PATH_MAX])(p + max * (sizeof(void *) + sizeof(Crf__Files__InotifyWatch))),
		max);
	if (r == 0)
		qsort(in->watches, in->n_watches, sizeof(*in->watches), cmp_wd);
	return r == 0 ? refuse_pending(d, fd) : r;
}

int files_inotify_dump(struct crf_ctx *ctx, const struct crf_object *obj)
{
	Crf__Files__Fd e = CRF__FILES__FD__INIT;
	Crf__Files__Inotify in = CRF__FILES__INOTIFY__INIT;
	struct files_dump *d = NULL;
	_cleanup_free_ void *mem = NULL;
	const char *text = NULL;
	int fd = obj->id, same, r;

	r = files_fdinfo_fd_begin(ctx, obj, "inotify", &e, &text, &d);
	same = r > 0;
	if (r == 0) {
		e.inotify = &in;
		r = dump_inotify(d, fd, text, &in, &mem);
		if (r == 0)
			r = files_desc_remember(d, fd);
	}
	if (r >= 0)
		r = files_fd_write(d, &e);
	if (r == 0)
		crf_debug("pid %d: fd %d: inotify with %zu watches%s", d->pid, fd, in.n_watches,
			  same ? " (shared)" : "");
	return r;
}

/* Add @w as wd w->wd, stepping over removed numbers; 1 if it stepped, 0, or -errno. */
static int add_watch(int fd, const Crf__Files__Fd *e, const Crf__Files__InotifyWatch *w)
{
	struct stat st;
	int stepped = 0;

	if (stat(w->path, &st) < 0)
		return crf_error_errno(errno, "fd %d: inotify wd %d: %s", e->fd, w->wd, w->path);
	if (st.st_ino != w->inode)
		return crf_error_errno(ESTALE, "fd %d: inotify wd %d: %s is another file now",
				       e->fd, w->wd, w->path);
	for (;;) {
		int wd = inotify_add_watch(fd, w->path, w->mask);

		if (wd < 0)
			return crf_error_errno(errno, "fd %d: inotify wd %d: watch %s", e->fd,
					       w->wd, w->path);
		if (wd == w->wd)
			return stepped;
		if (wd > w->wd)
			return crf_error_errno(EBADMSG, "fd %d: inotify wd %d: got %d for %s",
					       e->fd, w->wd, wd, w->path);
		if (inotify_rm_watch(fd, wd) < 0)
			return crf_error_errno(errno, "fd %d: inotify: remove wd %d", e->fd, wd);
		stepped = 1;
	}
}

/* Read away the IN_IGNORED events of the watches removed to step over numbers. */
static void drain(int fd)
{
	char buf[4096];
	int fl = fcntl(fd, F_GETFL);

	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	fcntl(fd, F_SETFL, fl);
}

int files_inotify_create(const Crf__Files__Fd *e)
{
	_cleanup_close_ int fd =
		inotify_init1(IN_CLOEXEC | ((e->flags & O_NONBLOCK) ? IN_NONBLOCK : 0));
	int stepped = 0, r = 0;

	if (fd < 0)
		return crf_error_errno(errno, "fd %d: inotify_init1", e->fd);
	for (size_t i = 0; r >= 0 && i < e->inotify->n_watches; i++) {
		r = add_watch(fd, e, e->inotify->watches[i]);
		stepped |= r > 0;
	}
	if (r < 0)
		return r;
	if (stepped)
		drain(fd);
	return TAKE_FD(fd);
}
