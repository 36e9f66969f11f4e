// SPDX-License-Identifier: GPL-2.0-only
/*
 * Terminals, restore side (see tty.c for what is saved).
 *
 * Each pty of the tree is created once, in restore-prepare, in crf's top
 * process, from /dev/ptmx: the kernel picks its index, which may differ
 * from the dump's (a program that remembers its ptsname sees a stale
 * name).  It gets the saved termios, window size and packet mode through
 * the master (the kernel applies them to the slave), and is unlocked so
 * that the tasks can open its slave; one that was locked is locked again
 * in restore-finish.  Every master fd of the tree is a dup of crf's (a
 * master has one description: each open of /dev/ptmx is a new pty), and
 * each slave description is a new open of the new slave.
 *
 * A controlling terminal belongs to a session, but the kernel notes it in
 * each process: the leader that takes one (TIOCSCTTY) gets it, and the
 * processes it forks from then on inherit it; members that exist already
 * never do.  So the leader takes its pty in restore-session, right after
 * its setsid() and before it forks its session's members; its foreground
 * group exists only once every process has joined its group, so the
 * leader sets it in restore-task.
 *
 * An external terminal (a shell job's, --shell-job) is crf restore's own:
 * the first of its fds 0-2 that is a terminal, or its controlling
 * terminal.  Each fd of the tree on it is a new open of that terminal
 * with the fd's flags (never O_NONBLOCK on the caller's own description
 * by surprise).  The tree's root was born in crf restore's session (the
 * core keeps a root that did not lead its session in its caller's
 * session and group), so in restore-finish crf gives the terminal the
 * job's termios and window size, then the foreground back to the group
 * that had it at the dump.  crf restore -d then exits, and an interactive
 * shell takes its terminal back (as after any foreground command): the
 * job is left in the background.  Without -d crf restore waits for it,
 * as the shell waited for the job.
 *
 * A pty of the tree's own gets the owner and permissions of its slave's
 * inode back (devpts makes a new one root's, 0620).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/image.h>

#include "files.pb-c.h"
#include "tty.h"

#define TTYS_IMG "ttys.img"
/* The flags only open() itself looks at, or that must not apply again. */
#define OPEN_ONLY (O_CREAT | O_EXCL | O_TRUNC | O_NOCTTY | O_CLOEXEC)
/* What F_SETFL changes on a description. */
#define SETFL_MASK (O_APPEND | O_NONBLOCK | O_ASYNC | O_DIRECT | O_NOATIME)

/* tcsetpgrp() from a background group, without being stopped by SIGTTOU. */
static int set_foreground(int fd, pid_t pgrp)
{
	sigset_t ttou, old;
	int r = 0;

	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ttou, &old);
	if (tcsetpgrp(fd, pgrp) < 0)
		r = -errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	return r;
}

/* The saved settings of @m; 0, or -EBADMSG (logged) when it has none. */
static int decode_settings(const Crf__Files__Tty *m, struct termios *tio, struct winsize *ws)
{
	const Crf__Files__Termios *s = m->termios;

	if (!s || !m->winsize || s->cc.len != sizeof(tio->c_cc))
		return crf_error_errno(EBADMSG, "%s: terminal %u: no settings", TTYS_IMG, m->id);
	*tio = (struct termios){0};
	tio->c_iflag = s->iflag;
	tio->c_oflag = s->oflag;
	tio->c_cflag = s->cflag;
	tio->c_lflag = s->lflag;
	tio->c_line = (cc_t)s->line;
	memcpy(tio->c_cc, s->cc.data, sizeof(tio->c_cc));
	*ws = (struct winsize){.ws_row = (unsigned short)m->winsize->rows,
			       .ws_col = (unsigned short)m->winsize->cols,
			       .ws_xpixel = (unsigned short)m->winsize->xpixel,
			       .ws_ypixel = (unsigned short)m->winsize->ypixel};
	if (cfsetispeed(tio, s->ispeed) < 0 || cfsetospeed(tio, s->ospeed) < 0)
		return crf_error_errno(EBADMSG, "%s: terminal %u: speeds %u/%u", TTYS_IMG, m->id,
				       s->ispeed, s->ospeed);
	return 0;
}

/*
 * Settings and window size on @fd, from a background group too (SIGTTOU
 * blocked: crf restore may not be its terminal's foreground).
 */
static int set_settings(int fd, const struct termios *tio, const struct winsize *ws)
{
	sigset_t ttou, old;
	int r = 0;

	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ttou, &old);
	if (tcsetattr(fd, TCSANOW, tio) < 0 || ioctl(fd, TIOCSWINSZ, ws) < 0)
		r = -errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	return r;
}

/* The new slave's inode gets the owner and permissions the old one had. */
static int set_owner(const struct files_term *t)
{
	const Crf__Files__Tty *m = t->rec;

	if (!m->has_uid || !m->has_gid || !m->has_perm)
		return 0;
	if (chown(t->slave, m->uid, m->gid) < 0 || chmod(t->slave, m->perm & 07777) < 0)
		return crf_error_errno(errno, "pty %u (now %s): owner %u:%u, mode %#o", m->index,
				       t->slave, m->uid, m->gid, m->perm);
	return 0;
}

static int create_pty(struct files_term *t)
{
	const Crf__Files__Tty *m = t->rec;
	struct termios tio;
	struct winsize ws;
	int zero = 0, one = 1, index, fd, r;

	r = decode_settings(m, &tio, &ws);
	if (r < 0)
		return r;
	fd = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return crf_error_errno(errno, "pty %u: open /dev/ptmx", m->index);
	t->master_fd = fd;
	if (ioctl(fd, TIOCSPTLCK, &zero) < 0 || ioctl(fd, TIOCGPTN, &index) < 0)
		return crf_error_errno(errno, "pty %u: unlock the new pty", m->index);
	snprintf(t->slave, sizeof(t->slave), "/dev/pts/%d", index);
	r = set_settings(fd, &tio, &ws);
	if (r < 0)
		return crf_error_errno(-r, "pty %u (now %s): set its termios and window size",
				       m->index, t->slave);
	r = set_owner(t);
	if (r < 0)
		return r;
	/* Last: changes of settings would queue status packets for the master. */
	if (m->has_packet && m->packet && ioctl(fd, TIOCPKT, &one) < 0)
		return crf_error_errno(errno, "pty %u (now %s): packet mode", m->index, t->slave);
	if (m->index != (uint32_t)index)
		crf_info("pty %u of the dump is %s now", m->index, t->slave);
	return 0;
}

/* crf restore's own terminal: the first of fds 0-2 on one, or its controlling terminal. */
static int find_own_terminal(struct files_ttys *ttys)
{
	unsigned int dev;
	int fd;

	for (fd = 0; fd <= 2; fd++)
		if (isatty(fd) && ttyname_r(fd, ttys->term_path, sizeof(ttys->term_path)) == 0)
			break;
	if (fd > 2) {
		fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			return crf_error_errno(ENOTTY,
					       "--shell-job: crf restore has no terminal (fds 0-2 "
					       "are not terminals, and it has no controlling one)");
		if (ioctl(fd, TIOCGDEV, &dev) < 0 || major(dev) < 136 || major(dev) >= 144) {
			close(fd);
			return crf_error_errno(
				ENOTTY, "--shell-job: crf restore's controlling terminal "
					"is not a pty, and none of its fds 0-2 is a terminal");
		}
		close(fd);
		snprintf(ttys->term_path, sizeof(ttys->term_path), "/dev/pts/%u",
			 (major(dev) - 136) * 256 + minor(dev));
	}
	ttys->term_fd = open(ttys->term_path, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (ttys->term_fd < 0)
		return crf_error_errno(errno, "--shell-job: open crf restore's terminal %s",
				       ttys->term_path);
	crf_info("the tree's external terminal is %s, crf restore's", ttys->term_path);
	return 0;
}

/* Read ttys.img into @ttys; 0 or -errno (logged). */
static int read_records(struct crf_ctx *ctx, struct files_ttys *ttys)
{
	Crf__Files__Tty *m;
	struct crf_img *img;
	int r;

	r = crf_img_open(crf_ctx_images(ctx), TTYS_IMG, &crf__files__tty__descriptor, &img);
	if (r < 0)
		return r;
	while ((r = crf_img_read(img, (ProtobufCMessage **)&m)) > 0) {
		struct files_term *v = NULL;

		if (m->id != ttys->n)
			r = crf_error_errno(EBADMSG, "%s: terminal %u out of order", TTYS_IMG,
					    m->id);
		else if (!(v = reallocarray(ttys->v, ttys->n + 1, sizeof(*v))))
			r = crf_error_errno(ENOMEM, "%s", TTYS_IMG);
		if (r < 0) {
			crf__files__tty__free_unpacked(m, NULL);
			break;
		}
		ttys->v = v;
		ttys->v[ttys->n++] = (struct files_term){
			.index = m->index, .rdev = m->rdev, .rec = m, .master_fd = -1};
	}
	crf_img_close(img);
	return r;
}

int files_ttys_restore_prepare(struct crf_ctx *ctx)
{
	struct files_ttys *ttys = files_ttys_get(ctx);
	int shell_job = files_shell_job(ctx), r;
	bool external = false;

	if (!ttys)
		return -ENOMEM;
	if (shell_job < 0)
		return shell_job;
	r = read_records(ctx, ttys);
	for (size_t i = 0; r >= 0 && i < ttys->n; i++) {
		const struct files_term *t = &ttys->v[i];

		if (t->rec->external && !shell_job)
			return crf_error_errno(ENOTSUP,
					       "the dump has fds on a terminal it does not own "
					       "(%u:%u, a shell's): pass --shell-job to give "
					       "them crf restore's",
					       major(t->rdev), minor(t->rdev));
		external |= t->rec->external;
		if (!t->rec->external)
			r = create_pty(&ttys->v[i]);
	}
	if (r >= 0 && external)
		r = find_own_terminal(ttys);
	return r < 0 ? r : 0;
}

int files_tty_open(struct crf_ctx *ctx, const Crf__Files__Fd *e)
{
	struct files_ttys *ttys = files_ttys_get(ctx);
	int flags = (int)(e->flags & ~(unsigned int)OPEN_ONLY) | O_NOCTTY | O_CLOEXEC;
	const struct files_term *t;
	_cleanup_close_ int fd = -1;
	const char *path;

	if (!ttys)
		return -ENOMEM;
	if (!e->tty || e->tty->id >= ttys->n)
		return crf_error_errno(EBADMSG, "fd %d: %s: no such terminal in %s", e->fd, e->path,
				       TTYS_IMG);
	t = &ttys->v[e->tty->id];
	if (e->tty->master) {
		if (t->master_fd < 0)
			return crf_error_errno(EBADMSG,
					       "fd %d: %s: the master of a terminal "
					       "the tree does not own",
					       e->fd, e->path);
		fd = fcntl(t->master_fd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0)
			return crf_error_errno(errno, "fd %d: master of %s", e->fd, t->slave);
		if (fcntl(fd, F_SETFL, (int)(e->flags & SETFL_MASK)) < 0)
			return crf_error_errno(errno, "fd %d: master of %s: flags %#o", e->fd,
					       t->slave, e->flags);
		return TAKE_FD(fd);
	}
	path = t->rec->external ? ttys->term_path : t->slave;
	fd = open(path, flags);
	if (fd < 0)
		return crf_error_errno(errno, "fd %d: %s: open %s", e->fd, e->path, path);
	return TAKE_FD(fd);
}

/* The session leader @pid takes its pty again. */
static int take_ctty(const struct files_term *t, pid_t pid)
{
	_cleanup_close_ int fd = open(t->slave, O_RDWR | O_NOCTTY | O_CLOEXEC);
	int r = 0;

	if (fd < 0)
		return crf_error_errno(errno, "pid %d: open %s", (int)pid, t->slave);
	if (ioctl(fd, TIOCSCTTY, 0) < 0)
		r = crf_error_errno(errno, "pid %d: make %s its controlling terminal", (int)pid,
				    t->slave);
	if (r == 0)
		crf_debug("pid %d: %s is its controlling terminal", (int)pid, t->slave);
	return r;
}

/* ... and, once the groups exist, gives its foreground back. */
static int give_pty_foreground(const struct files_term *t, pid_t pid)
{
	_cleanup_close_ int fd = -1;
	int r;

	if (!t->rec->fg_pgrp)
		return 0;
	fd = open(t->slave, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return crf_error_errno(errno, "pid %d: open %s", (int)pid, t->slave);
	r = set_foreground(fd, t->rec->fg_pgrp);
	if (r < 0)
		return crf_error_errno(-r, "pid %d: make group %d the foreground of %s", (int)pid,
				       t->rec->fg_pgrp, t->slave);
	return 0;
}

static int each_led_pty(struct crf_ctx *ctx, int (*fn)(const struct files_term *, pid_t))
{
	const struct files_tree *tree = crf_ctx_priv(ctx);
	const struct files_ttys *ttys = tree ? tree->ttys : NULL;
	pid_t pid = crf_ctx_pid(ctx);
	int r = 0;

	for (size_t i = 0; ttys && r == 0 && i < ttys->n; i++)
		if (!ttys->v[i].rec->external && ttys->v[i].rec->sid == pid)
			r = fn(&ttys->v[i], pid);
	return r;
}

int files_tty_restore_session(struct crf_ctx *ctx)
{
	return each_led_pty(ctx, take_ctty);
}

int files_tty_restore_task(struct crf_ctx *ctx)
{
	return each_led_pty(ctx, give_pty_foreground);
}

/* The group of @pid was the foreground of the external terminal: it is again. */
static int give_foreground(const struct files_ttys *ttys, pid_t pid)
{
	pid_t sid = getsid(pid), pgrp = getpgid(pid);
	int r;

	if (sid < 0 || pgrp < 0)
		return crf_error_errno(errno, "pid %d: its session or group", (int)pid);
	if (sid != getsid(0))
		return crf_error_errno(ENOTTY,
				       "pid %d is in session %d, not in crf restore's (%d): "
				       "it cannot have the foreground of %s",
				       (int)pid, (int)sid, (int)getsid(0), ttys->term_path);
	r = set_foreground(ttys->term_fd, pgrp);
	if (r < 0)
		return crf_error_errno(-r, "make group %d (of pid %d) the foreground of %s",
				       (int)pgrp, (int)pid, ttys->term_path);
	crf_debug("group %d (of pid %d) has the foreground of %s", (int)pgrp, (int)pid,
		  ttys->term_path);
	return 0;
}

/*
 * The external terminal gets the job's settings back: a shell sets its
 * own again when a job ends or stops (so less or vim would come back in
 * cooked mode, keys echoed), and crf restore's terminal may be another
 * one.  Dumps before the settings were saved have none to apply.
 */
static int give_settings(const struct files_ttys *ttys, const Crf__Files__Tty *m)
{
	struct termios tio;
	struct winsize ws;
	int r;

	if (!m->termios && !m->winsize)
		return 0;
	r = decode_settings(m, &tio, &ws);
	if (r == 0)
		r = set_settings(ttys->term_fd, &tio, &ws);
	if (r < 0)
		return crf_error_errno(-r, "%s: set the job's termios and window size",
				       ttys->term_path);
	crf_debug("%s has the job's settings (%ux%u)", ttys->term_path, ws.ws_row, ws.ws_col);
	return 0;
}

int files_ttys_restore_finish(struct crf_ctx *ctx)
{
	const struct files_tree *tree = crf_ctx_priv(ctx);
	const struct files_ttys *ttys = tree ? tree->ttys : NULL;
	int one = 1, r = 0;

	for (size_t i = 0; ttys && r == 0 && i < ttys->n; i++) {
		const struct files_term *t = &ttys->v[i];

		if (t->master_fd >= 0 && t->rec->locked &&
		    ioctl(t->master_fd, TIOCSPTLCK, &one) < 0)
			r = crf_error_errno(errno, "%s: lock it again", t->slave);
		if (r == 0 && t->rec->external)
			r = give_settings(ttys, t->rec);
		if (r == 0 && t->rec->external && t->rec->has_fg_pid)
			r = give_foreground(ttys, t->rec->fg_pid);
	}
	return r;
}
