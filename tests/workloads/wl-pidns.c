// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-pidns: a tree that spans two PID namespace levels.
 *
 *   O  the root, in the harness's PID namespace
 *   +- I  clone3(CLONE_NEWPID): PID 1 of a new namespace
 *      +- C  PID 2 there (or whatever fork gave it)
 *
 * No new mount namespace: all of them see the host's /proc, so the NSpid
 * line of /proc/self/status gives every level.  After the restore, I and
 * C check their inner PID (getpid), their parent (0 for I: its parent is
 * outside), that NSpid has two levels ending with their inner PID and
 * starting with the outer PID they had, and their memory; each waits for
 * its child, and O's exit status is the verdict of the tree.
 */
#include "wl.h"

#include <errno.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define BUF_BYTES (16 * 1024)

struct node {
	const char *name;
	pid_t pid, ppid, ns_pid[2];
	int levels;
	pid_t kid;
	unsigned char *buf;
	uint64_t seed;
};

static int setup_r = -1, setup_w = -1;

/* NSpid of /proc/self/status: the PIDs from the host's level down. */
static int read_ns_pids(pid_t *out, int max)
{
	char text[128], *p, *end;
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

static void node_init(struct node *n, const char *name)
{
	n->name = name;
	n->pid = getpid();
	n->ppid = getppid();
	n->levels = read_ns_pids(n->ns_pid, 2);
	n->buf = mmap(NULL, BUF_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (n->buf == MAP_FAILED)
		wl_fail("%s: mmap: %s", name, strerror(errno));
	n->seed = 0x9d50000ULL + (uint64_t)n->ns_pid[0];
	wl_fill(n->buf, BUF_BYTES, n->seed);
}

static _Noreturn void verify_and_exit(const struct node *n)
{
	pid_t now[3];
	int levels = read_ns_pids(now, 3), st;
	ssize_t bad;

	if (getpid() != n->pid || getppid() != n->ppid)
		wl_fail("%s: pid %d parent %d, expected pid %d parent %d", n->name, (int)getpid(),
			(int)getppid(), (int)n->pid, (int)n->ppid);
	if (levels != n->levels || now[levels - 1] != n->pid || now[0] != n->ns_pid[0])
		wl_fail("%s: NSpid has %d levels (%d ... %d), expected %d (%d ... %d)", n->name,
			levels, (int)now[0], (int)now[levels - 1], n->levels, (int)n->ns_pid[0],
			(int)n->pid);
	bad = wl_cmp_fill(n->buf, BUF_BYTES, n->seed);
	if (bad >= 0)
		wl_fail("%s: its memory differs at offset %zd", n->name, bad);
	if (n->kid) {
		if (waitpid(n->kid, &st, 0) != n->kid)
			wl_fail("%s: waitpid(%d): %s", n->name, (int)n->kid, strerror(errno));
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			wl_fail("%s: its child %d failed (status %#x)", n->name, (int)n->kid, st);
	}
	if (n->levels == 1)
		wl_note("a tree across two PID namespace levels: PIDs of every level intact");
	exit(0);
}

static _Noreturn void run_node(struct node *n)
{
	close(setup_w);
	wl_wait_verify();
	verify_and_exit(n);
}

static void child_c(void)
{
	struct node n = {0};

	node_init(&n, "C");
	WL_CHECK(n.levels == 2 && n.ppid == 1, "C: %d levels, parent %d", n.levels, (int)n.ppid);
	run_node(&n);
}

static void init_i(void)
{
	struct node n = {0};

	node_init(&n, "I");
	WL_CHECK(n.pid == 1 && n.levels == 2 && n.ppid == 0, "I: pid %d, %d levels, parent %d",
		 (int)n.pid, n.levels, (int)n.ppid);
	n.kid = fork();
	if (n.kid < 0)
		wl_fail("I: fork: %s", strerror(errno));
	if (n.kid == 0)
		child_c();
	run_node(&n);
}

int main(void)
{
	struct clone_args ca = {.flags = CLONE_NEWPID, .exit_signal = SIGCHLD};
	struct node root = {0};
	int setup[2];
	char c;

	wl_init("pidns");
	if (pipe(setup) < 0)
		wl_fail("pipe: %s", strerror(errno));
	setup_r = setup[0];
	setup_w = setup[1];
	node_init(&root, "O");
	/* Like fork (no CLONE_VM), with a new PID namespace for the child. */
	root.kid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
	if (root.kid < 0)
		wl_fail("clone3(CLONE_NEWPID): %s", strerror(errno));
	if (root.kid == 0) {
		close(setup_r);
		init_i();
	}
	close(setup_w);
	if (read(setup_r, &c, 1) != 0)
		wl_fail("setup pipe: unexpected data");
	close(setup_r);
	wl_ready();
	wl_wait_verify();
	verify_and_exit(&root);
}
