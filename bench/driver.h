/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * driver.h - what the benchmark drivers (trees.c, fds.c, sockets.c) share: timing,
 * running crf, killing and reaping what they started, and one dump and
 * restore round of a started tree.  Header-only: each driver is built with
 * a plain `cc` (see README.md).
 */
#ifndef CRF_BENCH_DRIVER_H
#define CRF_BENCH_DRIVER_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

/*
 * Dump the started tree of @tasks processes (@pids, the root first) with
 * crf, which kills it (with @dump_arg, an option of crf dump, unless NULL),
 * restore it, and kill it again: the wall times of the dump and the
 * restore.  @what names the case in failure messages.
 */
static void dump_restore_with(const char *crf, const char *what, const pid_t *pids, int tasks,
			      const char *dump_arg, double *dump, double *restore)
{
	char pid[16], dir[] = "/var/tmp/crf-bench-img-XXXXXX";
	double t0;

	if (!mkdtemp(dir))
		die("mkdtemp");
	rmdir(dir);
	snprintf(pid, sizeof(pid), "%d", (int)pids[0]);
	t0 = now_ms();
	if (run(crf,
		(char *[]){(char *)crf, "dump", "-t", pid, "-D", dir, (char *)dump_arg, NULL})) {
		fprintf(stderr, "bench: crf dump of %s failed\n", what);
		kill_tree(pids, tasks);
		exit(1);
	}
	*dump = now_ms() - t0;
	kill_tree(pids, tasks);
	t0 = now_ms();
	if (run(crf, (char *[]){(char *)crf, "restore", "-D", dir, "-d", NULL})) {
		fprintf(stderr, "bench: crf restore of %s failed\n", what);
		exit(1);
	}
	*restore = now_ms() - t0;
	kill_tree(pids, tasks);
	if (run("/bin/rm", (char *[]){"rm", "-rf", dir, NULL}))
		fprintf(stderr, "bench: cannot remove %s\n", dir);
}

/* The same, with no option for crf dump. */
static inline void dump_restore(const char *crf, const char *what, const pid_t *pids, int tasks,
				double *dump, double *restore)
{
	dump_restore_with(crf, what, pids, tasks, NULL, dump, restore);
}

/*
 * The sets of a driver's command line: "NAME CRF [N...]" (N > 0), the
 * defaults kept without any; a 0 closes the list for the driver's own
 * last case.  Exits 2 on a bad N.
 */
static inline void parse_sets(int argc, char **argv, const char *name, int *sets, int *n_sets,
			      int max)
{
	if (argc <= 2)
		return;
	for (*n_sets = 0; *n_sets + 2 < argc && *n_sets < max - 1; (*n_sets)++)
		if ((sets[*n_sets] = atoi(argv[*n_sets + 2])) <= 0)
			fprintf(stderr, "%s: N must be positive\n", name), exit(2);
	sets[(*n_sets)++] = 0;
}

/*
 * RLIMIT_NOFILE raised to its hard limit (returned), a child subreaper (a
 * killed tree's orphans are reaped at once: a zombie keeps its PID, which
 * the restore needs), and no fd but 0-2 left to the workloads.
 */
static inline rlim_t bench_setup(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		die("getrlimit");
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		die("setrlimit");
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		die("PR_SET_CHILD_SUBREAPER");
	if (syscall(SYS_close_range, 3, ~0u, 0) < 0)
		die("close_range");
	return rl.rlim_max;
}

/*
 * In a tree's root: fork @n - 1 children, each dirtying its copy of @page
 * and pausing, their PIDs written to @ready; then pause for ever.
 */
static inline _Noreturn void tree_root(int n, int ready, char *page)
{
	for (int i = 1; i < n; i++) {
		pid_t c = fork();

		if (c == 0) {
			close(ready);
			page[0] = (char)i;
			for (;;)
				pause();
		}
		if (c < 0 || write(ready, &c, sizeof(c)) != sizeof(c))
			_exit(1);
	}
	close(ready);
	for (;;)
		pause();
}

/* In the driver: the @n - 1 children's PIDs tree_root() writes to @ready, after pids[0]. */
static inline void tree_pids(int ready, pid_t *pids, int n)
{
	for (int i = 1; i < n; i++)
		if (read(ready, &pids[i], sizeof(pids[i])) != sizeof(pids[i]))
			die("reading the tree's PIDs");
	close(ready);
}

#endif
