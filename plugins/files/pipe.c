// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pipes and FIFOs.  A pipe is one object however many fds of however many
 * tasks hold its ends: it is found by its inode and saved once in
 * pipes.img (capacity, buffered bytes, a FIFO's path), and each fd is an
 * Fd record of files-PID.img that names it.
 *
 * At restore every pipe is created once, in crf's top process, before the
 * tree is forked from it: each task inherits it and dups the description
 * it had.  Every open file description of the pipe is saved (found by
 * kcmp) with its own flags: the two ends pipe(2) made, and every other
 * open of it (a FIFO opened twice, /proc/PID/fd/N opened again), so that
 * each keeps its own O_NONBLOCK, as every fd of one keeps sharing it.
 * Older images have one description per access mode.
 */
#include <errno.h>
#include <fcntl.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/kcmp.h>

#include <crf/cleanup.h>
#include <crf/image.h>

#include "files.h"
#include "files.pb-c.h"

#define PIPES_IMG "pipes.img"

/*
 * The kernel's O_LARGEFILE, which open() always sets on 64-bit and pipe()
 * never does (glibc defines O_LARGEFILE as 0 on x86_64).
 */
#define PIPE_O_LARGEFILE 0100000
/* The status flags of a pipe's description that F_SETFL sets (O_ASYNC: owner.c). */
#define PIPE_SETFL (O_NONBLOCK | O_DIRECT | O_APPEND | O_NOATIME)

/* One open file description of a pipe. */
struct pipe_desc {
	int pid, fd;	    /* dump: its first fd */
	unsigned int flags; /* no O_CLOEXEC */
	int top;	    /* restore: crf's fd on it, or -1 */
};

struct files_pipe {
	uint64_t dev, ino;
	char *fifo; /* a FIFO's path; NULL for a pipe */
	unsigned int capacity;
	uint8_t *data;
	size_t len;
	int ends[3]; /* restore: a description per O_ACCMODE, or -1 */
	struct pipe_desc *descs;
	size_t n_descs;
	/* dump: the ends the tree holds (1 << O_ACCMODE), and its first fd */
	unsigned int held;
	int pid, fd;
	bool external; /* named by --external: held outside too, not saved */
};

/* @index: the dump's pipes by (dev, inode), struct pipe_key, for tsearch(3). */
struct files_pipes {
	struct files_pipe *v;
	size_t n, cap;
	void *index;
};

struct pipe_key {
	uint64_t dev, ino;
	size_t i;
};

void files_pipes_free(struct files_pipes *pipes)
{
	if (!pipes)
		return;
	for (size_t i = 0; i < pipes->n; i++) {
		for (int e = 0; e < 3; e++)
			if (pipes->v[i].ends[e] >= 0)
				close(pipes->v[i].ends[e]);
		for (size_t k = 0; k < pipes->v[i].n_descs; k++)
			if (pipes->v[i].descs[k].top >= 0)
				close(pipes->v[i].descs[k].top);
		free(pipes->v[i].descs);
		free(pipes->v[i].fifo);
		free(pipes->v[i].data);
	}
	tdestroy(pipes->index, free);
	free(pipes->v);
	free(pipes);
}

static struct files_pipe *pipe_add(struct files_tree *tree)
{
	struct files_pipes *ps = tree->pipes;
	struct files_pipe *v;

	if (!ps && !(ps = tree->pipes = calloc(1, sizeof(*ps))))
		return NULL;
	if (ps->n == ps->cap) {
		size_t cap = ps->cap ? 2 * ps->cap : 16;

		v = reallocarray(ps->v, cap, sizeof(*v));
		if (!v)
			return NULL;
		ps->v = v;
		ps->cap = cap;
	}
	v = &ps->v[ps->n++];
	memset(v, 0, sizeof(*v));
	v->ends[0] = v->ends[1] = v->ends[2] = -1;
	return v;
}

static int pipe_key_cmp(const void *a, const void *b)
{
	const struct pipe_key *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* The index of the pipe of @st among those seen so far, or -1. */
static long pipe_find(const struct files_pipes *ps, const struct stat *st)
{
	struct pipe_key key = {.dev = st->st_dev, .ino = st->st_ino};
	struct pipe_key **k = ps ? tfind(&key, &ps->index, pipe_key_cmp) : NULL;

	return k ? (long)(*k)->i : -1;
}

/* Index the pipe just added, the last of @ps; 0 or -ENOMEM (not logged). */
static int pipe_index(struct files_pipes *ps)
{
	struct pipe_key *key = malloc(sizeof(*key));

	if (!key)
		return -ENOMEM;
	*key = (struct pipe_key){ps->v[ps->n - 1].dev, ps->v[ps->n - 1].ino, ps->n - 1};
	if (!tsearch(key, &ps->index, pipe_key_cmp)) {
		free(key);
		return -ENOMEM;
	}
	return 0;
}

/*
 * A read end of the pipe behind @copy.  tee(2) needs one; when the fd is a
 * write end, the pipe is opened again for reading through /proc, which
 * reaches the same pipe (fifo_open) even when no task holds a read end:
 * its bytes are then saved too, so that a writer blocked on a full pipe
 * is still blocked after the restore.
 */
static int read_end(int copy, unsigned int flags)
{
	char path[64];

	if ((flags & O_ACCMODE) != O_WRONLY)
		return fcntl(copy, F_DUPFD_CLOEXEC, 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", copy);
	return open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
}

/*
 * Copy the buffered bytes without consuming them: tee(2) duplicates the
 * pipe's buffers into a private pipe as large as the original, which then
 * is read.  One tee copies everything or the pipe changed under us (the
 * tree is frozen, so it cannot).
 */
static int peek(struct files_pipe *p, int rd)
{
	int tmp[2], avail = 0, r = 0;
	ssize_t n;

	if (ioctl(rd, FIONREAD, &avail) < 0)
		return crf_error_errno(errno, "FIONREAD of pipe %llu", (unsigned long long)p->ino);
	if (avail <= 0)
		return 0;
	p->data = malloc((size_t)avail);
	if (!p->data)
		return crf_error_errno(ENOMEM, "pipe %llu", (unsigned long long)p->ino);
	if (pipe2(tmp, O_CLOEXEC | O_NONBLOCK) < 0)
		return crf_error_errno(errno, "pipe2");
	if (fcntl(tmp[1], F_SETPIPE_SZ, p->capacity) < 0)
		r = crf_error_errno(errno, "F_SETPIPE_SZ %u", p->capacity);
	n = r < 0 ? 0 : tee(rd, tmp[1], (size_t)avail, SPLICE_F_NONBLOCK);
	if (r == 0 && n != avail)
		r = crf_error_errno(n < 0 ? errno : EIO, "tee of pipe %llu: %zd of %d bytes",
				    (unsigned long long)p->ino, n, avail);
	while (r == 0 && p->len < (size_t)avail) {
		n = read(tmp[0], p->data + p->len, (size_t)avail - p->len);
		if (n <= 0)
			r = crf_error_errno(n < 0 ? errno : EIO, "reading pipe %llu's copy",
					    (unsigned long long)p->ino);
		else
			p->len += (size_t)n;
	}
	close(tmp[0]);
	close(tmp[1]);
	return r;
}

/* What --external and --inherit-fd call the pipe @p: "pipe:[INODE]" or "fifo:[INODE]". */
static void pipe_name(const struct files_pipe *p, char *buf, size_t len)
{
	snprintf(buf, len, "%s:[%llu]", p->fifo ? "fifo" : "pipe", (unsigned long long)p->ino);
}

/*
 * A pipe --external names is held outside the tree too: its bytes and its
 * capacity are that outside pipe's, not the tree's to save.  1 when it is
 * one (listed in external.img), 0 when not, or -errno (logged).
 */
static int pipe_note_external(struct files_dump *d, struct files_pipe *p)
{
	char name[64];
	int r;

	pipe_name(p, name, sizeof(name));
	if (!files_ext_named(d->tree->ext, name))
		return 0;
	r = files_ext_add(d->tree->ext, name, p->pid, p->fd);
	if (r < 0)
		return r;
	p->external = true;
	crf_info("pid %d: fd %d (%s) is external (--external): crf restore --inherit-fd "
		 "will give it",
		 p->pid, p->fd, name);
	return 1;
}

/* The pipe behind @copy, seen for the first time: capacity and bytes. */
static int pipe_new(struct files_dump *d, const struct crf_object *obj, int copy,
		    unsigned int flags, const struct stat *st)
{
	struct files_pipe *p = pipe_add(d->tree);
	_cleanup_close_ int rd = -1;
	int cap, r;

	if (!p)
		return crf_error_errno(ENOMEM, "pid %d: fd %d", d->pid, obj->id);
	p->dev = st->st_dev;
	p->ino = st->st_ino;
	if (pipe_index(d->tree->pipes) < 0)
		return crf_error_errno(ENOMEM, "pid %d: fd %d", d->pid, obj->id);
	if (!strcmp(obj->kind, "fifo") && !(p->fifo = strdup(obj->desc)))
		return crf_error_errno(ENOMEM, "pid %d: fd %d", d->pid, obj->id);
	p->pid = d->pid;
	p->fd = obj->id;
	r = pipe_note_external(d, p);
	if (r != 0)
		return r < 0 ? r : 0;
	cap = fcntl(copy, F_GETPIPE_SZ);
	if (cap < 0)
		return crf_error_errno(errno, "pid %d: F_GETPIPE_SZ of fd %d", d->pid, obj->id);
	p->capacity = (unsigned int)cap;
	rd = read_end(copy, flags);
	if (rd < 0)
		return crf_error_errno(errno, "pid %d: fd %d (%s): no read end", d->pid, obj->id,
				       obj->desc);
	r = peek(p, rd);
	if (r == 0)
		crf_debug("%s: capacity %u, %zu bytes buffered", obj->desc, p->capacity, p->len);
	return r;
}

/* A FIFO is reopened by its path: it must have one. */
static int refuse_fifo(const struct files_dump *d, const struct crf_object *obj)
{
	size_t len = strlen(obj->desc);

	if (strcmp(obj->kind, "fifo"))
		return 0;
	if (obj->desc[0] == '/' && !(len > 10 && !strcmp(obj->desc + len - 10, " (deleted)")))
		return 0;
	return crf_error_errno(ENOTSUP, "pid %d: fd %d: FIFO %s is not reachable by a path", d->pid,
			       obj->id, obj->desc);
}

/*
 * What a restore cannot make again: open() sets O_LARGEFILE, pipe() does
 * not, so a FIFO's description without it or a second one of a pipe end
 * without it (a 32-bit program's) has no way back; and buffered bytes of a
 * packet-mode (O_DIRECT) pipe are saved without their packet boundaries.
 */
static int desc_refuse(const struct files_dump *d, const struct files_pipe *p,
		       const Crf__Files__Fd *e)
{
	const char *why = NULL;

	if (!(e->flags & PIPE_O_LARGEFILE) && p->fifo)
		why = "an open of a FIFO without O_LARGEFILE";
	else if (!(e->flags & PIPE_O_LARGEFILE) && (e->flags & O_ACCMODE) == O_RDWR)
		why = "a read-write end without O_LARGEFILE";
	for (size_t k = 0; !why && k < p->n_descs; k++)
		if (!(e->flags & PIPE_O_LARGEFILE) && !(p->descs[k].flags & PIPE_O_LARGEFILE) &&
		    (p->descs[k].flags & O_ACCMODE) == (e->flags & O_ACCMODE))
			why = "a second end of one kind without O_LARGEFILE";
	if (!why && (e->flags & O_DIRECT) && p->len)
		why = "in packet mode (O_DIRECT) with bytes buffered, whose packets crf does not "
		      "save";
	if (!why)
		return 0;
	return crf_error_errno(ENOTSUP, "pid %d: fd %d (%s, flags %#o) is %s", d->pid, e->fd,
			       e->path, e->flags, why);
}

/*
 * Which open file description of pipe @p fd @e->fd is: one of those seen
 * before (kcmp), or a new one; its index in @e->pipe_desc.  A pipe has few
 * (its two ends, and any open of it again), so each is compared in turn.
 */
static int pipe_desc_note(struct files_dump *d, struct files_pipe *p, Crf__Files__Fd *e)
{
	struct pipe_desc *v;
	int r;

	for (size_t k = 0; k < p->n_descs; k++) {
		long same = syscall(SYS_kcmp, p->descs[k].pid, d->pid, KCMP_FILE, p->descs[k].fd,
				    e->fd);

		if (same < 0)
			return crf_error_errno(errno, "pid %d: fd %d: kcmp with fd %d of pid %d",
					       d->pid, e->fd, p->descs[k].fd, p->descs[k].pid);
		if (same == 0) {
			e->has_pipe_desc = true;
			e->pipe_desc = (uint32_t)k;
			return 0;
		}
	}
	r = desc_refuse(d, p, e);
	if (r < 0)
		return r;
	v = reallocarray(p->descs, p->n_descs + 1, sizeof(*v));
	if (!v)
		return crf_error_errno(ENOMEM, "pid %d: fd %d", d->pid, e->fd);
	p->descs = v;
	v[p->n_descs] = (struct pipe_desc){d->pid, e->fd, e->flags, -1};
	e->has_pipe_desc = true;
	e->pipe_desc = (uint32_t)p->n_descs++;
	return 0;
}

static int describe(struct files_dump *d, const struct crf_object *obj, Crf__Files__Fd *e)
{
	const struct stat *st;
	int copy, r;
	long i;

	r = files_cur_stat(d, &st);
	if (r < 0)
		return r;
	i = pipe_find(d->tree->pipes, st);
	if (i < 0) {
		/* A pipe seen first: its capacity and bytes, through a copy. */
		copy = files_cur_copy(d);
		if (copy < 0)
			return copy;
		r = pipe_new(d, obj, copy, e->flags, st);
		i = (long)d->tree->pipes->n - 1;
	}
	e->mode = st->st_mode;
	e->has_pipe = true;
	e->pipe = (uint32_t)i;
	d->tree->pipes->v[i].held |= 1u << (e->flags & O_ACCMODE);
	return r < 0 ? r : pipe_desc_note(d, &d->tree->pipes->v[i], e);
}

int files_pipe_dump(struct crf_ctx *ctx, const struct crf_object *obj)
{
	Crf__Files__Fd e = CRF__FILES__FD__INIT;
	struct files_dump *d;
	int r;

	r = files_fd_begin(ctx, obj, &e, &d);
	if (r == 0)
		r = refuse_fifo(d, obj);
	if (r == 0)
		r = describe(d, obj, &e);
	if (r == 0)
		r = files_fd_write(d, &e);
	if (r == 0)
		crf_debug("pid %d: fd %d: %s, flags %#o", d->pid, obj->id, obj->desc, e.flags);
	return r;
}

/*
 * Whether an outside holder of @p must be looked for: every pipe that
 * --external did not name.  One whose two ends are in the tree can have an
 * outside holder too (an extra writer, a FIFO opened by its path); a FIFO
 * held outside keeps its bytes across the kill, and the restore would
 * write them in again.
 */
static bool pipe_half(const struct files_pipe *p)
{
	return !p->external;
}

static int refuse_outside(const struct files_pipe *p, const struct files_lookout *w)
{
	unsigned int mode = w->flags & O_ACCMODE;
	char name[64];

	pipe_name(p, name, sizeof(name));
	return crf_error_errno(ENOTSUP,
			       "pid %d: fd %d (%s%s%s): the %s of the %s is held outside the tree "
			       "(pid %d '%s', fd %d); pass --external %s to crf dump to save it as "
			       "external, and --inherit-fd fd[N]:%s to crf restore to connect its "
			       "fd N in its place",
			       p->pid, p->fd, p->fifo ? p->fifo : name, p->fifo ? ", " : "",
			       p->fifo ? name : "",
			       mode == O_RDONLY	  ? "read end"
			       : mode == O_WRONLY ? "write end"
						  : "other end",
			       p->fifo ? "FIFO" : "pipe", (int)w->pid, w->comm, w->fd, name, name);
}

/*
 * A pipe whose other end is closed everywhere is the tree's own: it is
 * restored with that end closed, so a reader still gets the bytes, then
 * EOF.  One whose other end a process outside the tree holds cannot be
 * recreated (that process is not restored): refused, unless --external
 * named it.  Every pipe of the tree is looked for, all at once.
 */
static int pipes_check_outside(const struct files_tree *tree)
{
	const struct files_pipes *ps = tree ? tree->pipes : NULL;
	_cleanup_free_ struct files_lookout *v = NULL;
	size_t n = 0;
	int r;

	for (size_t i = 0; ps && i < ps->n; i++)
		n += pipe_half(&ps->v[i]);
	if (!n)
		return 0;
	v = calloc(n, sizeof(*v));
	if (!v)
		return crf_error_errno(ENOMEM, "pipes");
	n = 0;
	for (size_t i = 0; i < ps->n; i++)
		if (pipe_half(&ps->v[i]))
			v[n++] = (struct files_lookout){
				.dev = ps->v[i].dev, .ino = ps->v[i].ino, .fifo = !!ps->v[i].fifo};
	r = files_ext_find_holders(tree->ext, v, n);
	for (size_t i = 0, k = 0; r == 0 && i < ps->n; i++)
		if (pipe_half(&ps->v[i]) && v[k++].pid)
			r = refuse_outside(&ps->v[i], &v[k - 1]);
	return r;
}

/* @m's descs, pointing into *@store (both for the caller to free). */
static int descs_pack(const struct files_pipe *p, Crf__Files__Pipe *m, Crf__Files__PipeDesc **store)
{
	if (!p->n_descs)
		return 0;
	*store = calloc(p->n_descs, sizeof(**store));
	m->descs = calloc(p->n_descs, sizeof(*m->descs));
	if (!*store || !m->descs)
		return crf_error_errno(ENOMEM, "%s", PIPES_IMG);
	for (size_t k = 0; k < p->n_descs; k++) {
		crf__files__pipe_desc__init(&(*store)[k]);
		(*store)[k].flags = p->descs[k].flags;
		m->descs[k] = &(*store)[k];
	}
	m->n_descs = p->n_descs;
	return 0;
}

int files_pipes_dump_finish(struct crf_ctx *ctx)
{
	struct files_tree *tree = crf_ctx_priv(ctx);
	const struct files_pipes *ps = tree ? tree->pipes : NULL;
	struct crf_img *img;
	int r;

	r = pipes_check_outside(tree);
	if (r < 0)
		return r;
	r = crf_img_create(crf_ctx_images(ctx), PIPES_IMG, &crf__files__pipe__descriptor, &img);
	if (r < 0)
		return r;
	for (size_t i = 0; r == 0 && ps && i < ps->n; i++) {
		Crf__Files__Pipe m = CRF__FILES__PIPE__INIT;
		_cleanup_free_ Crf__Files__PipeDesc *descs = NULL;

		r = descs_pack(&ps->v[i], &m, &descs);
		if (r < 0)
			break;
		m.id = (uint32_t)i;
		m.dev = ps->v[i].dev;
		m.inode = ps->v[i].ino;
		m.capacity = ps->v[i].capacity;
		m.has_data = ps->v[i].len > 0;
		m.data.data = ps->v[i].data;
		m.data.len = ps->v[i].len;
		m.fifo = ps->v[i].fifo;
		m.has_external = m.external = ps->v[i].external;
		r = crf_img_write(img, &m.base);
		free(m.descs);
	}
	return crf_img_finish(img, r);
}

/*
 * A FIFO's descriptions.  Opening one end alone blocks until the other
 * side is open (or fails, O_WRONLY | O_NONBLOCK): the O_RDWR one is opened
 * first, so that the ends then open at once; it also keeps the FIFO's
 * buffer alive until the tasks hold their ends.
 */
static int fifo_open(struct files_pipe *p)
{
	static const int modes[] = {O_RDWR, O_RDONLY, O_WRONLY};
	struct stat st;

	for (int i = 0; i < 3; i++) {
		p->ends[modes[i]] = open(p->fifo, modes[i] | O_NONBLOCK | O_CLOEXEC);
		if (p->ends[modes[i]] < 0)
			return crf_error_errno(errno, "open FIFO %s", p->fifo);
	}
	if (fstat(p->ends[O_RDWR], &st) < 0)
		return crf_error_errno(errno, "FIFO %s", p->fifo);
	if (!S_ISFIFO(st.st_mode))
		return crf_error_errno(ESTALE, "%s is not a FIFO any more", p->fifo);
	return 0;
}

/*
 * Put @m's bytes into the pipe through write end @wr: written into a
 * private pipe, then spliced, since a write(2) to a FIFO sets its mtime and
 * ctime, which the program did not change (splice(2) leaves them).
 */
static int pipe_fill(int wr, const Crf__Files__Pipe *m)
{
	int tmp[2], r = 0;
	size_t done = 0;
	ssize_t n;

	if (!m->has_data || !m->data.len)
		return 0;
	if (pipe2(tmp, O_CLOEXEC | O_NONBLOCK) < 0)
		return crf_error_errno(errno, "pipe2");
	if (fcntl(tmp[1], F_GETPIPE_SZ) < (int)m->capacity &&
	    fcntl(tmp[1], F_SETPIPE_SZ, m->capacity) < 0)
		r = crf_error_errno(errno, "F_SETPIPE_SZ %u", m->capacity);
	while (r == 0 && done < m->data.len) {
		n = write(tmp[1], m->data.data + done, m->data.len - done);
		if (n <= 0)
			r = crf_error_errno(n < 0 ? errno : EIO, "pipe %llu: writing %zu bytes",
					    (unsigned long long)m->inode, m->data.len);
		else
			done += (size_t)n;
	}
	for (done = 0; r == 0 && done < m->data.len; done += (size_t)n) {
		n = splice(tmp[0], NULL, wr, NULL, m->data.len - done, SPLICE_F_NONBLOCK);
		if (n <= 0)
			r = crf_error_errno(n < 0 ? errno : EIO, "pipe %llu: moving %zu bytes in",
					    (unsigned long long)m->inode, m->data.len);
	}
	close(tmp[0]);
	close(tmp[1]);
	return r;
}

/*
 * Description @k of @m: an end pipe(2) made, as long as one without
 * O_LARGEFILE is wanted for its access mode (@taken says which are used),
 * or a new open of the FIFO, or of the pipe through /proc/self/fd; then
 * its status flags, checked.  O_ASYNC is set later, through the fd's
 * number (owner.c).
 */
static int desc_create(struct files_pipe *p, const Crf__Files__Pipe *m, size_t k, bool *taken)
{
	unsigned int flags = m->descs[k]->flags, mode = flags & O_ACCMODE, want;
	bool external = m->has_external && m->external;
	struct pipe_desc *pd = &p->descs[k];
	char proc[64];
	int got;

	if (mode > O_RDWR)
		return crf_error_errno(EBADMSG, "%s: pipe %u: flags %#o", PIPES_IMG, m->id, flags);
	/* An outside pipe's ends are all opens of it (pipe_connect). */
	if (external)
		flags |= PIPE_O_LARGEFILE;
	if (!external && !p->fifo && !(flags & PIPE_O_LARGEFILE) && mode != O_RDWR &&
	    !taken[mode]) {
		taken[mode] = true;
		pd->top = fcntl(p->ends[mode], F_DUPFD_CLOEXEC, 0);
	} else {
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", p->ends[O_RDONLY]);
		pd->top = open(p->fifo ? p->fifo : proc, (int)mode | O_NONBLOCK | O_CLOEXEC);
	}
	if (pd->top < 0)
		return crf_error_errno(errno, "pipe %llu (%s): opening it again",
				       (unsigned long long)m->inode, p->fifo ? p->fifo : "pipe");
	want = flags & ~(unsigned int)O_ASYNC;
	if (fcntl(pd->top, F_SETFL, (int)(flags & PIPE_SETFL)) < 0 ||
	    (got = fcntl(pd->top, F_GETFL)) < 0)
		return crf_error_errno(errno, "pipe %llu: flags %#o", (unsigned long long)m->inode,
				       flags);
	if (((unsigned int)got & ~(unsigned int)O_CLOEXEC) != want)
		return crf_error_errno(EINVAL, "pipe %llu: a description with flags %#o, not %#o",
				       (unsigned long long)m->inode, (unsigned int)got, want);
	return 0;
}

/* Every description of @m; then crf's first ends are closed (the descriptions hold the pipe). */
static int descs_create(struct files_pipe *p, const Crf__Files__Pipe *m)
{
	bool taken[2] = {false, false};
	int r = 0;

	p->descs = calloc(m->n_descs, sizeof(*p->descs));
	if (!p->descs)
		return crf_error_errno(ENOMEM, "pipe %llu", (unsigned long long)m->inode);
	for (size_t k = 0; k < m->n_descs; k++)
		p->descs[k].top = -1;
	p->n_descs = m->n_descs;
	for (size_t k = 0; r == 0 && k < m->n_descs; k++)
		r = desc_create(p, m, k, taken);
	for (int e = 0; r == 0 && e < 3; e++) {
		if (p->ends[e] >= 0)
			close(p->ends[e]);
		p->ends[e] = -1;
	}
	return r;
}

/* Create the pipe of @m, with its capacity and its bytes. */
static int pipe_create(struct files_pipe *p, const Crf__Files__Pipe *m)
{
	int fds[2], r;

	p->ino = m->inode;
	if (m->fifo) {
		p->fifo = strdup(m->fifo);
		if (!p->fifo)
			return crf_error_errno(ENOMEM, "FIFO %s", m->fifo);
		r = fifo_open(p);
		if (r < 0)
			return r;
	} else {
		if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0)
			return crf_error_errno(errno, "pipe2");
		p->ends[O_RDONLY] = fds[0];
		p->ends[O_WRONLY] = fds[1];
	}
	/* Before the bytes: they may need more than the default capacity. */
	if (fcntl(p->ends[O_WRONLY], F_GETPIPE_SZ) != (int)m->capacity &&
	    fcntl(p->ends[O_WRONLY], F_SETPIPE_SZ, m->capacity) < 0)
		return crf_error_errno(errno,
				       "pipe %llu: F_SETPIPE_SZ %u (see "
				       "/proc/sys/fs/pipe-max-size)",
				       (unsigned long long)m->inode, m->capacity);
	r = pipe_fill(p->ends[O_WRONLY], m);
	return r < 0 || !m->n_descs ? r : descs_create(p, m);
}

/*
 * An external pipe: every end is a new open of the pipe or FIFO that
 * --inherit-fd gave (through /proc/self/fd, which reaches the pipe itself,
 * whichever end crf restore holds), so the tree's O_NONBLOCK is never set
 * on crf restore's caller's description.  The read end first: a FIFO's
 * write end opens without blocking only once it has a reader.
 */
static int pipe_connect(const struct files_tree *tree, struct files_pipe *p,
			const Crf__Files__Pipe *m)
{
	static const int modes[] = {O_RDONLY, O_WRONLY, O_RDWR};
	char name[64], path[64];
	struct stat st;
	int fd;

	p->ino = m->inode;
	if (m->fifo && !(p->fifo = strdup(m->fifo)))
		return crf_error_errno(ENOMEM, "FIFO %s", m->fifo);
	pipe_name(p, name, sizeof(name));
	fd = files_ext_fd(tree->ext, name);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || !S_ISFIFO(st.st_mode))
		return crf_error_errno(ENOTSUP,
				       "--inherit-fd fd[%d]:%s: crf restore's fd %d is "
				       "not a pipe or FIFO",
				       fd, name, fd);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	for (int i = 0; i < 3; i++) {
		p->ends[modes[i]] = open(path, modes[i] | O_NONBLOCK | O_CLOEXEC);
		if (p->ends[modes[i]] < 0)
			return crf_error_errno(errno, "--inherit-fd fd[%d]:%s: open its %s end", fd,
					       name, modes[i] == O_RDONLY ? "read" : "write");
	}
	crf_info("%s is crf restore's fd %d (--inherit-fd)", name, fd);
	return m->n_descs ? descs_create(p, m) : 0;
}

int files_pipes_restore_prepare(struct crf_ctx *ctx)
{
	struct files_tree *tree = files_tree_get(ctx);
	struct crf_img *img;
	Crf__Files__Pipe *m;
	int r;

	if (!tree)
		return -ENOMEM;
	r = crf_img_open(crf_ctx_images(ctx), PIPES_IMG, &crf__files__pipe__descriptor, &img);
	if (r < 0)
		return r;
	while ((r = crf_img_read(img, (ProtobufCMessage **)&m)) > 0) {
		struct files_pipe *p = pipe_add(tree);

		if (!p)
			r = crf_error_errno(ENOMEM, "pipes");
		else if (m->id != tree->pipes->n - 1)
			r = crf_error_errno(EBADMSG, "%s: pipe %u out of order", PIPES_IMG, m->id);
		else if (m->has_external && m->external)
			r = pipe_connect(tree, p, m);
		else
			r = pipe_create(p, m);
		crf__files__pipe__free_unpacked(m, NULL);
		if (r < 0)
			break;
	}
	crf_img_close(img);
	return r;
}

/* A new fd on description @e->pipe_desc of pipe @p, which restore-prepare made. */
static int desc_dup(const struct files_pipe *p, const Crf__Files__Fd *e)
{
	int fd;

	if (e->pipe_desc >= p->n_descs || p->descs[e->pipe_desc].top < 0)
		return crf_error_errno(EBADMSG, "fd %d: no description %u of pipe %u (%s)", e->fd,
				       e->pipe_desc, e->pipe, e->path);
	fd = fcntl(p->descs[e->pipe_desc].top, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return crf_error_errno(errno, "fd %d: %s", e->fd, e->path);
	return fd;
}

int files_pipe_reopen(struct crf_ctx *ctx, const Crf__Files__Fd *e)
{
	const struct files_tree *tree = crf_ctx_priv(ctx);
	const struct files_pipes *ps = tree ? tree->pipes : NULL;
	unsigned int mode = e->flags & O_ACCMODE;
	_cleanup_close_ int fd = -1;
	int end, fl;

	if (ps && e->pipe < ps->n && e->has_pipe_desc)
		return desc_dup(&ps->v[e->pipe], e);
	if (!ps || e->pipe >= ps->n || mode > O_RDWR || ps->v[e->pipe].ends[mode] < 0)
		return crf_error_errno(EBADMSG, "fd %d: no such end of pipe %u (%s)", e->fd,
				       e->pipe, e->path);
	end = ps->v[e->pipe].ends[mode];
	fd = fcntl(end, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return crf_error_errno(errno, "fd %d: %s", e->fd, e->path);
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, (fl & ~O_NONBLOCK) | (int)(e->flags & O_NONBLOCK)) < 0)
		return crf_error_errno(errno, "fd %d: %s: flags", e->fd, e->path);
	return TAKE_FD(fd);
}
