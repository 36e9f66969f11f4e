// SPDX-License-Identifier: GPL-2.0-only
/*
 * Processes that share one fd table (clone(CLONE_FILES) without
 * CLONE_THREAD) are created sharing it again: each with CLONE_FILES by one
 * that has it (rst-plan.c).  Then every fd any of them opens or closes is
 * the others' too, crf's own included, so the table is put in place once,
 * by the process whose files image holds its fds (the placer: the first of
 * them in the tree's order, Process.files_of), and the others (sharers)
 * must neither place nor close anything, nor be in the placer's way:
 *
 *   sharer: restore-task (its plugins save no fds for it), then its
 *           restorer's fds go above every fd number of the program
 *           (Process.fd_table_end), its status and go fds are there
 *           already (crf put them there before the fork), and it enters
 *           its restorer, which maps its memory, closes its own fds and
 *           reports ready;
 *   crf:    once every sharer of a table is ready, one byte on the
 *           placer's wait pipe;
 *   placer: restore-task, then waits for that byte, and only then closes
 *           crf's fds (those the sharers needed: the image directory,
 *           restore-prepare's objects...), sparing the sharers' status and
 *           go fds, and places the program's.
 *
 * The sharers' restorers keep only those two fds, which the placer does
 * not touch, until their "go".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "rst-task.h"
#include "rst-tree.h"

static bool is_sharer(const struct crf_rst_tree *rt, size_t i)
{
	return rt->procs[i].fdt >= 0 && (size_t)rt->procs[i].fdt != i;
}

/* The lowest fd number the sharers of placer @g may hold: above the program's. */
static int floor_of(const struct crf_rst_tree *rt, ssize_t g)
{
	int end = rt->procs[g].p->fd_table_end;

	return end > CRF_RST_FD_BASE ? end : CRF_RST_FD_BASE;
}

/* Put our fd *@fd at @floor or above. */
static int lift(int *fd, int floor)
{
	int up;

	if (*fd >= floor)
		return 0;
	up = fcntl(*fd, F_DUPFD_CLOEXEC, floor);
	if (up < 0)
		return crf_error_errno(errno, "moving fd %d above %d", *fd, floor);
	close(*fd);
	*fd = up;
	return 0;
}

int rst_fdt_open(struct crf_rst_tree *rt)
{
	int r = 0;

	for (size_t i = 0; r >= 0 && i < rt->n; i++) {
		struct crf_rst_proc *rp = &rt->procs[i];

		if (rp->fdt < 0)
			continue;
		if (!is_sharer(rt, i)) {
			if (pipe2(rp->fdt_wait, O_CLOEXEC) < 0)
				r = crf_error_errno(errno, "pipe for pid %d", (int)rp->p->pid);
			continue;
		}
		r = rst_fd_room((uint64_t)floor_of(rt, rp->fdt) + 4 * rt->n + 8, true);
		if (r >= 0)
			r = lift(&rp->status[1], floor_of(rt, rp->fdt));
		if (r >= 0)
			r = lift(&rp->go[0], floor_of(rt, rp->fdt));
	}
	return r;
}

int rst_fdt_ready(struct crf_rst_tree *rt, size_t i)
{
	struct crf_rst_proc *g;
	ssize_t n;

	if (!is_sharer(rt, i))
		return 0;
	g = &rt->procs[rt->procs[i].fdt];
	if (++g->fdt_ready < g->fdt_sharers)
		return 0;
	do
		n = write(g->fdt_wait[1], "r", 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		return crf_error_errno(n < 0 ? errno : EIO,
				       "telling pid %d its fd table's "
				       "other processes are ready",
				       (int)g->p->pid);
	crf_debug("pid %d: the %zu processes that share its fd table are ready", (int)g->p->pid,
		  g->fdt_sharers);
	return 0;
}

void rst_fdt_close(struct crf_rst_tree *rt, int end)
{
	for (size_t i = 0; i < rt->n; i++)
		for (int k = 0; k < 2; k++)
			if ((end < 0 || end == k) && rt->procs[i].fdt_wait[k] >= 0) {
				close(rt->procs[i].fdt_wait[k]);
				rt->procs[i].fdt_wait[k] = -1;
			}
}

int rst_fdt_role(const struct crf_rst_tree *rt, size_t i, struct crf_rst_fdtable *fdt)
{
	const struct crf_rst_proc *rp = &rt->procs[i];
	size_t n = 0;

	*fdt = (struct crf_rst_fdtable){.wait_fd = -1};
	if (rp->fdt < 0)
		return 0;
	if (is_sharer(rt, i)) {
		fdt->sharer = true;
		fdt->floor = floor_of(rt, rp->fdt);
		return 1;
	}
	fdt->wait_fd = rp->fdt_wait[0];
	fdt->keep = calloc(2 * rp->fdt_sharers + 1, sizeof(*fdt->keep));
	if (!fdt->keep)
		return crf_error_errno(ENOMEM, "pid %d: its fd table", (int)rp->p->pid);
	for (size_t k = 0; k < rt->n; k++)
		if (rt->procs[k].fdt == (ssize_t)i && k != i && n < 2 * rp->fdt_sharers) {
			fdt->keep[n++] = rt->procs[k].status[1];
			fdt->keep[n++] = rt->procs[k].go[0];
		}
	fdt->n_keep = n;
	return 1;
}
