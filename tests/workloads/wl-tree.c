// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-tree: a three-level process tree with its own session and groups.
 *
 *   root R                (the harness's session and group)
 *   +- A  setsid          (session A, group A)
 *   |  +- A1              (session A, group A)
 *   |  +- A2  setpgid(0,0) (session A, its own group A2)
 *   +- B  setpgid(0,0)    (R's session, its own group B)
 *      +- B1              (group B)
 *      +- B2  back into R's group (setpgid(0, getpgid(R)))
 *      +- Y   in the group of X, a child of B that made it and was reaped:
 *             a group whose leader is gone
 *
 * Every process fills a private buffer with its own pseudo-random bytes.
 * After the restore each checks its PID, parent, session, group and buffer,
 * then its children's session and group, then waits for its children: it
 * exits 0 only if all of them did, so the root's status is the verdict of
 * the whole tree.  A process may hold no fd but 0-2 during the dump, so the
 * setup is synchronised with a pipe whose every copy is closed before the
 * root calls itself ready: the root's read sees EOF only then.
 */
#include "wl.h"
#include "wl-tree.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define BUF_BYTES (64 * 1024)

static int setup_r = -1, setup_w = -1;

static void fill_memory(struct node *n)
{
	n->buf = mmap(NULL, BUF_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (n->buf == MAP_FAILED)
		wl_fail("%s: mmap: %s", n->name, strerror(errno));
	n->seed = 0x7ee0000ULL + (uint64_t)getpid();
	wl_fill(n->buf, BUF_BYTES, n->seed);
}

static void record_self(struct node *n, const char *name)
{
	n->name = name;
	n->self = (struct expect){getpid(), getppid(), getsid(0), getpgid(0)};
}

/* After the restore: self, the children's places, then their verdicts. */
static _Noreturn void verify_and_exit(const struct node *n)
{
	wl_node_verify(n, BUF_BYTES);
	if (!strcmp(n->name, "root"))
		wl_note("8 processes: PIDs, parents, sessions, groups (one without its leader) "
			"and memory intact");
	exit(0);
}

/* Set up, report through the setup pipe by closing it, wait, verify. */
static _Noreturn void run_node(struct node *n)
{
	fill_memory(n);
	close(setup_w);
	wl_wait_verify();
	verify_and_exit(n);
}

/* Fork a child that runs @fn; record what it is expected to look like. */
static void spawn(struct node *parent, void (*fn)(void), pid_t sid, pid_t pgid_or_self)
{
	pid_t pid = fork();

	if (pid < 0)
		wl_fail("fork: %s", strerror(errno));
	if (pid == 0) {
		close(setup_r);
		setup_r = -1;
		fn();
		_exit(1);
	}
	parent->kids[parent->n_kids++] =
		(struct expect){pid, getpid(), sid ? sid : pid, pgid_or_self ? pgid_or_self : pid};
}

static pid_t root_pgid;

static void leaf_a1(void)
{
	struct node n = {0};

	record_self(&n, "A1");
	run_node(&n);
}

static void leaf_a2(void)
{
	struct node n = {0};

	if (setpgid(0, 0) < 0)
		wl_fail("A2: setpgid: %s", strerror(errno));
	record_self(&n, "A2");
	run_node(&n);
}

static void leaf_b1(void)
{
	struct node n = {0};

	record_self(&n, "B1");
	run_node(&n);
}

static void leaf_b2(void)
{
	struct node n = {0};

	if (setpgid(0, root_pgid) < 0)
		wl_fail("B2: setpgid(0, %d): %s", (int)root_pgid, strerror(errno));
	record_self(&n, "B2");
	run_node(&n);
}

static void child_a(void)
{
	struct node n = {0};

	if (setsid() < 0)
		wl_fail("A: setsid: %s", strerror(errno));
	record_self(&n, "A");
	spawn(&n, leaf_a1, getpid(), getpid());
	spawn(&n, leaf_a2, getpid(), 0);
	run_node(&n);
}

static pid_t gone_leader;

static void leaf_y(void)
{
	struct node n = {0};

	if (setpgid(0, gone_leader) < 0)
		wl_fail("Y: setpgid(0, %d): %s", (int)gone_leader, strerror(errno));
	record_self(&n, "Y");
	run_node(&n);
}

/* X makes a group, Y joins it, X ends and B reaps it: the group lives on. */
static void spawn_orphaned_group(struct node *b)
{
	pid_t y;

	gone_leader = fork();
	if (gone_leader < 0)
		wl_fail("fork: %s", strerror(errno));
	if (gone_leader == 0) {
		close(setup_r);
		close(setup_w);
		for (;;)
			pause();
	}
	if (setpgid(gone_leader, gone_leader) < 0)
		wl_fail("B: setpgid(%d): %s", (int)gone_leader, strerror(errno));
	spawn(b, leaf_y, getsid(0), gone_leader);
	y = b->kids[b->n_kids - 1].pid;
	/* Both sides set it, so that it is done before X goes, whoever runs first. */
	if (setpgid(y, gone_leader) < 0 && errno != EACCES)
		wl_fail("B: setpgid(%d, %d): %s", (int)y, (int)gone_leader, strerror(errno));
	kill(gone_leader, SIGKILL);
	if (waitpid(gone_leader, NULL, 0) != gone_leader)
		wl_fail("B: waitpid(%d): %s", (int)gone_leader, strerror(errno));
}

static void child_b(void)
{
	struct node n = {0};

	if (setpgid(0, 0) < 0)
		wl_fail("B: setpgid: %s", strerror(errno));
	record_self(&n, "B");
	spawn(&n, leaf_b1, getsid(0), getpid());
	spawn(&n, leaf_b2, getsid(0), root_pgid);
	spawn_orphaned_group(&n);
	run_node(&n);
}

int main(void)
{
	struct node root = {0};
	int setup[2];
	char c;

	wl_init("tree");
	record_self(&root, "root");
	root_pgid = getpgid(0);
	if (pipe(setup) < 0)
		wl_fail("pipe: %s", strerror(errno));
	setup_r = setup[0];
	setup_w = setup[1];
	spawn(&root, child_a, 0, 0);
	spawn(&root, child_b, getsid(0), 0);
	/* Every copy of the write end is closed once each process is set up. */
	close(setup[1]);
	fill_memory(&root);
	if (read(setup[0], &c, 1) != 0)
		wl_fail("setup pipe: unexpected data");
	close(setup[0]);
	/* The children's places as set up, before the dump. */
	for (int k = 0; k < root.n_kids; k++)
		wl_check_ids("a child before the dump", root.kids[k].pid, &root.kids[k]);
	wl_ready();
	wl_wait_verify();
	verify_and_exit(&root);
}
