// SPDX-License-Identifier: GPL-2.0-only
/*
 * The process tree as a list, /proc/PID/stat for each process's place in
 * it, and pstree.img.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"
#include "pstree.h"
#include "pstree.pb-c.h"
#include "util.h"

/* /proc/PID/stat: "pid (comm) state ppid pgrp session ..." and exit_code is field 52. */
#define STAT_FIRST_AFTER_COMM 3
#define STAT_EXIT_CODE	      52

int pstree_add(struct crf_pstree *t, const struct crf_proc *p)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		struct crf_proc *v = reallocarray(t->procs, cap, sizeof(*v));

		if (!v)
			return crf_error_errno(ENOMEM, "process tree");
		t->procs = v;
		t->cap = cap;
	}
	t->procs[t->n++] = *p;
	return 0;
}

ssize_t pstree_index(const struct crf_pstree *t, pid_t pid)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->procs[i].pid == pid)
			return (ssize_t)i;
	return -1;
}

struct crf_proc *pstree_find(const struct crf_pstree *t, pid_t pid)
{
	ssize_t i = pstree_index(t, pid);

	return i < 0 ? NULL : &t->procs[i];
}

void pstree_free(struct crf_pstree *t)
{
	free(t->procs);
	*t = (struct crf_pstree){0};
}

/* The exit_code field (52), counting fields from the state (3) on. */
static int stat_exit_code(const char *after_comm, int *code)
{
	const char *p = after_comm;

	for (int field = STAT_FIRST_AFTER_COMM; field < STAT_EXIT_CODE; field++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return -EINVAL;
	}
	return sscanf(p, " %d", code) == 1 ? 0 : -EINVAL;
}

/*
 * The NSpid line of /proc/@pid/status: the PID in each level, crf's first.
 * A process that is gone meanwhile keeps the one level crf knows.
 */
static int read_ns_pids(pid_t pid, struct crf_proc *p)
{
	_cleanup_free_ char *text = NULL;
	char path[64];
	int r, n;

	p->ns_pid[0] = pid;
	p->n_levels = 1;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	r = crf_read_file(path, &text);
	if (r == -ENOENT || r == -ESRCH)
		return 0;
	if (r < 0)
		return crf_error_errno(r, "%s", path);
	n = parse_nspid(text, p->ns_pid, CRF_PIDNS_LEVELS);
	if (n < 0 || (n > 0 && p->ns_pid[0] != pid))
		return crf_error_errno(EINVAL, "%s: bad NSpid line", path);
	if (n > 0)
		p->n_levels = (unsigned int)n;
	return 0;
}

int crf_proc_read_stat(pid_t pid, struct crf_proc *p)
{
	_cleanup_free_ char *text = NULL;
	char path[64], state;
	const char *end;
	int r, ppid, pgid, sid;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	r = crf_read_file(path, &text);
	if (r == -ENOENT || r == -ESRCH)
		return -ESRCH;
	if (r < 0)
		return crf_error_errno(r, "%s", path);
	/* comm may hold anything, even ") ": the last ')' ends it. */
	end = strrchr(text, ')');
	if (!end || sscanf(end + 1, " %c %d %d %d", &state, &ppid, &pgid, &sid) != 4)
		return crf_error_errno(EINVAL, "%s: cannot parse", path);
	*p = (struct crf_proc){.pid = pid, .ppid = ppid, .pgid = pgid, .sid = sid};
	p->zombie = state == 'Z';
	if (p->zombie && stat_exit_code(end + 1, &p->exit_status) < 0)
		return crf_error_errno(EINVAL, "%s: no exit_code field", path);
	if (p->zombie && strchr(text, '('))
		snprintf(p->comm, sizeof(p->comm), "%.*s", (int)(end - strchr(text, '(') - 1),
			 strchr(text, '(') + 1);
	return read_ns_pids(pid, p);
}

int pstree_write(struct crf_imgdir *dir, const struct crf_pstree *t)
{
	struct crf_img *img;
	int r;

	r = crf_img_create(dir, CRF_IMG_PSTREE, &crf__core__process__descriptor, &img);
	for (size_t i = 0; r >= 0 && i < t->n; i++) {
		const struct crf_proc *p = &t->procs[i];
		Crf__Core__Process m = CRF__CORE__PROCESS__INIT;

		m.pid = p->pid;
		m.ppid = p->ppid;
		m.pgid = p->pgid;
		m.sid = p->sid;
		m.state = p->zombie ? CRF__CORE__PROCESS_STATE__ZOMBIE
				    : CRF__CORE__PROCESS_STATE__ALIVE;
		m.has_exit_status = p->zombie;
		m.exit_status = p->exit_status;
		m.comm = p->zombie ? (char *)p->comm : NULL;
		m.has_n_threads = !p->zombie;
		m.n_threads = p->n_threads;
		m.n_ns_pid = p->n_levels > 1 ? p->n_levels : 0;
		m.ns_pid = (int32_t *)p->ns_pid;
		m.has_files_of = p->files_of > 0;
		m.files_of = p->files_of;
		m.has_fd_table_end = p->fd_table_end > 0;
		m.fd_table_end = p->fd_table_end;
		r = crf_img_write(img, &m.base);
		if (r < 0)
			crf_img_abort(img);
	}
	return r < 0 ? r : crf_img_close(img);
}

/*
 * A process sharing an fd table names a live process listed before it
 * that has none of another's, and that has the table's end.
 */
static int check_fdtable(const struct crf_pstree *t, size_t i)
{
	const struct crf_proc *p = &t->procs[i];
	ssize_t j = p->files_of ? pstree_index(t, p->files_of) : -1;

	if (p->fd_table_end < 0 || (p->files_of && p->fd_table_end))
		return crf_error_errno(EBADMSG, "%s: PID %d: bad fd table end %d", CRF_IMG_PSTREE,
				       (int)p->pid, p->fd_table_end);
	if (!p->files_of)
		return 0;
	if (j < 0 || (size_t)j >= i || p->zombie || t->procs[j].zombie || t->procs[j].files_of ||
	    !t->procs[j].fd_table_end)
		return crf_error_errno(EBADMSG,
				       "%s: PID %d: its fd table is PID %d's, which is not an "
				       "earlier live process with a table of its own",
				       CRF_IMG_PSTREE, (int)p->pid, (int)p->files_of);
	return 0;
}

/* Root first, unique PIDs, each parent listed before its child. */
static int check_tree(const struct crf_pstree *t, pid_t root)
{
	if (!t->n || t->procs[0].pid != root)
		return crf_error_errno(EBADMSG, "%s: does not start with the root, PID %d",
				       CRF_IMG_PSTREE, (int)root);
	if (t->procs[0].zombie)
		return crf_error_errno(EBADMSG, "%s: the root PID %d is a zombie", CRF_IMG_PSTREE,
				       (int)root);
	for (size_t i = 1; i < t->n; i++) {
		const struct crf_proc *p = &t->procs[i];
		bool parent = false;

		for (size_t j = 0; j < i; j++) {
			if (t->procs[j].pid == p->pid)
				return crf_error_errno(EBADMSG, "%s: PID %d is listed twice",
						       CRF_IMG_PSTREE, (int)p->pid);
			parent |= t->procs[j].pid == p->ppid && !t->procs[j].zombie;
		}
		if (p->pid <= 0 || !parent)
			return crf_error_errno(EBADMSG,
					       "%s: PID %d: its parent %d is not an earlier, "
					       "live process of the tree",
					       CRF_IMG_PSTREE, (int)p->pid, (int)p->ppid);
	}
	for (size_t i = 0; i < t->n; i++) {
		int r = check_fdtable(t, i);

		if (r < 0)
			return r;
	}
	return 0;
}

static int add_record(struct crf_pstree *t, const Crf__Core__Process *m)
{
	struct crf_proc p = {
		.pid = m->pid,
		.ppid = m->ppid,
		.pgid = m->pgid,
		.sid = m->sid,
		.zombie = m->state == CRF__CORE__PROCESS_STATE__ZOMBIE,
		.exit_status = m->exit_status,
		.n_threads = m->n_threads,
		.ns_pid = {m->pid},
		.n_levels = 1,
		.files_of = m->has_files_of ? m->files_of : 0,
		.fd_table_end = m->has_fd_table_end ? m->fd_table_end : 0,
	};

	if (m->comm)
		snprintf(p.comm, sizeof(p.comm), "%s", m->comm);

	if (m->n_ns_pid > CRF_PIDNS_LEVELS || (m->n_ns_pid && m->ns_pid[0] != m->pid))
		return crf_error_errno(EBADMSG, "%s: PID %d: bad namespace PIDs", CRF_IMG_PSTREE,
				       (int)m->pid);
	for (size_t l = 0; l < m->n_ns_pid; l++) {
		if (m->ns_pid[l] <= 0)
			return crf_error_errno(EBADMSG, "%s: PID %d: bad namespace PIDs",
					       CRF_IMG_PSTREE, (int)m->pid);
		p.ns_pid[l] = m->ns_pid[l];
		p.n_levels = (unsigned int)m->n_ns_pid;
	}
	return pstree_add(t, &p);
}

int pstree_read(struct crf_imgdir *dir, pid_t root, struct crf_pstree *t)
{
	ProtobufCMessage *msg;
	struct crf_img *img;
	int r;

	*t = (struct crf_pstree){0};
	if (faccessat(crf_imgdir_fd(dir), CRF_IMG_PSTREE, F_OK, 0) < 0) {
		struct crf_proc alone = {.pid = root, .n_threads = 1};

		crf_debug("%s: no %s: restoring PID %d alone", crf_imgdir_path(dir), CRF_IMG_PSTREE,
			  (int)root);
		return pstree_add(t, &alone);
	}
	r = crf_img_open(dir, CRF_IMG_PSTREE, &crf__core__process__descriptor, &img);
	if (r < 0)
		return r;
	while ((r = crf_img_read(img, &msg)) > 0) {
		r = add_record(t, (Crf__Core__Process *)msg);
		protobuf_c_message_free_unpacked(msg, NULL);
		if (r < 0)
			break;
	}
	crf_img_close(img);
	if (r >= 0)
		r = check_tree(t, root);
	if (r < 0)
		pstree_free(t);
	return r;
}
