// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-session: sessions whose members are not where a fork from their
 * leader puts them.  The root is a child subreaper (as a service manager
 * or a container's init is), so the processes orphaned below it come to it:
 *
 *   root R  PR_SET_CHILD_SUBREAPER  (the harness's session and group)
 *   +- A   setsid                   (session A, group A), alive
 *   |      forked X, which forked Y and exited: A reaped X, Y came to R
 *   +- Y   (session A, group A)     its session's leader A is its sibling
 *   +- M   (session S, group S)     forked by S, which then exited (R reaped
 *      |                            it): a session and a group whose leader
 *      |                            is gone
 *      +- M1 setpgid(0, 0)          (session S, its own group)
 *
 * The restore forks Y from A with CLONE_PARENT, and M from a helper with
 * PID S that calls setsid.  After the restore each process checks its PID,
 * parent, session, group and memory, and its children's session and group,
 * then waits for its children: the root's status is the whole tree's
 * verdict.  The setup is synchronised with pipes whose every copy is closed
 * before the root calls itself ready (only fds 0-2 may be open at the dump).
 */
#include "wl.h"
#include "wl-tree.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define BUF_BYTES (16 * 1024)

/* What the middle processes tell the root before they exit. */
struct report {
	int32_t tag; /* 'Y' or 'M' */
	struct expect e;
};

static int setup_r = -1, setup_w = -1, report_r = -1, report_w = -1;
static pid_t root_pid;

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static _Noreturn void verify_and_exit(const struct node *n)
{
	wl_node_verify(n, BUF_BYTES);
	if (n->self.pid == root_pid)
		wl_note("5 processes: a session whose leader is a sibling, and one whose leader "
			"is gone, intact");
	exit(0);
}

/* @ppid: the parent it will have once set up (the root, for the reparented ones). */
static void node_init(struct node *n, const char *name, pid_t ppid)
{
	n->name = name;
	n->self = (struct expect){getpid(), ppid, getsid(0), getpgid(0)};
	n->buf = mmap(NULL, BUF_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (n->buf == MAP_FAILED)
		wl_fail("%s: mmap: %s", name, strerror(errno));
	n->seed = 0x5e55000ULL + (uint64_t)getpid();
	wl_fill(n->buf, BUF_BYTES, n->seed);
}

static _Noreturn void run_node(struct node *n)
{
	close_fd(&setup_w);
	close_fd(&report_w);
	wl_wait_verify();
	verify_and_exit(n);
}

static pid_t fork_or_fail(void)
{
	pid_t pid = fork();

	if (pid < 0)
		wl_fail("fork: %s", strerror(errno));
	if (pid == 0) {
		close_fd(&setup_r);
		close_fd(&report_r);
	}
	return pid;
}

static void send_report(int tag, pid_t pid, pid_t sid, pid_t pgid)
{
	struct report rep = {tag, {pid, root_pid, sid, pgid}};

	if (write(report_w, &rep, sizeof(rep)) != sizeof(rep))
		wl_fail("report: %s", strerror(errno));
}

static void leaf_m1(void)
{
	struct node n = {0};

	if (setpgid(0, 0) < 0)
		wl_fail("M1: setpgid: %s", strerror(errno));
	node_init(&n, "M1", getppid());
	run_node(&n);
}

/* M's parent will be the root once S is gone. */
static void child_m(void)
{
	struct node n = {0};
	pid_t m1;

	node_init(&n, "M", root_pid);
	m1 = fork_or_fail();
	if (m1 == 0)
		leaf_m1();
	/* Both sides set it, so that it is done whoever runs first. */
	if (setpgid(m1, m1) < 0 && errno != EACCES)
		wl_fail("M: setpgid(%d): %s", (int)m1, strerror(errno));
	n.kids[n.n_kids++] = (struct expect){m1, getpid(), getsid(0), m1};
	run_node(&n);
}

/* S: a session leader that forks M and exits. */
static _Noreturn void child_s(void)
{
	pid_t m;

	if (setsid() < 0)
		wl_fail("S: setsid: %s", strerror(errno));
	m = fork_or_fail();
	if (m == 0)
		child_m();
	send_report('M', m, getpid(), getpid());
	_exit(0);
}

/* A: a session leader whose grandchild Y comes to the root when X exits. */
static void child_a(void)
{
	struct node n = {0};
	pid_t x, y;

	if (setsid() < 0)
		wl_fail("A: setsid: %s", strerror(errno));
	node_init(&n, "A", root_pid);
	x = fork_or_fail();
	if (x == 0) {
		y = fork_or_fail();
		if (y == 0) {
			struct node yn = {0};

			node_init(&yn, "Y", root_pid);
			run_node(&yn);
		}
		send_report('Y', y, getsid(0), getpgid(0));
		_exit(0);
	}
	if (waitpid(x, NULL, 0) != x)
		wl_fail("A: waitpid(%d): %s", (int)x, strerror(errno));
	run_node(&n);
}

/* The reports of Y and M: the root's children to be. */
static void read_reports(struct node *root)
{
	struct report rep;
	ssize_t r;

	close_fd(&report_w);
	while ((r = read(report_r, &rep, sizeof(rep))) == sizeof(rep)) {
		if (root->n_kids == MAX_KIDS)
			wl_fail("too many reports");
		root->kids[root->n_kids++] = rep.e;
	}
	if (r != 0 || root->n_kids != MAX_KIDS)
		wl_fail("reports: %zd bytes, %d children", r, root->n_kids);
	close_fd(&report_r);
}

int main(void)
{
	struct node root = {0};
	int setup[2], report[2];
	pid_t a, s;
	char c;

	wl_init("session");
	root_pid = getpid();
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		wl_fail("PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
	if (pipe(setup) < 0 || pipe(report) < 0)
		wl_fail("pipe: %s", strerror(errno));
	setup_r = setup[0];
	setup_w = setup[1];
	report_r = report[0];
	report_w = report[1];
	node_init(&root, "root", getppid());
	a = fork_or_fail();
	if (a == 0)
		child_a();
	root.kids[root.n_kids++] = (struct expect){a, root_pid, a, a};
	s = fork_or_fail();
	if (s == 0)
		child_s();
	read_reports(&root);
	if (waitpid(s, NULL, 0) != s)
		wl_fail("waitpid(%d): %s", (int)s, strerror(errno));
	close_fd(&setup_w);
	if (read(setup_r, &c, 1) != 0)
		wl_fail("setup pipe: unexpected data");
	close_fd(&setup_r);
	for (int k = 0; k < root.n_kids; k++)
		wl_check_ids("a child before the dump", root.kids[k].pid, &root.kids[k]);
	wl_ready();
	wl_wait_verify();
	verify_and_exit(&root);
}
