// SPDX-License-Identifier: GPL-2.0-only
/*
 * The last thing crf does in a restored task before the restorer: its own
 * fds are closed, the restorer's go above every program fd number, and
 * each program fd the plugins handed over (crf_rst_keep_fd) gets its
 * number.
 *
 * A task may have as many fds as RLIMIT_NOFILE allows, and crf's hard
 * limit may be no higher than the program's (raising it needs
 * CAP_SYS_RESOURCE, which a container often lacks).  So the program fds
 * are not copied anywhere first: they are permuted in place, each moved to
 * its number once that number is free, and a cycle (fd 5 must become 7
 * while fd 7 must become 5) is broken through one spare number.  At no
 * moment are there more fds than the program's, the restorer's and one.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "rst-task.h"
#include "util.h"

/* The kernel's ceiling for RLIMIT_NOFILE, fs.nr_open; 0 when unknown. */
static uint64_t nr_open(void)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/sys/fs/nr_open", "re");
	unsigned long long v = 0;

	if (!f || fscanf(f, "%llu", &v) != 1)
		return 0;
	return v;
}

int rst_fd_room(uint64_t need, bool must)
{
	uint64_t ceiling = 0;
	struct rlimit rl, up;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return crf_error_errno(errno, "getrlimit RLIMIT_NOFILE");
	if (rl.rlim_max < need)
		ceiling = nr_open();
	if (ceiling && need > ceiling) {
		if (must)
			return crf_error_errno(EMFILE,
					       "the restore needs %" PRIu64 " fds, more than "
					       "fs.nr_open (%" PRIu64 ")",
					       need, ceiling);
		need = ceiling;
	}
	if (rl.rlim_max < need) {
		up.rlim_cur = up.rlim_max = need;
		if (setrlimit(RLIMIT_NOFILE, &up) == 0)
			rl = up;
		else if (must)
			return crf_error_errno(errno,
					       "the restore needs %" PRIu64
					       " fds; raising the hard "
					       "RLIMIT_NOFILE from %llu needs CAP_SYS_RESOURCE",
					       need, (unsigned long long)rl.rlim_max);
		else
			crf_debug("hard RLIMIT_NOFILE stays %llu, below %" PRIu64 ": %s",
				  (unsigned long long)rl.rlim_max, need, strerror(errno));
	}
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			return crf_error_errno(errno, "raise the soft RLIMIT_NOFILE to %llu",
					       (unsigned long long)rl.rlim_max);
	}
	return 0;
}

static int by_number(const void *a, const void *b)
{
	const struct crf_rst_fd *x = a, *y = b;

	return x->number < y->number ? -1 : x->number > y->number;
}

static int by_value(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

/*
 * The restorer's fds go from here on: above every program fd number.
 * Sorting the program fds by number also finds a number given twice.
 */
static int fd_base(struct crf_rst_task *t)
{
	int base = CRF_RST_FD_BASE;

	if (t->n_fds)
		qsort(t->fds, t->n_fds, sizeof(*t->fds), by_number);
	for (size_t i = 1; i < t->n_fds; i++)
		if (t->fds[i].number == t->fds[i - 1].number)
			return crf_error_errno(EEXIST, "program fd %d given twice",
					       t->fds[i].number);
	if (t->n_fds && t->fds[t->n_fds - 1].number >= base)
		base = t->fds[t->n_fds - 1].number + 1;
	return base;
}

/* The restorer's fd fields in its argument block @a; NULL after logging ENOMEM. */
static int32_t **restorer_fds(struct crf_rst_args *a, size_t *n)
{
	char *p = (char *)a;
	struct crf_rst_vma_arg *v = (void *)(p + a->vmas_off);
	struct crf_rst_pages_arg *pg = (void *)(p + a->pages_off);
	int32_t **s = calloc((size_t)a->n_vmas + a->n_pages + 4, sizeof(*s));

	*n = 0;
	if (!s) {
		crf_error_errno(ENOMEM, "restorer fds");
		return NULL;
	}
	for (uint32_t i = 0; i < a->n_vmas; i++)
		s[(*n)++] = &v[i].fd;
	for (uint32_t i = 0; i < a->n_pages; i++)
		s[(*n)++] = &pg[i].fd;
	s[(*n)++] = &a->exe_fd;
	s[(*n)++] = &a->mem_fd;
	s[(*n)++] = &a->status_fd;
	s[(*n)++] = &a->go_fd;
	return s;
}

/*
 * Close every fd of crf but the program's and the restorer's, 0-2 too:
 * the program's fds 0-2 are what it had (or closed), never crf restore's;
 * *@high: the highest one left.
 */
static int close_others(const struct crf_rst_task *t, int32_t *const *s, size_t n_s, int *high)
{
	_cleanup_free_ int *keep = calloc(t->n_fds + n_s + t->fdt.n_keep + 1, sizeof(int));
	int next = 0;
	size_t n = 0;

	if (!keep)
		return crf_error_errno(ENOMEM, "program fds");
	for (size_t i = 0; i < t->n_fds; i++)
		keep[n++] = t->fds[i].fd;
	for (size_t i = 0; i < n_s; i++)
		if (*s[i] >= 0)
			keep[n++] = *s[i];
	for (size_t i = 0; i < t->fdt.n_keep; i++)
		keep[n++] = t->fdt.keep[i];
	qsort(keep, n, sizeof(*keep), by_value);
	for (size_t i = 0; i < n; i++) {
		if (keep[i] < next)
			continue;
		if (keep[i] > next)
			close_range((unsigned int)next, (unsigned int)keep[i] - 1, 0);
		next = keep[i] + 1;
	}
	close_range((unsigned int)next, ~0u, 0);
	*high = next - 1;
	return 0;
}

struct fdmove {
	int old, new;
};

/* Each restorer fd below @base moves to a free number from @base on. */
static int lift_restorer_fds(int32_t *const *s, size_t n_s, int base)
{
	_cleanup_free_ struct fdmove *m = calloc(n_s + 1, sizeof(*m));
	size_t n = 0, j;
	int r = 0;

	if (!m)
		return crf_error_errno(ENOMEM, "restorer fds");
	for (size_t i = 0; r == 0 && i < n_s; i++) {
		int fd = *s[i];

		if (fd < 0 || fd >= base)
			continue;
		for (j = 0; j < n && m[j].old != fd; j++)
			;
		if (j == n) {
			int nfd = fcntl(fd, F_DUPFD, base);

			if (nfd < 0) {
				r = crf_error_errno(errno, "move restorer fd %d", fd);
				break;
			}
			m[n++] = (struct fdmove){fd, nfd};
		}
		*s[i] = m[j].new;
	}
	for (j = 0; j < n; j++)
		close(m[j].old);
	return r;
}

/* Which program fd (an index of t->fds) our fd @fd is, or -1. */
struct holders {
	int *at;
	size_t len;
};

static int move_program_fd(struct crf_rst_fd *f, struct holders *h, int to, int flags)
{
	if (dup3(f->fd, to, flags) < 0)
		return crf_error_errno(errno, "install program fd %d (from %d)", f->number, f->fd);
	if ((size_t)f->fd < h->len)
		h->at[f->fd] = -1;
	close(f->fd);
	f->fd = to;
	return 0;
}

/*
 * Program fd @i and those in its way: the one holding @i's number must
 * move first, and so on, until a free number ends the chain (placed from
 * its end) or the chain comes back to @i (a cycle: @i steps aside to a
 * spare number from @base on, so the rest can be placed, then takes its
 * own).  @chain: room for every program fd.
 */
static int place_chain(struct crf_rst_task *t, size_t i, struct holders *h, size_t *chain, int base)
{
	size_t n = 0, k = i;
	bool cycle = false;
	int r = 0;

	for (;;) {
		int num = t->fds[k].number;
		int next = (size_t)num < h->len ? h->at[num] : -1;

		chain[n++] = k;
		if (next < 0 || (size_t)next == i) {
			cycle = next >= 0;
			break;
		}
		k = (size_t)next;
	}
	if (cycle) {
		int spare = fcntl(t->fds[i].fd, F_DUPFD_CLOEXEC, base);

		if (spare < 0)
			return crf_error_errno(errno, "move program fd %d aside", t->fds[i].number);
		h->at[t->fds[i].fd] = -1;
		close(t->fds[i].fd);
		t->fds[i].fd = spare;
	}
	while (r == 0 && n-- > 0) {
		struct crf_rst_fd *f = &t->fds[chain[n]];

		r = move_program_fd(f, h, f->number, f->cloexec ? O_CLOEXEC : 0);
	}
	return r;
}

static int place_program_fds(struct crf_rst_task *t, int high, int base)
{
	_cleanup_free_ size_t *chain = calloc(t->n_fds + 1, sizeof(*chain));
	struct holders h = {.at = calloc((size_t)high + 1, sizeof(int)), .len = (size_t)high + 1};
	int r = 0;

	if (!chain || !h.at) {
		free(h.at);
		return crf_error_errno(ENOMEM, "program fds");
	}
	memset(h.at, -1, h.len * sizeof(int));
	for (size_t i = 0; i < t->n_fds; i++)
		h.at[t->fds[i].fd] = (int)i;
	for (size_t i = 0; r == 0 && i < t->n_fds; i++) {
		struct crf_rst_fd *f = &t->fds[i];

		if (f->fd != f->number)
			r = place_chain(t, i, &h, chain, base);
		else if (fcntl(f->fd, F_SETFD, f->cloexec ? FD_CLOEXEC : 0) < 0)
			r = crf_error_errno(errno, "program fd %d: close-on-exec", f->number);
	}
	free(h.at);
	/* They are the program's now: nothing of t->fds is left to close. */
	t->n_fds = 0;
	return r;
}

/*
 * A table another task places (t->fdt): every fd in it but the restorer's
 * is that task's or crf's, which that task closes once this restorer is
 * ready.  The restorer's own go above every program fd number.
 */
static int lift_only(struct crf_rst_task *t, int32_t *const *s, size_t n_s)
{
	int base = t->fdt.floor > CRF_RST_FD_BASE ? t->fdt.floor : CRF_RST_FD_BASE;
	int r = rst_fd_room((uint64_t)base + n_s + 2, true);

	return r < 0 ? r : lift_restorer_fds(s, n_s, base);
}

int rst_move_fds(struct crf_rst_task *t, struct crf_rst_args *a)
{
	size_t n_s = 0;
	_cleanup_free_ int32_t **s = restorer_fds(a, &n_s);
	int base = fd_base(t), high = 0, r;

	if (!s)
		return -ENOMEM;
	if (base < 0)
		return base;
	if (t->fdt.sharer)
		return t->n_fds ? crf_error_errno(EINVAL,
						  "%zu program fds in a table another "
						  "task places",
						  t->n_fds)
				: lift_only(t, s, n_s);
	r = close_others(t, s, n_s, &high);
	/* The restorer's fds and one spare from the base, or above what is left. */
	if (r == 0)
		r = rst_fd_room((uint64_t)(high >= base ? high + 1 : base) + n_s + 2, true);
	if (r == 0)
		r = lift_restorer_fds(s, n_s, base);
	if (r == 0)
		r = place_program_fds(t, high, base);
	return r;
}
