// SPDX-License-Identifier: GPL-2.0-only
/*
 * A claimed namespace that several processes of the tree are in although
 * none inherits it from another (the later ones joined it with setns(), as
 * runc exec's processes join a container's): restored as one namespace,
 * made by the first of them to be restored and joined by the others.
 *
 * Dump (ns_share_dump, per claim, in tree order): the processes of each
 * namespace whose parent process is not in the tree or not in it (for time
 * and time_for_children: not in it as its time_for_children, which its
 * children are born in) are its roots.  A second root of a namespace of a
 * kind that cannot be joined is refused by name: user (a process joins its
 * restored user namespace only before its restorer, through a child of the
 * process that made it), a time_for_children that is not the process's
 * time namespace too (no call sets a process's time_for_children alone to
 * an existing namespace), pid_for_children is the handler's (userns-pid.c).
 *
 * Restore (ns_share_enter, in each process's restore-premap, for a claim
 * its parent did not hand it): a table in memory shared by every restored
 * process (made in crf at restore-prepare, inherited through fork) says
 * which process restored each namespace.  The first process there makes
 * it through its handler, then publishes an fd of it; the others wait for
 * that, open the maker's fd through crf's /proc (opened in restore-prepare:
 * it names the tree by the dump's PIDs whatever namespaces a process is in
 * by then) and setns() into it; their handler is then called with
 * crf_ns_info.inherited.  A process waits only for one that was forked
 * already, which waits only for kinds earlier in restore order: no cycle.
 * The maker's fd stays open until its restorer replaces its fds, after
 * every process has passed restore-premap (the core's first barrier).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <crf/log.h>

#include "ns.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

#define MAX_SHARED 256
#define WAIT_MS	   30000

/* The kinds a process joins by a plain setns(), and their flag. */
static const struct {
	const char *kind;
	int nstype;
} joinable[] = {
	{"mnt", CLONE_NEWNS},
	{"net", CLONE_NEWNET},
	{"uts", CLONE_NEWUTS},
	{"ipc", CLONE_NEWIPC},
	{"cgroup", CLONE_NEWCGROUP},
	{"time", CLONE_NEWTIME},
	{"time_for_children", CLONE_NEWTIME},
};

static int join_type(const char *kind)
{
	for (size_t i = 0; i < sizeof(joinable) / sizeof(joinable[0]); i++)
		if (!strcmp(joinable[i].kind, kind))
			return joinable[i].nstype;
	return 0;
}

bool ns_share_joinable(const char *kind)
{
	return join_type(kind) != 0;
}

/* time and time_for_children name one namespace: one key. */
static const char *base_kind(const char *kind)
{
	return strcmp(kind, "time_for_children") ? kind : "time";
}

/* The link of the parent a child inherits namespace @kind from. */
static const char *inherit_kind(const char *kind)
{
	return strncmp(kind, "time", 4) ? kind : "time_for_children";
}

static int ino_of(pid_t pid, const char *kind, uint64_t *ino)
{
	char path[96];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, kind);
	if (stat(path, &st) < 0)
		return -errno;
	*ino = st.st_ino;
	return 0;
}

/* ---- dump ----------------------------------------------------------------- */

static struct {
	pid_t *pids; /* the processes of the tree met so far, in tree order */
	size_t n_pids;
	struct root {
		const char *kind; /* base_kind() */
		uint64_t id;
		pid_t pid;
		bool tfc_only; /* its time_for_children, not its time */
	} * roots;
	size_t n_roots;
} dump;

pid_t ns_share_ppid(pid_t pid)
{
	char path[64], buf[4096], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		n = -errno;
		if (fd >= 0)
			close(fd);
		return (pid_t)n;
	}
	close(fd);
	buf[n] = '\0';
	p = strstr(buf, "\nPPid:");
	return p ? (pid_t)atoi(p + 6) : -EIO;
}

static bool in_tree(pid_t pid)
{
	for (size_t i = 0; i < dump.n_pids; i++)
		if (dump.pids[i] == pid)
			return true;
	return false;
}

int ns_share_seen(pid_t pid)
{
	pid_t *v = reallocarray(dump.pids, dump.n_pids + 1, sizeof(*v));

	if (!v)
		return crf_error_errno(ENOMEM, "pid %d", (int)pid);
	dump.pids = v;
	v[dump.n_pids++] = pid;
	return 0;
}

bool ns_share_in_tree(pid_t pid)
{
	return in_tree(pid);
}

int ns_share_dump(pid_t pid, const char *kind, uint64_t id, const char *link)
{
	const char *base = base_kind(kind);
	pid_t ppid = ns_share_ppid(pid);
	uint64_t its = 0, time_id = 0;
	struct root *v;
	bool tfc_only;
	int r;

	if (!strcmp(kind, "pid_for_children") || !id)
		return 0;
	if (ppid < 0)
		return crf_error_errno(ppid, "pid %d: its parent", (int)pid);
	if (ppid > 0 && in_tree(ppid) && ino_of(ppid, inherit_kind(kind), &its) == 0 && its == id)
		return 0;
	r = strcmp(kind, "time_for_children") ? 0 : ino_of(pid, "time", &time_id);
	if (r < 0)
		return crf_error_errno(r, "pid %d: /proc/%d/ns/time", (int)pid, (int)pid);
	tfc_only = !strcmp(kind, "time_for_children") && time_id != id;
	for (size_t i = 0; i < dump.n_roots; i++) {
		struct root *o = &dump.roots[i];

		if (strcmp(o->kind, base) || o->id != id)
			continue;
		if (o->pid == pid)
			return 0;
		if (!ns_share_joinable(kind) || o->tfc_only || tfc_only)
			return crf_error_errno(
				ENOTSUP,
				"pid %d and pid %d are both in %s namespace %s and neither's "
				"parent process is (one joined it with setns): the restore "
				"would make two (crf joins no %s%s namespace)",
				(int)o->pid, (int)pid, kind, link,
				o->tfc_only || tfc_only ? "time_for_children-only " : "",
				o->tfc_only || tfc_only ? "time" : kind);
		crf_info("pid %d joined %s namespace %s of pid %d: the restore joins it too",
			 (int)pid, kind, link, (int)o->pid);
		return 0;
	}
	v = reallocarray(dump.roots, dump.n_roots + 1, sizeof(*v));
	if (!v)
		return crf_error_errno(ENOMEM, "pid %d", (int)pid);
	dump.roots = v;
	v[dump.n_roots++] = (struct root){base, id, pid, tfc_only};
	return 0;
}

void ns_share_dump_cleanup(void)
{
	free(dump.pids);
	free(dump.roots);
	memset(&dump, 0, sizeof(dump));
}

bool ns_share_has_kind(const char *kind)
{
	for (size_t i = 0; i < dump.n_roots; i++)
		if (!kind || !strcmp(dump.roots[i].kind, base_kind(kind)))
			return true;
	return false;
}

pid_t ns_share_root(const char *kind, uint64_t id)
{
	for (size_t i = 0; i < dump.n_roots; i++)
		if (!strcmp(dump.roots[i].kind, base_kind(kind)) && dump.roots[i].id == id)
			return dump.roots[i].pid;
	return 0;
}

/* ---- restore ---------------------------------------------------------------- */

enum { FREE, MAKING, MADE, FAILED };

struct entry {
	char kind[24]; /* base_kind() */
	uint64_t id;
	pid_t pid; /* the maker, by the dump's PID */
	int fd;	   /* the maker's fd of it, once MADE */
	int state;
};

struct table {
	int lock;
	size_t n;
	struct entry e[MAX_SHARED];
};

static struct table *table;
static int proc_fd = -1;

int ns_share_setup(void)
{
	if (table)
		return 0;
	table = mmap(NULL, sizeof(*table), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
		     0);
	if (table == MAP_FAILED) {
		table = NULL;
		return crf_error_errno(errno, "the table of shared namespaces");
	}
	proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (proc_fd < 0)
		return crf_error_errno(errno, "/proc");
	return 0;
}

void ns_share_cleanup(void)
{
	if (table)
		munmap(table, sizeof(*table));
	table = NULL;
	if (proc_fd >= 0)
		close(proc_fd);
	proc_fd = -1;
}

static void lock(void)
{
	while (__atomic_exchange_n(&table->lock, 1, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void unlock(void)
{
	__atomic_store_n(&table->lock, 0, __ATOMIC_RELEASE);
}

static struct entry *find(const char *base, uint64_t id)
{
	for (size_t i = 0; i < table->n; i++)
		if (!strcmp(table->e[i].kind, base) && table->e[i].id == id)
			return &table->e[i];
	return NULL;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait until @e is made: its maker's fd, or -errno (logged). */
static int wait_made(pid_t pid, const struct entry *e, const char *kind, const char *desc)
{
	static const struct timespec step = {0, 1000000};
	int64_t deadline = now_ms() + WAIT_MS;
	char path[64];
	int state;

	snprintf(path, sizeof(path), "%d", (int)e->pid);
	while ((state = __atomic_load_n(&e->state, __ATOMIC_ACQUIRE)) == MAKING) {
		if (faccessat(proc_fd, path, F_OK, 0) < 0 || now_ms() > deadline)
			return crf_error_errno(
				ETIMEDOUT,
				"pid %d: %s namespace %s: pid %d, which restores it, "
				"is gone or did not in %d s",
				(int)pid, kind, desc, (int)e->pid, WAIT_MS / 1000);
		nanosleep(&step, NULL);
	}
	if (state != MADE)
		return crf_error_errno(EIO, "pid %d: %s namespace %s: pid %d failed to restore it",
				       (int)pid, kind, desc, (int)e->pid);
	snprintf(path, sizeof(path), "%d/fd/%d", (int)e->pid, e->fd);
	state = openat(proc_fd, path, O_RDONLY | O_CLOEXEC);
	if (state < 0)
		return crf_error_errno(errno,
				       "pid %d: %s namespace %s: /proc/%s of pid %d, which "
				       "restored it",
				       (int)pid, kind, desc, path, (int)e->pid);
	return state;
}

static bool same_file(int fd, const char *path)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_ino == b.st_ino &&
	       a.st_dev == b.st_dev;
}

int ns_share_enter(pid_t pid, const char *kind, uint64_t id, const char *desc)
{
	const char *base = base_kind(kind);
	struct entry *e;
	char self[64];
	int fd, r = 0;

	if (!table || !strcmp(kind, "pid_for_children") || !id)
		return 1;
	lock();
	e = find(base, id);
	if (!e && table->n < MAX_SHARED) {
		e = &table->e[table->n++];
		snprintf(e->kind, sizeof(e->kind), "%s", base);
		e->id = id;
		e->pid = pid;
		e->fd = -1;
		__atomic_store_n(&e->state, MAKING, __ATOMIC_RELEASE);
		unlock();
		return 1;
	}
	unlock();
	if (!e)
		return crf_error_errno(ENOSPC, "pid %d: %s namespace %s: more than %d namespaces",
				       (int)pid, kind, desc, MAX_SHARED);
	if (e->pid == pid)
		return 1;
	if (!ns_share_joinable(kind))
		return crf_error_errno(ENOTSUP,
				       "pid %d: %s namespace %s is restored by pid %d already, "
				       "and crf joins no %s namespace: the restore would make two",
				       (int)pid, kind, desc, (int)e->pid, kind);
	fd = wait_made(pid, e, kind, desc);
	if (fd < 0)
		return fd;
	snprintf(self, sizeof(self), "/proc/self/ns/%s", kind);
	if (same_file(fd, self)) {
		close(fd);
		return 0;
	}
	if (!strcmp(kind, "time_for_children"))
		r = crf_error_errno(ENOTSUP,
				    "pid %d: time namespace %s is restored by pid %d, and no call "
				    "makes it this process's time_for_children alone",
				    (int)pid, desc, (int)e->pid);
	else if (setns(fd, join_type(kind)) < 0)
		r = crf_error_errno(errno,
				    "pid %d: %s namespace %s: cannot join the one pid %d "
				    "restored",
				    (int)pid, kind, desc, (int)e->pid);
	else if (!strcmp(kind, "time"))
		r = ns_time_joined(id, fd);
	if (r < 0 || strcmp(kind, "time"))
		close(fd);
	if (r >= 0)
		crf_info("pid %d joined %s namespace %s, restored by pid %d", (int)pid, kind, desc,
			 (int)e->pid);
	return r < 0 ? r : 0;
}

int ns_share_made(pid_t pid, const char *kind, uint64_t id, int fd)
{
	struct entry *e;
	char path[64];

	if (!table || !strcmp(kind, "pid_for_children") || !id)
		return 0;
	lock();
	e = find(base_kind(kind), id);
	unlock();
	if (!e || e->pid != pid || __atomic_load_n(&e->state, __ATOMIC_ACQUIRE) != MAKING)
		return 0;
	/* user: not joined (ns_share_enter refuses a second maker), no fd. */
	if (fd < 0 && ns_share_joinable(kind)) {
		/* Kept open until the restorer replaces the process's fds. */
		snprintf(path, sizeof(path), "/proc/self/ns/%s", kind);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			ns_share_failed(pid, kind, id);
			return crf_error_errno(errno, "pid %d: %s", (int)pid, path);
		}
	}
	e->fd = fd;
	__atomic_store_n(&e->state, MADE, __ATOMIC_RELEASE);
	return 0;
}

void ns_share_failed(pid_t pid, const char *kind, uint64_t id)
{
	struct entry *e;

	if (!table)
		return;
	lock();
	e = find(base_kind(kind), id);
	unlock();
	if (e && e->pid == pid && __atomic_load_n(&e->state, __ATOMIC_ACQUIRE) == MAKING)
		__atomic_store_n(&e->state, FAILED, __ATOMIC_RELEASE);
}
