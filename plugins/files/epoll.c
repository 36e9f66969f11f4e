// SPDX-License-Identifier: GPL-2.0-only
/*
 * epoll fds: every registration listed in the fd's fdinfo ("tfd: N
 * events: HEX data: HEX ...") is saved in its record, and made again at
 * restore on a new epoll instance.
 *
 * The kernel keys a registration by the target's description *and* the fd
 * number it was added with: a later EPOLL_CTL_MOD or DEL by the program,
 * and the tfd a second dump reads, use that number.  So the restore must
 * add each target under its saved number, which crf's own fds may hold in
 * the task being restored.  It does so in a short-lived child (fork, no
 * shared fd table): the child puts every description of the task at its
 * saved number, adds the registrations and exits; the registrations live
 * on the epoll description, which the task holds.
 *
 * A registration whose fd number no longer holds the target (the program
 * dup'ed the fd and closed it, or reused the number for another file) is
 * found through kcmp(KCMP_EPOLL_TFD) among the task's other fds and saved
 * with that "holder"; the child puts the holder's description at the old
 * number just for the EPOLL_CTL_ADD.  A target that lives on only in
 * another process is refused.  An epoll description shared with another
 * process is saved with its first fd (shared.c), and registered again by
 * that fd's task.  A oneshot registration that fired
 * is saved as fdinfo shows it (only EPOLLONESHOT and the other private
 * bits left), so it stays disabled; but EPOLL_CTL_ADD always adds EPOLLERR
 * and EPOLLHUP, which a disabled registration reports again after restore.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/kcmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <crf/cleanup.h>

#include "epoll.h"
#include "fdinfo.h"
#include "files.h"
#include "files.pb-c.h"

/* The "tfd:" lines of @text into @t (at most @max); their count, or -EBADMSG. */
static int parse_targets(const char *text, Crf__Files__EpollTarget *t, size_t max)
{
	size_t n = 0;

	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		unsigned int events;
		uint64_t data;
		int tfd;

		if (strncmp(l, "tfd:", 4))
			continue;
		if (n == max ||
		    sscanf(l, "tfd: %d events: %x data: %" SCNx64, &tfd, &events, &data) != 3)
			return -EBADMSG;
		crf__files__epoll_target__init(&t[n]);
		t[n].tfd = tfd;
		t[n].events = events;
		t[n++].data = data;
	}
	return (int)n;
}

static size_t count_lines(const char *text)
{
	size_t n = 1;

	for (; *text; text++)
		n += *text == '\n';
	return n;
}

/* The fds of the task, from /proc/PID/fd, ending with -1, in *@out; 0 or -errno (logged). */
static int task_fds(const struct files_dump *d, int **out)
{
	struct dirent **list = NULL;
	char path[64];
	int n, *v;

	snprintf(path, sizeof(path), "/proc/%d/fd", d->pid);
	n = scandir(path, &list, NULL, NULL);
	if (n < 0)
		return crf_error_errno(errno, "list %s", path);
	v = calloc((size_t)n + 1, sizeof(*v));
	*out = v;
	for (int i = 0, k = 0; i < n; i++) {
		if (v && list[i]->d_name[0] >= '0' && list[i]->d_name[0] <= '9')
			v[k++] = atoi(list[i]->d_name);
		if (v)
			v[k] = -1;
		free(list[i]);
	}
	if (v && n == 0)
		v[0] = -1;
	free(list);
	if (!v)
		return crf_error_errno(ENOMEM, "pid %d: fds", d->pid);
	return 0;
}

/*
 * Registration @i of epoll fd @fd: is its target still fd tfd's file?  If
 * not, which fd of the task holds it (target->holder)?  toff tells apart
 * two registrations under one number: the k-th in fdinfo's order is the
 * k-th the kernel finds for that number.
 */
static int find_target(const struct files_dump *d, int fd, Crf__Files__Epoll *ep, size_t i,
		       int **fds)
{
	Crf__Files__EpollTarget *t = ep->targets[i];
	struct kcmp_epoll_slot slot = {.efd = (unsigned)fd, .tfd = (unsigned)t->tfd};

	for (size_t j = 0; j < i; j++)
		slot.toff += ep->targets[j]->tfd == t->tfd;
	if (syscall(SYS_kcmp, d->pid, d->pid, KCMP_EPOLL_TFD, t->tfd, &slot) == 0)
		return 0;
	if (!*fds && task_fds(d, fds) < 0)
		return -EIO;
	for (int *f = *fds; *f >= 0; f++) {
		if (*f == fd || syscall(SYS_kcmp, d->pid, d->pid, KCMP_EPOLL_TFD, *f, &slot))
			continue;
		t->has_holder = true;
		t->holder = *f;
		crf_debug("pid %d: epoll fd %d: target registered as fd %d is fd %d now", d->pid,
			  fd, t->tfd, *f);
		return 0;
	}
	return crf_error_errno(ENOTSUP,
			       "pid %d: epoll fd %d watches a file registered as fd %d, which the "
			       "task closed and holds under no other fd: crf cannot restore it",
			       d->pid, fd, t->tfd);
}

static int check_targets(const struct files_dump *d, int fd, Crf__Files__Epoll *ep)
{
	_cleanup_free_ int *fds = NULL;
	int r = 0;

	for (size_t i = 0; i < ep->n_targets && r == 0; i++)
		r = find_target(d, fd, ep, i, &fds);
	return r;
}

static int dump_targets(const struct files_dump *d, int fd, const char *text, Crf__Files__Epoll *ep)
{
	size_t max = count_lines(text);
	Crf__Files__EpollTarget *t = calloc(max, sizeof(*t));
	int n;

	ep->targets = calloc(max, sizeof(*ep->targets));
	if (!ep->targets || !t) {
		free(t);
		return crf_error_errno(ENOMEM, "pid %d: epoll fd %d", d->pid, fd);
	}
	n = parse_targets(text, t, max);
	if (n < 0) {
		free(t);
		return crf_error_errno(-n, "pid %d: fdinfo of epoll fd %d", d->pid, fd);
	}
	for (int i = 0; i < n; i++)
		ep->targets[i] = &t[i];
	ep->n_targets = (size_t)n;
	if (n == 0)
		free(t);
	return check_targets(d, fd, ep);
}

static void free_targets(Crf__Files__Epoll *ep)
{
	if (ep->n_targets)
		free(ep->targets[0]);
	free(ep->targets);
}

int files_epoll_dump(struct crf_ctx *ctx, const struct crf_object *obj)
{
	Crf__Files__Fd e = CRF__FILES__FD__INIT;
	Crf__Files__Epoll ep = CRF__FILES__EPOLL__INIT;
	struct files_dump *d = NULL;
	const char *text = NULL;
	int fd = obj->id, same, r;

	r = files_fdinfo_fd_begin(ctx, obj, "epoll", &e, &text, &d);
	same = r > 0;
	if (r == 0) {
		e.epoll = &ep;
		r = dump_targets(d, fd, text, &ep);
		if (r == 0)
			r = files_desc_remember(d, fd);
	}
	if (r >= 0)
		r = files_fd_write(d, &e);
	if (r == 0)
		crf_debug("pid %d: fd %d: epoll with %zu fds%s", d->pid, fd, ep.n_targets,
			  same ? " (shared)" : "");
	free_targets(&ep);
	return r;
}

int files_epoll_create(const Crf__Files__Fd *e)
{
	_cleanup_close_ int fd = epoll_create1(EPOLL_CLOEXEC);

	if (fd < 0)
		return crf_error_errno(errno, "fd %d: epoll_create1", e->fd);
	if ((e->flags & O_NONBLOCK) && fcntl(fd, F_SETFL, O_NONBLOCK) < 0)
		return crf_error_errno(errno, "fd %d: epoll O_NONBLOCK", e->fd);
	return TAKE_FD(fd);
}

static int by_number(const void *a, const void *b)
{
	const struct files_opened_fd *x = a, *y = b;

	return (x->number > y->number) - (x->number < y->number);
}

/* The index in @fds (sorted by number) of saved number @number, or -1. */
static int find_number(const struct files_opened_fd *fds, size_t n, int number)
{
	const struct files_opened_fd key = {.number = number}, *f;

	f = n ? bsearch(&key, fds, n, sizeof(*fds), by_number) : NULL;
	return f ? (int)(f - fds) : -1;
}

/* The registration of target @t, under its number: the holder's file there meanwhile. */
static int add_target(int epfd, const Crf__Files__EpollTarget *t, const int *hi,
		      const struct files_opened_fd *fds, size_t n_fds)
{
	struct epoll_event ev = {.events = t->events, .data.u64 = t->data};
	int own = find_number(fds, n_fds, t->tfd);

	if (t->has_holder && dup2(hi[find_number(fds, n_fds, t->holder)], t->tfd) < 0)
		return errno;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, t->tfd, &ev) < 0)
		return errno;
	if (t->has_holder && (own >= 0 ? dup2(hi[own], t->tfd) : close(t->tfd)) < 0)
		return errno;
	return 0;
}

/* Mark in @hi (0: wanted) the fds the registrations use: epoll fds, targets, holders. */
static void mark_wanted(const Crf__Files__Fd *const *eps, size_t n_eps,
			const struct files_opened_fd *fds, size_t n_fds, int *hi)
{
	for (size_t i = 0; i < n_fds; i++)
		hi[i] = -1;
	for (size_t i = 0; i < n_eps; i++) {
		const Crf__Files__Epoll *ep = eps[i]->epoll;

		hi[find_number(fds, n_fds, (int)eps[i]->fd)] = 0;
		for (size_t j = 0; j < ep->n_targets; j++) {
			int k = find_number(fds, n_fds, ep->targets[j]->tfd);

			if (k >= 0)
				hi[k] = 0;
			if (ep->targets[j]->has_holder)
				hi[find_number(fds, n_fds, ep->targets[j]->holder)] = 0;
		}
	}
}

/*
 * In the child: every description the registrations use at its saved
 * number, then the registrations.  An exit status: 0 or an errno.
 */
static int register_child(const Crf__Files__Fd *const *eps, size_t n_eps,
			  const struct files_opened_fd *fds, size_t n_fds)
{
	int base = 0, *hi = calloc(n_fds, sizeof(int)), r;

	if (!hi)
		return ENOMEM;
	mark_wanted(eps, n_eps, fds, n_fds, hi);
	for (size_t i = 0; i < n_fds; i++)
		base = base > fds[i].number ? base : fds[i].number;
	for (size_t i = 0; i < n_fds; i++)
		base = base > fds[i].fd ? base : fds[i].fd;
	for (size_t i = 0; i < n_eps; i++)
		for (size_t j = 0; j < eps[i]->epoll->n_targets; j++)
			if (base < eps[i]->epoll->targets[j]->tfd)
				base = eps[i]->epoll->targets[j]->tfd;
	for (size_t i = 0; i < n_fds; i++)
		if (hi[i] == 0 && (hi[i] = fcntl(fds[i].fd, F_DUPFD, base + 1)) < 0)
			return errno;
	for (size_t i = 0; i < n_fds; i++)
		if (hi[i] >= 0 && dup2(hi[i], fds[i].number) < 0)
			return errno;
	for (size_t i = 0; i < n_eps; i++) {
		const Crf__Files__Epoll *ep = eps[i]->epoll;

		for (size_t j = 0; j < ep->n_targets; j++)
			if ((r = add_target(eps[i]->fd, ep->targets[j], hi, fds, n_fds)))
				return r;
	}
	return 0;
}

/* Every fd the registrations of @eps use is one of @fds (sorted by number). */
static int check_restored(const Crf__Files__Fd *const *eps, size_t n_eps,
			  const struct files_opened_fd *fds, size_t n_fds)
{
	for (size_t i = 0; i < n_eps; i++) {
		const Crf__Files__Epoll *ep = eps[i]->epoll;

		if (find_number(fds, n_fds, (int)eps[i]->fd) < 0)
			return crf_error_errno(EBADMSG, "epoll fd %d was not restored", eps[i]->fd);
		for (size_t j = 0; j < ep->n_targets; j++) {
			const Crf__Files__EpollTarget *t = ep->targets[j];
			int number = t->has_holder ? t->holder : t->tfd;

			if (find_number(fds, n_fds, number) < 0)
				return crf_error_errno(
					ENOTSUP,
					"epoll fd %d: fd %d it watches is not one the files "
					"plugin restores",
					eps[i]->fd, number);
		}
	}
	return 0;
}

int files_epoll_register(const Crf__Files__Fd *const *eps, size_t n_eps,
			 const struct files_opened_fd *fds, size_t n_fds)
{
	_cleanup_free_ struct files_opened_fd *byno = NULL;
	int status, r;
	pid_t pid;

	if (n_eps == 0)
		return 0;
	byno = malloc((n_fds ? n_fds : 1) * sizeof(*byno));
	if (!byno)
		return crf_error_errno(ENOMEM, "epoll registrations");
	if (n_fds)
		memcpy(byno, fds, n_fds * sizeof(*byno));
	qsort(byno, n_fds, sizeof(*byno), by_number);
	r = check_restored(eps, n_eps, byno, n_fds);
	if (r < 0)
		return r;
	pid = fork();
	if (pid < 0)
		return crf_error_errno(errno, "fork to register epoll targets");
	if (pid == 0)
		_exit(register_child(eps, n_eps, byno, n_fds));
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return crf_error_errno(errno, "wait for the epoll registering child");
	if (!WIFEXITED(status))
		return crf_error_errno(ECHILD, "the epoll registering child died (status %#x)",
				       status);
	if (WEXITSTATUS(status))
		return crf_error_errno(WEXITSTATUS(status),
				       "registering the targets of %zu epoll fds", n_eps);
	return 0;
}
