// SPDX-License-Identifier: GPL-2.0-only
/*
 * trees: how the dump and restore of a process tree scale with its size.
 *
 *   trees CRF [N...] [-tT...]   (default: 10 100 500 -t64; 5 interleaved runs)
 *
 * For each N it starts a tree of N small processes (a root and N-1
 * children, each with one touched page of its own), for each -tT one
 * process with T threads, dumps it with crf
 * (which kills it), restores it with crf restore -d, kills it again, and
 * prints the medians of the dump and restore times and the cost per
 * process.  It is a child subreaper, so the killed tree's orphans are reaped
 * at once: a zombie keeps its PID, and the restore needs those PIDs.
 */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "driver.h"

#define RUNS  5
#define MAX_N 4096

/* A tree of @n processes; their PIDs go to @pids (the root first). */
static pid_t start_tree(int n, pid_t *pids)
{
	int ready[2];
	pid_t root;

	if (pipe(ready) < 0)
		die("pipe");
	root = fork();
	if (root < 0)
		die("fork");
	if (root == 0) {
		char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				  -1, 0);

		close(ready[0]);
		tree_root(n, ready[1], page);
	}
	close(ready[1]);
	pids[0] = root;
	tree_pids(ready[0], pids, n);
	return root;
}

static void *idle_thread(void *arg)
{
	for (;;)
		pause();
	return arg;
}

/* One process with @n threads (the main one included). */
static pid_t start_threads(int n, pid_t *pids)
{
	int ready[2];
	char c;
	pid_t p;

	if (pipe(ready) < 0)
		die("pipe");
	p = fork();
	if (p < 0)
		die("fork");
	if (p == 0) {
		pthread_t t;

		close(ready[0]);
		for (int i = 1; i < n; i++)
			if (pthread_create(&t, NULL, idle_thread, NULL))
				_exit(1);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		close(ready[1]);
		for (;;)
			pause();
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1)
		die("waiting for the threads");
	close(ready[0]);
	pids[0] = p;
	return p;
}

/* @n > 0: a tree of @n processes; @n < 0: one process with -@n threads. */
static void measure(const char *crf, int n, double *dump, double *restore)
{
	static pid_t pids[MAX_N];
	char what[32];

	if (n > 0)
		start_tree(n, pids);
	else
		start_threads(-n, pids);
	snprintf(what, sizeof(what), n > 0 ? "%d processes" : "%d threads", abs(n));
	dump_restore(crf, what, pids, n > 0 ? n : 1, dump, restore);
}

int main(int argc, char **argv)
{
	int sizes[16] = {10, 100, 500, -64}, n_sizes = 4;
	double d[16][RUNS], r[16][RUNS];

	if (argc < 2) {
		fprintf(stderr, "usage: trees CRF [N...]\n");
		return 2;
	}
	if (argc > 2)
		for (n_sizes = 0; n_sizes + 2 < argc && n_sizes < 16; n_sizes++)
			sizes[n_sizes] = strncmp(argv[n_sizes + 2], "-t", 2)
						 ? atoi(argv[n_sizes + 2])
						 : -atoi(argv[n_sizes + 2] + 2);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		die("PR_SET_CHILD_SUBREAPER");
	if (syscall(SYS_close_range, 3, ~0u, 0) < 0)
		die("close_range");
	for (int run_i = 0; run_i < RUNS; run_i++)
		for (int s = 0; s < n_sizes; s++) {
			if (!sizes[s] || sizes[s] > MAX_N || sizes[s] < -MAX_N)
				fprintf(stderr, "trees: N must be 1..%d\n", MAX_N), exit(2);
			measure(argv[1], sizes[s], &d[s][run_i], &r[s][run_i]);
		}
	printf("%12s %9s %11s %14s %17s\n", "tasks", "dump_ms", "restore_ms", "dump_ms/task",
	       "restore_ms/task");
	for (int s = 0; s < n_sizes; s++) {
		int n = abs(sizes[s]);
		char what[32];

		qsort(d[s], RUNS, sizeof(double), cmp);
		qsort(r[s], RUNS, sizeof(double), cmp);
		snprintf(what, sizeof(what), sizes[s] > 0 ? "%d procs" : "%d threads", n);
		printf("%12s %9.0f %11.0f %14.2f %17.2f\n", what, d[s][RUNS / 2], r[s][RUNS / 2],
		       d[s][RUNS / 2] / n, r[s][RUNS / 2] / n);
	}
	return 0;
}
