// SPDX-License-Identifier: GPL-2.0-only
/*
 * Terminals, dump side.  A terminal fd is one of two things:
 *
 *  - an end of a pty whose master the tree holds (a terminal emulator,
 *    script, sshd...): the tree owns the pty, so its settings (termios,
 *    window size, packet mode, lock), the session it is the controlling
 *    terminal of and its foreground group are saved, and the restore
 *    creates a pty like it;
 *  - anything else (the shell's /dev/pts/N on fds 0-2, a console): an
 *    external terminal, which crf cannot recreate.  With --shell-job (the
 *    plugin's "shell-job" key) it is saved as such, and the restore puts
 *    crf restore's own terminal in its place; without, the dump refuses
 *    it, naming the fd, rather than restore a job cut off its terminal.
 *
 * Whether the tree holds a slave's master is known only once every task
 * is walked, so each terminal is collected by device as its fds are met,
 * and dump-finish decides and writes ttys.img.  Each fd is an Fd record
 * naming its terminal (TtyFd), with its flags; dups and descriptions
 * shared between tasks are found with kcmp like any other (shared.c).
 *
 * The bytes buffered in a pty cannot be saved: a terminal has no peek, and
 * reading them would take them from the tree, which may run on
 * (--leave-running).  A pty of the tree's with bytes buffered either way
 * is refused, naming it and the count.  An external terminal's settings
 * and window size are saved too: crf restore --shell-job gives them to
 * its own terminal, which the shell may have set back to its own since.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "files.pb-c.h"
#include "tty.h"

#define PTS_MAJOR    136 /* UNIX98 pty slaves: majors 136 to 143 */
#define PTS_MAJORS   8
#define TTYAUX_MAJOR 5 /* /dev/tty 5:0, /dev/console 5:1, /dev/ptmx 5:2 */
#define VT_MAJOR     4 /* virtual consoles and serial lines */
#define TTYS_IMG     "ttys.img"

static bool is_pts(uint64_t rdev)
{
	return major(rdev) >= PTS_MAJOR && major(rdev) < PTS_MAJOR + PTS_MAJORS;
}

static uint64_t pts_rdev(uint32_t index)
{
	return makedev(PTS_MAJOR + index / 256, index % 256);
}

bool files_is_tty(const struct crf_object *obj)
{
	unsigned int maj, min;

	if (obj->cls != CRF_OBJ_FD || !obj->kind || sscanf(obj->kind, "chr:%u:%u", &maj, &min) != 2)
		return false;
	if (maj >= PTS_MAJOR && maj < PTS_MAJOR + PTS_MAJORS)
		return true;
	return maj == VT_MAJOR || (maj == TTYAUX_MAJOR && min <= 2);
}

int files_shell_job(struct crf_ctx *ctx)
{
	return files_config_bool(ctx, "shell-job");
}

static struct files_ttys *tree_ttys(struct files_tree *tree)
{
	if (!tree)
		return NULL;
	if (!tree->ttys) {
		tree->ttys = calloc(1, sizeof(*tree->ttys));
		if (!tree->ttys) {
			crf_error_errno(ENOMEM, "terminals");
			return NULL;
		}
		tree->ttys->term_fd = -1;
	}
	return tree->ttys;
}

struct files_ttys *files_ttys_get(struct crf_ctx *ctx)
{
	return tree_ttys(files_tree_get(ctx));
}

void files_ttys_free(struct files_ttys *ttys)
{
	if (!ttys)
		return;
	for (size_t i = 0; i < ttys->n; i++) {
		free(ttys->v[i].path);
		if (ttys->v[i].rec)
			crf__files__tty__free_unpacked(ttys->v[i].rec, NULL);
		if (ttys->v[i].master_fd >= 0)
			close(ttys->v[i].master_fd);
	}
	if (ttys->term_fd >= 0)
		close(ttys->term_fd);
	free(ttys->v);
	free(ttys->tasks);
	free(ttys);
}

/* The terminal of device @rdev, added with fd @fd of @pid when new; NULL: ENOMEM. */
static struct files_term *term_get(struct files_ttys *ttys, uint64_t rdev, int pid, int fd,
				   const char *path)
{
	struct files_term *t;

	for (size_t i = 0; i < ttys->n; i++)
		if (ttys->v[i].rdev == rdev)
			return &ttys->v[i];
	t = reallocarray(ttys->v, ttys->n + 1, sizeof(*t));
	if (!t)
		return NULL;
	ttys->v = t;
	t += ttys->n;
	*t = (struct files_term){.rdev = rdev, .pid = pid, .fd = fd, .master_fd = -1};
	t->path = strdup(path);
	if (!t->path)
		return NULL;
	t->pts = is_pts(rdev);
	if (t->pts)
		t->index = (major(rdev) - PTS_MAJOR) * 256 + minor(rdev);
	ttys->n++;
	return t;
}

/* A pty's own state, read through a copy of its master. */
static int read_master(const struct files_dump *d, int fd, int copy, struct files_term *t)
{
	int n = 0;

	if (tcgetattr(copy, &t->tio) < 0 || ioctl(copy, TIOCGWINSZ, &t->ws) < 0 ||
	    ioctl(copy, TIOCGPKT, &t->packet) < 0 || ioctl(copy, TIOCGPTLCK, &t->locked) < 0)
		return crf_error_errno(errno, "pid %d: fd %d: the settings of pty %u", d->pid, fd,
				       t->index);
	t->settings = true;
	/* ENOTTY: the pty is nobody's controlling terminal. */
	if (ioctl(copy, TIOCGSID, &t->sid) < 0)
		t->sid = 0;
	if (!t->sid || ioctl(copy, TIOCGPGRP, &t->fg) < 0)
		t->fg = 0;
	if (ioctl(copy, FIONREAD, &n) < 0)
		return crf_error_errno(errno, "pid %d: fd %d: FIONREAD of pty %u", d->pid, fd,
				       t->index);
	t->out_queued = (unsigned int)n;
	t->master = true;
	return 0;
}

/*
 * A terminal itself (a slave, a console): its settings, if no fd told
 * them yet, and for a pty slave what only the slave tells: the bytes
 * buffered for it to read (every fd of it sees the same queue) and the
 * owner and permissions of its inode.
 */
static int read_slave(const struct files_dump *d, int fd, int copy, const struct stat *st,
		      struct files_term *t)
{
	int n = 0;

	if (!t->settings) {
		if (tcgetattr(copy, &t->tio) < 0 || ioctl(copy, TIOCGWINSZ, &t->ws) < 0)
			return crf_error_errno(errno, "pid %d: fd %d (%s): its settings", d->pid,
					       fd, t->path);
		t->settings = true;
	}
	if (!t->pts)
		return 0;
	if (!t->slave_seen) {
		if (ioctl(copy, FIONREAD, &n) < 0)
			return crf_error_errno(errno, "pid %d: fd %d (%s): FIONREAD", d->pid, fd,
					       t->path);
		t->in_queued = (unsigned int)n;
		t->slave_seen = true;
	}
	/* /dev/tty's inode is not the slave's. */
	if (!t->owner_seen && is_pts(st->st_rdev)) {
		t->uid = st->st_uid;
		t->gid = st->st_gid;
		t->perm = st->st_mode & 07777;
		t->owner_seen = true;
	}
	return 0;
}

/* Which terminal fd @fd is on, from a copy of it: *@tp, and whether it is a master. */
static int identify(struct files_ttys *ttys, const struct files_dump *d, int fd, const char *path,
		    const struct stat *st, int copy, struct files_term **tp, bool *master)
{
	uint64_t rdev = st->st_rdev;
	unsigned int dev, index;

	*master = major(rdev) == TTYAUX_MAJOR && minor(rdev) == 2;
	if (*master) {
		if (ioctl(copy, TIOCGPTN, &index) < 0)
			return crf_error_errno(errno, "pid %d: fd %d (%s): TIOCGPTN", d->pid, fd,
					       path);
		rdev = pts_rdev(index);
	} else if (major(rdev) == TTYAUX_MAJOR && minor(rdev) == 0) {
		/* /dev/tty: the task's controlling terminal, whichever it is. */
		if (ioctl(copy, TIOCGDEV, &dev) < 0)
			return crf_error_errno(errno, "pid %d: fd %d (%s): TIOCGDEV", d->pid, fd,
					       path);
		rdev = makedev(major(dev), minor(dev));
	}
	*tp = term_get(ttys, rdev, d->pid, fd, path);
	if (!*tp)
		return crf_error_errno(ENOMEM, "pid %d: fd %d (%s)", d->pid, fd, path);
	if (*master)
		return (*tp)->master ? 0 : read_master(d, fd, copy, *tp);
	return read_slave(d, fd, copy, st, *tp);
}

static int refuse_external(const struct files_term *t)
{
	return crf_error_errno(
		ENOTSUP,
		"pid %d: fd %d (%s) is a terminal the tree does not own (a shell's?): "
		"pass --shell-job to dump it as such",
		t->pid, t->fd, t->path);
}

/* The inode of the terminal of @e, through a copy of its fd (*@copy). */
static int describe(struct files_dump *d, struct stat *st, int *copy, Crf__Files__Fd *e)
{
	const struct stat *cur;
	int r = files_cur_stat(d, &cur);

	if (r < 0)
		return r;
	*st = *cur;
	*copy = files_cur_copy(d);
	if (*copy < 0)
		return *copy;
	e->mode = st->st_mode;
	e->has_rdev = true;
	e->rdev = st->st_rdev;
	return 0;
}

int files_tty_dump(struct crf_ctx *ctx, const struct crf_object *obj)
{
	Crf__Files__Fd e = CRF__FILES__FD__INIT;
	Crf__Files__TtyFd tf = CRF__FILES__TTY_FD__INIT;
	struct files_term *t = NULL;
	struct files_ttys *ttys;
	struct files_dump *d;
	int fd = obj->id, copy = -1, same = 0, shell_job, r;
	struct stat st;
	bool master = false;

	r = files_fd_begin(ctx, obj, &e, &d);
	if (r < 0)
		return r;
	ttys = tree_ttys(d->tree);
	if (!ttys)
		return -ENOMEM;
	shell_job = files_shell_job(ctx);
	if (shell_job < 0)
		return shell_job;
	r = describe(d, &st, &copy, &e);
	if (r == 0)
		r = identify(ttys, d, fd, e.path, &st, copy, &t, &master);
	/* A console or serial line is never the tree's own: no need to wait for the walk's end. */
	if (r == 0 && !t->pts && !shell_job)
		r = refuse_external(t);
	if (r == 0) {
		tf.id = (uint32_t)(t - ttys->v);
		tf.master = master;
		e.tty = &tf;
		same = files_desc_find(d, fd, &e);
		r = same < 0 ? same : same ? 0 : files_desc_remember(d, fd);
	}
	if (r == 0)
		r = files_fd_write(d, &e);
	if (r == 0)
		crf_debug("pid %d: fd %d: %s, terminal %u%s, flags %#o%s", d->pid, fd, e.path,
			  tf.id, master ? " (master)" : "", e.flags, same ? " (shared)" : "");
	return r;
}

/* Decode /proc/PID/stat's tty_nr (the kernel's new_encode_dev). */
static uint64_t decode_tty_nr(unsigned long v)
{
	if (!v)
		return 0;
	return makedev((v >> 8) & 0xfff, (v & 0xff) | ((v >> 12) & 0xfff00));
}

int files_tty_note_task(const struct files_dump *d)
{
	struct files_ttys *ttys = tree_ttys(d->tree);
	struct files_tty_task *v, tk = {.pid = d->pid};
	char path[64], buf[1024], *end;
	unsigned long tty_nr;
	ssize_t n;
	int fd;

	if (!ttys)
		return -ENOMEM;
	snprintf(path, sizeof(path), "/proc/%d/stat", d->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return crf_error_errno(errno, "pid %d: open %s", d->pid, path);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return crf_error_errno(errno, "pid %d: read %s", d->pid, path);
	buf[n] = '\0';
	/* "pid (comm) S ppid pgrp session tty_nr tpgid ...": comm may hold ") ". */
	end = strrchr(buf, ')');
	if (!end ||
	    sscanf(end + 1, " %*c %*d %d %d %lu %d", &tk.pgrp, &tk.sid, &tty_nr, &tk.tpgid) != 4)
		return crf_error_errno(EBADMSG, "pid %d: %s: cannot parse", d->pid, path);
	tk.tty = decode_tty_nr(tty_nr);
	v = reallocarray(ttys->tasks, ttys->n_tasks + 1, sizeof(*v));
	if (!v)
		return crf_error_errno(ENOMEM, "pid %d: terminals", d->pid);
	ttys->tasks = v;
	v[ttys->n_tasks++] = tk;
	return 0;
}

static const struct files_tty_task *task_of(const struct files_ttys *ttys, pid_t pid)
{
	for (size_t i = 0; i < ttys->n_tasks; i++)
		if (ttys->tasks[i].pid == pid)
			return &ttys->tasks[i];
	return NULL;
}

/* An external terminal of a shell job: its foreground, if a group of the tree had it. */
static int check_external(const struct files_ttys *ttys, const struct files_term *t,
			  Crf__Files__Tty *m)
{
	for (size_t i = 0; i < ttys->n_tasks; i++) {
		const struct files_tty_task *k = &ttys->tasks[i];

		if (k->tty != t->rdev)
			continue;
		if (k->sid == k->pid)
			return crf_error_errno(ENOTSUP,
					       "pid %d leads the session of its terminal %s: "
					       "--shell-job restores a shell's job, not the shell",
					       (int)k->pid, t->path);
		if (!m->has_fg_pid && k->tpgid == k->pgrp) {
			m->has_fg_pid = true;
			m->fg_pid = k->pid;
		}
	}
	crf_info("terminal %s (pid %d fd %d) is external: crf restore's own will take its place, "
		 "with its settings%s",
		 t->path, t->pid, t->fd, m->has_fg_pid ? ", and its foreground group" : "");
	return 0;
}

/* A pty of the tree: its session's leader and its foreground group must be in the tree. */
static int check_pty(const struct files_ttys *ttys, const struct files_term *t)
{
	bool fg_found = !t->fg;

	if (t->sid && (!task_of(ttys, t->sid) || task_of(ttys, t->sid)->sid != t->sid))
		return crf_error_errno(ENOTSUP,
				       "pty %u (%s, pid %d fd %d) is the controlling terminal of "
				       "session %d, whose leader is not in the tree",
				       t->index, t->path, t->pid, t->fd, (int)t->sid);
	for (size_t i = 0; i < ttys->n_tasks && !fg_found; i++)
		fg_found = ttys->tasks[i].pgrp == t->fg;
	if (!fg_found)
		return crf_error_errno(ENOTSUP,
				       "pty %u (%s): its foreground group %d is not in the tree",
				       t->index, t->path, (int)t->fg);
	/* Its slave's queue can be read only through a slave: opening one would change the pty. */
	if (!t->slave_seen)
		return crf_error_errno(
			ENOTSUP,
			"pty %u (%s, pid %d fd %d): no process of the tree holds its "
			"slave, so the bytes buffered for it cannot be counted",
			t->index, t->path, t->pid, t->fd);
	if (t->in_queued || t->out_queued)
		return crf_error_errno(
			ENOTSUP,
			"pty %u (%s, pid %d fd %d): %u bytes are buffered in it (%u "
			"for its slave to read, %u for its master), which crf cannot "
			"save without taking them from the tree",
			t->index, t->path, t->pid, t->fd, t->in_queued + t->out_queued,
			t->in_queued, t->out_queued);
	return 0;
}

/* The settings of terminal @t into @m (sub-messages @tio, @ws, whose cc points into @t). */
static void fill_settings(const struct files_term *t, Crf__Files__Tty *m, Crf__Files__Termios *tio,
			  Crf__Files__Winsize *ws)
{
	if (!t->settings)
		return;
	tio->iflag = t->tio.c_iflag;
	tio->oflag = t->tio.c_oflag;
	tio->cflag = t->tio.c_cflag;
	tio->lflag = t->tio.c_lflag;
	tio->line = t->tio.c_line;
	tio->cc.data = (uint8_t *)t->tio.c_cc;
	tio->cc.len = sizeof(t->tio.c_cc);
	tio->ispeed = (uint32_t)cfgetispeed(&t->tio);
	tio->ospeed = (uint32_t)cfgetospeed(&t->tio);
	ws->rows = t->ws.ws_row;
	ws->cols = t->ws.ws_col;
	ws->xpixel = t->ws.ws_xpixel;
	ws->ypixel = t->ws.ws_ypixel;
	m->termios = tio;
	m->winsize = ws;
}

/* The record of terminal @i; its sub-messages point into @tio, @ws and @cc. */
static int fill_record(const struct files_ttys *ttys, size_t i, Crf__Files__Tty *m,
		       Crf__Files__Termios *tio, Crf__Files__Winsize *ws)
{
	const struct files_term *t = &ttys->v[i];

	m->id = (uint32_t)i;
	m->index = t->index;
	m->rdev = t->rdev;
	m->external = !t->master;
	fill_settings(t, m, tio, ws);
	if (m->external)
		return check_external(ttys, t, m);
	m->has_uid = m->has_gid = m->has_perm = t->owner_seen;
	m->uid = t->uid;
	m->gid = t->gid;
	m->perm = t->perm;
	m->has_packet = m->has_locked = m->has_sid = m->has_fg_pgrp = true;
	m->packet = t->packet;
	m->locked = t->locked;
	m->sid = t->sid;
	m->fg_pgrp = t->fg;
	return check_pty(ttys, t);
}

int files_ttys_dump_finish(struct crf_ctx *ctx)
{
	struct files_ttys *ttys = files_ttys_get(ctx);
	struct crf_img *img = NULL;
	int shell_job = files_shell_job(ctx), r;

	if (!ttys)
		return -ENOMEM;
	if (shell_job < 0)
		return shell_job;
	for (size_t i = 0; i < ttys->n; i++)
		if (!ttys->v[i].master && !shell_job)
			return refuse_external(&ttys->v[i]);
	r = crf_img_create(crf_ctx_images(ctx), TTYS_IMG, &crf__files__tty__descriptor, &img);
	for (size_t i = 0; r == 0 && i < ttys->n; i++) {
		Crf__Files__Tty m = CRF__FILES__TTY__INIT;
		Crf__Files__Termios tio = CRF__FILES__TERMIOS__INIT;
		Crf__Files__Winsize ws = CRF__FILES__WINSIZE__INIT;

		r = fill_record(ttys, i, &m, &tio, &ws);
		if (r == 0)
			r = crf_img_write(img, &m.base);
	}
	return crf_img_finish(img, r);
}
