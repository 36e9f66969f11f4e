// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-tree-wide [N]: a root and N-1 children (N = 100 by default), each
 * with its own pseudo-random memory.  After the restore every child checks
 * its PID, its parent and its memory and exits 0; the root checks its own,
 * waits for every child and exits 0 only if all of them did.
 *
 * The setup is synchronised as in wl-tree: each child closes its copy of a
 * pipe's write end once set up, and the root's read sees EOF when all did.
 */
#include "wl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define BUF_BYTES (16 * 1024)

struct self {
	pid_t pid, ppid;
	unsigned char *buf;
	uint64_t seed;
};

static void set_up(struct self *s)
{
	s->pid = getpid();
	s->ppid = getppid();
	s->buf = mmap(NULL, BUF_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->buf == MAP_FAILED)
		wl_fail("mmap: %s", strerror(errno));
	s->seed = 0x31de0000ULL + (uint64_t)s->pid;
	wl_fill(s->buf, BUF_BYTES, s->seed);
}

static void check(const struct self *s)
{
	ssize_t bad;

	if (getpid() != s->pid || getppid() != s->ppid)
		wl_fail("pid %d parent %d, expected pid %d parent %d", (int)getpid(),
			(int)getppid(), (int)s->pid, (int)s->ppid);
	bad = wl_cmp_fill(s->buf, BUF_BYTES, s->seed);
	if (bad >= 0)
		wl_fail("pid %d: its memory differs at offset %zd", (int)s->pid, bad);
}

static _Noreturn void child(int setup_w)
{
	struct self s;

	set_up(&s);
	close(setup_w);
	wl_wait_verify();
	check(&s);
	exit(0);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100, setup[2], failed = 0;
	struct self root;
	pid_t *kids;
	char c;

	wl_init("tree-wide");
	if (n < 1 || !(kids = calloc((size_t)n, sizeof(*kids))))
		wl_fail("usage: wl-tree-wide [N >= 1]");
	if (pipe(setup) < 0)
		wl_fail("pipe: %s", strerror(errno));
	for (int i = 1; i < n; i++) {
		kids[i] = fork();
		if (kids[i] < 0)
			wl_fail("fork: %s", strerror(errno));
		if (kids[i] == 0) {
			close(setup[0]);
			child(setup[1]);
		}
	}
	close(setup[1]);
	set_up(&root);
	if (read(setup[0], &c, 1) != 0)
		wl_fail("setup pipe: unexpected data");
	close(setup[0]);
	wl_ready();
	wl_wait_verify();
	check(&root);
	for (int i = 1; i < n; i++) {
		int st;

		if (waitpid(kids[i], &st, 0) != kids[i])
			wl_fail("waitpid(%d): %s", (int)kids[i], strerror(errno));
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			failed++;
	}
	if (failed)
		wl_fail("%d of %d children failed", failed, n - 1);
	wl_note("%d processes: PIDs, parents and memory intact", n);
	return 0;
}
