// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-pidns-nested [unshare]: a tree across three PID namespace levels.
 *
 *   O   the root, in the harness's PID namespace (level 0)
 *   +- I1  clone3(CLONE_NEWPID): PID 1 of level 1
 *      +- A   a child of I1 (PID 2 there)
 *      +- I2  clone3(CLONE_NEWPID): PID 1 of level 2, its PID in level 1 too
 *         +- B   a child of I2 (PID 2 there), with PIDs in all three levels
 *
 * With "unshare", I2 is made the other way: I1 calls unshare(CLONE_NEWPID)
 * after forking A, and its next child is PID 1 there; I1 keeps a
 * pid_for_children that differs from its pid namespace.  With "pending",
 * I1 unshares after forking A and forks nothing more: its pid_for_children
 * has no process yet.  In both, I1 forks a probe after the restore, which
 * must land there.
 *
 * No new mount namespace: every process reads the host's /proc, so the
 * NSpid line of /proc/self/status has all its levels.  After the restore
 * each checks getpid, getppid, every level of its NSpid, and its memory,
 * then waits for its children; O's exit status is the tree's verdict.
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define BUF_BYTES (8 * 1024)
#define MAX_LV	  4
#define MAX_KIDS  2

struct node {
	const char *name;
	pid_t pid, ppid, ns_pid[MAX_LV];
	int levels;
	pid_t kid[MAX_KIDS];
	int n_kids;
	unsigned char *buf;
	uint64_t seed;
};

static int setup_w = -1, setup_r = -1;
/* I2 outlives I1's probe, which may land in its namespace: EOF once I1 closes its end. */
static int probe_r = -1, probe_w = -1;
static bool use_unshare, pending;

static int read_ns_pids(pid_t *out, int max)
{
	char text[160], *p, *end;
	int n = 0;

	wl_status_field("NSpid", text, sizeof(text));
	for (p = text; n < max; p = end) {
		long v = strtol(p, &end, 10);

		if (end == p)
			break;
		out[n++] = (pid_t)v;
	}
	return n;
}

/*
 * After the restore, I1 (modes unshare, pending) forks a probe: it must
 * land in I1's pid_for_children, at level 2: as PID 1 of a new namespace
 * when none had a process yet (pending), beside I2 and B otherwise.
 */
static void probe(void)
{
	pid_t ids[MAX_LV], k = fork();
	int st, lv;

	if (k < 0)
		wl_fail("I1: fork the probe: %s", strerror(errno));
	if (k == 0) {
		lv = read_ns_pids(ids, MAX_LV);
		if (lv != 3 || getppid() != 0 || (pending ? getpid() != 1 : getpid() <= 2))
			wl_fail("I1's probe: %d PID levels, pid %d, parent %d", lv, (int)getpid(),
				(int)getppid());
		_exit(0);
	}
	if (waitpid(k, &st, 0) != k || !WIFEXITED(st) || WEXITSTATUS(st))
		wl_fail("I1: its probe failed (status %#x)", st);
}

static void node_init(struct node *n, const char *name, int levels)
{
	n->name = name;
	n->pid = getpid();
	n->ppid = getppid();
	n->levels = read_ns_pids(n->ns_pid, MAX_LV);
	WL_CHECK(n->levels == levels, "%s: %d PID levels, expected %d", name, n->levels, levels);
	WL_CHECK(n->ns_pid[levels - 1] == n->pid, "%s: NSpid ends with %d, getpid %d", name,
		 (int)n->ns_pid[levels - 1], (int)n->pid);
	n->buf = mmap(NULL, BUF_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (n->buf == MAP_FAILED)
		wl_fail("%s: mmap: %s", name, strerror(errno));
	n->seed = 0x9e50000ULL + (uint64_t)n->ns_pid[0];
	wl_fill(n->buf, BUF_BYTES, n->seed);
}

static _Noreturn void verify_and_exit(const struct node *n)
{
	pid_t now[MAX_LV];
	int levels = read_ns_pids(now, MAX_LV), st;
	ssize_t bad;
	char c;

	if (getpid() != n->pid || getppid() != n->ppid)
		wl_fail("%s: pid %d parent %d, expected pid %d parent %d", n->name, (int)getpid(),
			(int)getppid(), (int)n->pid, (int)n->ppid);
	if (levels != n->levels)
		wl_fail("%s: NSpid has %d levels, expected %d", n->name, levels, n->levels);
	for (int l = 0; l < levels; l++)
		if (now[l] != n->ns_pid[l])
			wl_fail("%s: PID %d at level %d, expected %d", n->name, (int)now[l], l,
				(int)n->ns_pid[l]);
	bad = wl_cmp_fill(n->buf, BUF_BYTES, n->seed);
	if (bad >= 0)
		wl_fail("%s: its memory differs at offset %zd", n->name, bad);
	if (!strcmp(n->name, "I1") && (use_unshare || pending))
		probe();
	if (probe_w >= 0)
		close(probe_w);
	if (!strcmp(n->name, "I2") && read(probe_r, &c, 1) != 0)
		wl_fail("I2: the probe pipe: %s", strerror(errno));
	for (int k = 0; k < n->n_kids; k++) {
		if (waitpid(n->kid[k], &st, 0) != n->kid[k])
			wl_fail("%s: waitpid(%d): %s", n->name, (int)n->kid[k], strerror(errno));
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			wl_fail("%s: its child %d failed (status %#x)", n->name, (int)n->kid[k],
				st);
	}
	if (n->levels == 1)
		wl_note("a tree across three PID namespace levels: PIDs of every level intact");
	exit(0);
}

static _Noreturn void run_node(struct node *n)
{
	close(setup_w);
	wl_wait_verify();
	verify_and_exit(n);
}

/* Like fork, with a new PID namespace for the child (PID 1 there). */
static pid_t fork_newpid(void)
{
	struct clone_args ca = {.flags = CLONE_NEWPID, .exit_signal = SIGCHLD};

	return (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
}

static _Noreturn void leaf(const char *name, int levels)
{
	struct node n = {0};

	close(probe_w);
	probe_w = -1;
	node_init(&n, name, levels);
	WL_CHECK(n.ppid == 1 && n.pid == 2, "%s: pid %d parent %d", name, (int)n.pid, (int)n.ppid);
	run_node(&n);
}

static _Noreturn void init_2(void)
{
	struct node n = {0};

	close(probe_w);
	probe_w = -1;
	node_init(&n, "I2", 3);
	WL_CHECK(n.pid == 1 && n.ppid == 0, "I2: pid %d parent %d", (int)n.pid, (int)n.ppid);
	n.kid[n.n_kids] = fork();
	if (n.kid[n.n_kids] < 0)
		wl_fail("I2: fork: %s", strerror(errno));
	if (n.kid[n.n_kids] == 0)
		leaf("B", 3);
	n.n_kids++;
	run_node(&n);
}

static _Noreturn void init_1(void)
{
	struct node n = {0};
	int p[2];
	pid_t k;

	node_init(&n, "I1", 2);
	WL_CHECK(n.pid == 1 && n.ppid == 0, "I1: pid %d parent %d", (int)n.pid, (int)n.ppid);
	if (pipe(p) < 0)
		wl_fail("I1: pipe: %s", strerror(errno));
	probe_r = p[0];
	probe_w = p[1];
	k = fork();
	if (k < 0)
		wl_fail("I1: fork: %s", strerror(errno));
	if (k == 0)
		leaf("A", 2);
	n.kid[n.n_kids++] = k;
	if (pending) {
		if (unshare(CLONE_NEWPID) < 0)
			wl_fail("I1: unshare(CLONE_NEWPID): %s", strerror(errno));
		run_node(&n);
	}
	if (use_unshare) {
		if (unshare(CLONE_NEWPID) < 0)
			wl_fail("I1: unshare(CLONE_NEWPID): %s", strerror(errno));
		k = fork();
	} else {
		k = fork_newpid();
	}
	if (k < 0)
		wl_fail("I1: fork into a new PID namespace: %s", strerror(errno));
	if (k == 0)
		init_2();
	n.kid[n.n_kids++] = k;
	run_node(&n);
}

int main(int argc, char **argv)
{
	struct node root = {0};
	int setup[2];
	char c;

	wl_init("pidns-nested");
	use_unshare = argc > 1 && !strcmp(argv[1], "unshare");
	pending = argc > 1 && !strcmp(argv[1], "pending");
	if (pipe(setup) < 0)
		wl_fail("pipe: %s", strerror(errno));
	setup_r = setup[0];
	setup_w = setup[1];
	node_init(&root, "O", 1);
	root.kid[0] = fork_newpid();
	if (root.kid[0] < 0)
		wl_fail("clone3(CLONE_NEWPID): %s", strerror(errno));
	if (root.kid[0] == 0) {
		close(setup_r);
		init_1();
	}
	root.n_kids = 1;
	close(setup_w);
	/* Every process closes its end once set up: EOF when all are. */
	if (read(setup_r, &c, 1) != 0)
		wl_fail("setup pipe: unexpected data");
	close(setup_r);
	wl_ready();
	wl_wait_verify();
	verify_and_exit(&root);
}
