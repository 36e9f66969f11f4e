// SPDX-License-Identifier: GPL-2.0-only
/*
 * The files plugin's images, checked before the tree is forked: the first
 * step of restore-prepare, and what the fuzzer runs (validate.h).
 *
 * restore-task, in each forked task, walks files-PID.img and looks every
 * reference up where restore-prepare put it: a pipe by its index in
 * pipes.img, a terminal by its index in ttys.img, an unlinked file by its
 * index in unlinked.img, a shared description by (pid, fd) in
 * shared-fds.img, a dup by an earlier fd, an epoll registration by the fd
 * number it watches; and it places each fd at its number.  An index out of
 * range or a number no process can have, found there, fails a restore that
 * has forked; found here, nothing is made.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/image.h>
#include <crf/log.h>

#include "files.pb-c.h"
#include "validate.h"

#define bad(v, fmt, ...)                                                                           \
	crf_error_errno(EBADMSG, "%s/%s: record %zu: " fmt, crf_imgdir_path((v)->dir), (v)->name,  \
			(v)->rec, ##__VA_ARGS__)

/* The shared images, as files-PID.img records refer to them. */
struct tables {
	struct crf_imgdir *dir;
	const char *name; /* the image being checked, for messages */
	size_t rec;	  /* and its record */
	long nr_open;	  /* no fd number reaches it */
	size_t n_pipes, n_ttys, n_unlinked;
	uint32_t *pipe_descs; /* by pipe: its number of descriptions (0: older images) */
	struct shared {
		int32_t pid, fd;
	} * shared;
	size_t n_shared;
};

/* fs.nr_open: the kernel's bound on any fd number; 1048576 when unreadable. */
static long nr_open(void)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/sys/fs/nr_open", "re");
	long v = 0;

	if (!f || fscanf(f, "%ld", &v) != 1 || v <= 0)
		return 1048576;
	return v;
}

/*
 * Walk record image @img (absent: no records) of @desc, @fn on each with
 * t->rec its index; the records must carry their index in field "id".
 */
static int each_record(struct tables *t, const char *img, const ProtobufCMessageDescriptor *desc,
		       int (*fn)(struct tables *t, const ProtobufCMessage *m))
{
	_cleanup_img_ struct crf_img *im = NULL;
	ProtobufCMessage *m;
	int r;

	t->name = img;
	t->rec = 0;
	if (faccessat(crf_imgdir_fd(t->dir), img, F_OK, 0) < 0)
		return 0;
	r = crf_img_open(t->dir, img, desc, &im);
	while (r >= 0 && (r = crf_img_read(im, &m)) > 0) {
		r = fn(t, m);
		protobuf_c_message_free_unpacked(m, NULL);
		t->rec++;
	}
	return r;
}

static int on_pipe(struct tables *t, const ProtobufCMessage *m)
{
	const Crf__Files__Pipe *p = (const Crf__Files__Pipe *)m;
	uint32_t *v;

	if (p->id != t->rec)
		return bad(t, "Pipe.id: %u, not the record's index", p->id);
	v = realloc(t->pipe_descs, (t->rec + 1) * sizeof(*v));
	if (!v)
		return crf_error_errno(ENOMEM, "%s", t->name);
	t->pipe_descs = v;
	v[t->rec] = (uint32_t)p->n_descs;
	t->n_pipes = t->rec + 1;
	return 0;
}

static int on_tty(struct tables *t, const ProtobufCMessage *m)
{
	const Crf__Files__Tty *y = (const Crf__Files__Tty *)m;

	if (y->id != t->rec)
		return bad(t, "Tty.id: %u, not the record's index", y->id);
	t->n_ttys = t->rec + 1;
	return 0;
}

static int on_unlinked(struct tables *t, const ProtobufCMessage *m)
{
	const Crf__Files__UnlinkedFile *u = (const Crf__Files__UnlinkedFile *)m;

	if (u->id != t->rec)
		return bad(t, "UnlinkedFile.id: %u, not the record's index", u->id);
	if (!u->blob[0] || strchr(u->blob, '/'))
		return bad(t, "UnlinkedFile.blob: bad image name '%.64s'", u->blob);
	t->n_unlinked = t->rec + 1;
	return 0;
}

static int on_shared(struct tables *t, const ProtobufCMessage *m)
{
	const Crf__Files__SharedFd *s = (const Crf__Files__SharedFd *)m;
	char what[96];
	struct shared *v;
	int r;

	if (s->id != t->rec)
		return bad(t, "SharedFd.id: %u, not the record's index", s->id);
	if (s->fd < 0 || s->fd >= t->nr_open)
		return bad(t, "SharedFd.fd: %d, not an fd number (fs.nr_open %ld)", (int)s->fd,
			   t->nr_open);
	for (size_t i = 0; i < t->n_shared; i++)
		if (t->shared[i].pid == s->pid && t->shared[i].fd == s->fd)
			return bad(t, "SharedFd: fd %d of pid %d twice", (int)s->fd, (int)s->pid);
	snprintf(what, sizeof(what), "%s: record %zu", t->name, t->rec);
	r = crf_img_check_task(t->dir, what, s->pid);
	if (r < 0)
		return r;
	v = realloc(t->shared, (t->n_shared + 1) * sizeof(*v));
	if (!v)
		return crf_error_errno(ENOMEM, "%s", t->name);
	t->shared = v;
	v[t->n_shared++] = (struct shared){s->pid, s->fd};
	return 0;
}

static bool is_shared(const struct tables *t, int32_t pid, int32_t fd)
{
	for (size_t i = 0; i < t->n_shared; i++)
		if (t->shared[i].pid == pid && t->shared[i].fd == fd)
			return true;
	return false;
}

/* One fd table: its numbers in order, below nr_open, in @fds (sorted) for the epoll checks. */
struct table {
	int32_t *fds;
	size_t n;
};

static bool has_fd(const struct table *tb, int32_t fd)
{
	size_t lo = 0, hi = tb->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (tb->fds[mid] == fd)
			return true;
		if (tb->fds[mid] < fd)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* What a record refers to in the shared images and in its own table. */
static int check_refs(struct tables *t, const struct table *tb, const Crf__Files__Fd *e, pid_t pid)
{
	if (e->has_same_pid) {
		char what[96];
		int r;

		snprintf(what, sizeof(what), "%s: record %zu: Fd.same_pid", t->name, t->rec);
		r = crf_img_check_task(t->dir, what, e->same_pid);
		if (r >= 0 && (!e->has_same_as || !is_shared(t, e->same_pid, e->same_as)))
			r = bad(t, "Fd.same_pid, same_as: fd %d of pid %d is not in shared-fds.img",
				e->has_same_as ? (int)e->same_as : -1, (int)e->same_pid);
		return r;
	}
	if (e->has_same_as && (e->same_as >= e->fd || !has_fd(tb, e->same_as)))
		return bad(t, "Fd.same_as: fd %d is not an earlier fd of pid %d", (int)e->same_as,
			   (int)pid);
	if (e->has_pipe && e->pipe >= t->n_pipes)
		return bad(t, "Fd.pipe: pipe %u, pipes.img has %zu", e->pipe, t->n_pipes);
	if (e->has_pipe && e->has_pipe_desc && t->pipe_descs[e->pipe] &&
	    e->pipe_desc >= t->pipe_descs[e->pipe])
		return bad(t, "Fd.pipe_desc: description %u of pipe %u, which has %u", e->pipe_desc,
			   e->pipe, t->pipe_descs[e->pipe]);
	if (e->tty && e->tty->id >= t->n_ttys)
		return bad(t, "Fd.tty.id: terminal %u, ttys.img has %zu", e->tty->id, t->n_ttys);
	if (e->unlinked && e->unlinked->has_file && e->unlinked->file >= t->n_unlinked)
		return bad(t, "Fd.unlinked.file: file %u, unlinked.img has %zu", e->unlinked->file,
			   t->n_unlinked);
	if (e->owner && e->owner->pid <= 0)
		return bad(t, "Fd.owner.pid: %d", (int)e->owner->pid);
	return 0;
}

/* One record of files-PID.img, the fds before it in @tb. */
static int check_fd(struct tables *t, struct table *tb, const Crf__Files__Fd *e, pid_t pid)
{
	int32_t *v;

	if (e->fd < 0 || e->fd >= t->nr_open)
		return bad(t, "Fd.fd: %d, above the fd limit (fs.nr_open %ld) or negative",
			   (int)e->fd, t->nr_open);
	if (tb->n && e->fd <= tb->fds[tb->n - 1])
		return bad(t, "Fd.fd: %d after fd %d: not in increasing order", (int)e->fd,
			   (int)tb->fds[tb->n - 1]);
	if (!e->path[0])
		return bad(t, "Fd.path: empty");
	if (e->has_inherit_stdio && e->inherit_stdio && e->fd > 2)
		return bad(t, "Fd.inherit_stdio: fd %d is not 0, 1 or 2", (int)e->fd);
	v = realloc(tb->fds, (tb->n + 1) * sizeof(*v));
	if (!v)
		return crf_error_errno(ENOMEM, "%s", t->name);
	tb->fds = v;
	v[tb->n++] = e->fd;
	return check_refs(t, tb, e, pid);
}

/* Epoll registrations, once the whole table is known: each watches an fd of it. */
static int check_epoll(struct tables *t, const struct table *tb, const Crf__Files__Fd *e, pid_t pid)
{
	for (size_t j = 0; e->epoll && j < e->epoll->n_targets; j++) {
		const Crf__Files__EpollTarget *g = e->epoll->targets[j];
		int32_t number = g->has_holder ? g->holder : g->tfd;

		if (g->tfd < 0 || g->tfd >= t->nr_open || !has_fd(tb, number))
			return bad(t, "Fd.epoll.targets[%zu]: fd %d, which pid %d does not have", j,
				   (int)number, (int)pid);
	}
	return 0;
}

static int check_files(void *arg, const char *name, pid_t pid)
{
	_cleanup_img_ struct crf_img *img = NULL;
	struct tables *t = arg;
	struct crf_imgdir *dir = t->dir;
	struct table tb = {0};
	ProtobufCMessage *m;
	int r = crf_img_check_task(dir, name, pid);

	t->name = name;
	t->rec = 0;
	if (r >= 0)
		r = crf_img_open(dir, name, &crf__files__fd__descriptor, &img);
	while (r >= 0 && (r = crf_img_read(img, &m)) > 0) {
		r = check_fd(t, &tb, (Crf__Files__Fd *)m, pid);
		protobuf_c_message_free_unpacked(m, NULL);
		t->rec++;
	}
	/* Again for the epoll fds, now that every number is known. */
	if (img)
		crf_img_close(TAKE_PTR(img));
	t->rec = 0;
	if (r == 0)
		r = crf_img_open(dir, name, &crf__files__fd__descriptor, &img);
	while (r >= 0 && (r = crf_img_read(img, &m)) > 0) {
		r = check_epoll(t, &tb, (Crf__Files__Fd *)m, pid);
		protobuf_c_message_free_unpacked(m, NULL);
		t->rec++;
	}
	free(tb.fds);
	return r;
}

int files_validate(struct crf_imgdir *dir)
{
	struct tables t = {.dir = dir, .nr_open = nr_open()};
	int r;

	r = each_record(&t, "pipes.img", &crf__files__pipe__descriptor, on_pipe);
	if (r >= 0)
		r = each_record(&t, "ttys.img", &crf__files__tty__descriptor, on_tty);
	if (r >= 0)
		r = each_record(&t, "unlinked.img", &crf__files__unlinked_file__descriptor,
				on_unlinked);
	if (r >= 0)
		r = each_record(&t, "shared-fds.img", &crf__files__shared_fd__descriptor,
				on_shared);
	if (r >= 0)
		r = crf_imgdir_each_task(dir, "files", check_files, &t);
	free(t.pipe_descs);
	free(t.shared);
	return r;
}
