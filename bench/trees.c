// SPDX-License-Identifier: GPL-2.0-only
/*
 * trees: how the dump and restore of a process tree scale with its size.
 *
 *   trees CRF [N...]        (default N: 10 100 500; 5 interleaved runs each)
 *
 * For each N it starts a tree of N small processes (a root and N-1
 * children, each with one touched page of its own), dumps it with crf
 * (which kills it), restores it with crf restore -d, kills it again, and
 * prints the medians of the dump and restore times and the cost per
 * process.  It is a child subreaper, so the killed tree's orphans are reaped
 * at once: a zombie keeps its PID, and the restore needs those PIDs.
 */
#include <errno.h>
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

#define RUNS 5
#define MAX_N 4096

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* Reap every child that has ended, without blocking. */
static void reap_all(void)
{
	while (waitpid(-1, NULL, WNOHANG | __WALL) > 0)
		;
}

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
		for (int i = 1; i < n; i++) {
			pid_t c = fork();

			if (c == 0) {
				close(ready[1]);
				page[0] = (char)i;
				for (;;)
					pause();
			}
			if (c < 0 || write(ready[1], &c, sizeof(c)) != sizeof(c))
				_exit(1);
		}
		close(ready[1]);
		for (;;)
			pause();
	}
	close(ready[1]);
	pids[0] = root;
	for (int i = 1; i < n; i++)
		if (read(ready[0], &pids[i], sizeof(pids[i])) != sizeof(pids[i]))
			die("reading the tree's PIDs");
	close(ready[0]);
	return root;
}

static int run(const char *crf, char *const argv[])
{
	pid_t p = fork();
	int st;

	if (p < 0)
		die("fork");
	if (p == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 0);
		dup2(null, 1);
		execv(crf, argv);
		_exit(127);
	}
	while (waitpid(p, &st, 0) < 0)
		if (errno != EINTR)
			die("waitpid");
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void kill_tree(const pid_t *pids, int n)
{
	for (int i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	for (int i = 0; i < n; i++)
		while (kill(pids[i], 0) == 0) {
			reap_all();
			usleep(1000);
		}
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void measure(const char *crf, int n, double *dump, double *restore)
{
	static pid_t pids[MAX_N];
	char pid[16], dir[] = "/var/tmp/crf-trees-XXXXXX";
	double t0;

	if (!mkdtemp(dir))
		die("mkdtemp");
	rmdir(dir);
	start_tree(n, pids);
	snprintf(pid, sizeof(pid), "%d", (int)pids[0]);
	t0 = now_ms();
	if (run(crf, (char *[]){ (char *)crf, "dump", "-t", pid, "-D", dir, NULL }))
		fprintf(stderr, "trees: crf dump of %d processes failed\n", n), exit(1);
	*dump = now_ms() - t0;
	kill_tree(pids, n);
	t0 = now_ms();
	if (run(crf, (char *[]){ (char *)crf, "restore", "-D", dir, "-d", NULL }))
		fprintf(stderr, "trees: crf restore of %d processes failed\n", n), exit(1);
	*restore = now_ms() - t0;
	kill_tree(pids, n);
	if (run("/bin/rm", (char *[]){ "rm", "-rf", dir, NULL }))
		fprintf(stderr, "trees: cannot remove %s\n", dir);
}

int main(int argc, char **argv)
{
	int sizes[16] = { 10, 100, 500 }, n_sizes = 3;
	double d[16][RUNS], r[16][RUNS];

	if (argc < 2) {
		fprintf(stderr, "usage: trees CRF [N...]\n");
		return 2;
	}
	if (argc > 2)
		for (n_sizes = 0; n_sizes + 2 < argc && n_sizes < 16; n_sizes++)
			sizes[n_sizes] = atoi(argv[n_sizes + 2]);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		die("PR_SET_CHILD_SUBREAPER");
	if (syscall(SYS_close_range, 3, ~0u, 0) < 0)
		die("close_range");
	for (int run_i = 0; run_i < RUNS; run_i++)
		for (int s = 0; s < n_sizes; s++) {
			if (sizes[s] < 1 || sizes[s] > MAX_N)
				fprintf(stderr, "trees: N must be 1..%d\n", MAX_N), exit(2);
			measure(argv[1], sizes[s], &d[s][run_i], &r[s][run_i]);
		}
	printf("%8s %9s %11s %14s %17s\n", "procs", "dump_ms", "restore_ms", "dump_ms/proc",
	       "restore_ms/proc");
	for (int s = 0; s < n_sizes; s++) {
		qsort(d[s], RUNS, sizeof(double), cmp);
		qsort(r[s], RUNS, sizeof(double), cmp);
		printf("%8d %9.0f %11.0f %14.2f %17.2f\n", sizes[s], d[s][RUNS / 2], r[s][RUNS / 2],
		       d[s][RUNS / 2] / sizes[s], r[s][RUNS / 2] / sizes[s]);
	}
	return 0;
}
