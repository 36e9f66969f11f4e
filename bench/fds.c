// SPDX-License-Identifier: GPL-2.0-only
/*
 * fds: how the dump and restore of open fds scale with their number.
 *
 *   fds CRF [N...]   (default: 10 1000 10000; 5 interleaved runs)
 *
 * For each N it starts one process holding N descriptions of one file
 * (fds 3..N+2, each opened on its own, each at an offset of its own), and
 * a tree of 50 processes sharing pipes (a root and 49 children; the root
 * creates one pipe per child before forking it, with 64 bytes buffered in
 * it, and both hold both ends: 196 fds in all).  Each is dumped with crf
 * (which kills it), restored with crf restore -d and killed again, five
 * times interleaved; it prints the medians and the cost per fd, and the
 * marginal cost per fd between the smallest and the largest N.  It is a
 * child subreaper, so a killed tree's orphans are reaped at once (a zombie
 * keeps its PID, which the restore needs).  RLIMIT_NOFILE is raised to its
 * hard limit, which must allow N+3 fds.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "driver.h"

#define RUNS	 5
#define MAX_SETS 8
#define PIPE_N	 50
#define FILE_LEN 65536

static char data_path[] = "/var/tmp/crf-fds-XXXXXX";

/* Tell the parent on @fd that the state is set up, then sleep. */
static void ready_and_sleep(int fd)
{
	if (write(fd, "r", 1) != 1)
		_exit(1);
	close(fd);
	for (;;)
		pause();
}

static void wait_ready(int fd, int count)
{
	char c;

	for (int i = 0; i < count; i++)
		if (read(fd, &c, 1) != 1)
			die("waiting for the workload");
	close(fd);
}

/* One process with @n descriptions of the data file at fds 3..n+2. */
static int start_files(int n, pid_t *pids)
{
	int ready[2];
	pid_t p;

	if (pipe2(ready, O_CLOEXEC) < 0)
		die("pipe");
	p = fork();
	if (p < 0)
		die("fork");
	if (p == 0) {
		int w = fcntl(ready[1], F_DUPFD_CLOEXEC, n + 3);

		if (w < 0)
			_exit(1);
		close(ready[0]);
		close(ready[1]);
		for (int want = 3; want < n + 3; want++) {
			int fd = open(data_path, O_RDONLY);

			if (fd != want || lseek(fd, want % FILE_LEN, SEEK_SET) < 0)
				_exit(1);
		}
		ready_and_sleep(w);
	}
	close(ready[1]);
	wait_ready(ready[0], 1);
	pids[0] = p;
	return 1;
}

/* A root and PIPE_N-1 children, each child sharing a pipe of its own with the root. */
static int start_pipes(pid_t *pids)
{
	int ready[2], from_root[2];
	pid_t root;

	if (pipe2(ready, O_CLOEXEC) < 0 || pipe2(from_root, O_CLOEXEC) < 0)
		die("pipe");
	root = fork();
	if (root < 0)
		die("fork");
	if (root == 0) {
		close(ready[0]);
		close(from_root[0]);
		for (int i = 1; i < PIPE_N; i++) {
			int p[2];
			pid_t c;

			static const char bytes[64];

			if (pipe(p) < 0 || write(p[1], bytes, sizeof(bytes)) != sizeof(bytes))
				_exit(1);
			c = fork();
			if (c < 0)
				_exit(1);
			if (c == 0) {
				int lo = p[0] < p[1] ? p[0] : p[1];

				/* Keep only this pipe (and the ready pipe). */
				close(from_root[1]);
				for (int fd = 3; fd < lo; fd++)
					if (fd != ready[1])
						close(fd);
				ready_and_sleep(ready[1]);
			}
			if (write(from_root[1], &c, sizeof(c)) != sizeof(c))
				_exit(1);
		}
		close(from_root[1]);
		ready_and_sleep(ready[1]);
	}
	close(ready[1]);
	close(from_root[1]);
	pids[0] = root;
	for (int i = 1; i < PIPE_N; i++)
		if (read(from_root[0], &pids[i], sizeof(pids[i])) != sizeof(pids[i]))
			die("reading the tree's PIDs");
	close(from_root[0]);
	wait_ready(ready[0], PIPE_N);
	return PIPE_N;
}

/* @n > 0: one process with @n files; 0: the tree sharing pipes. */
static void measure(const char *crf, int n, double *dump, double *restore)
{
	static pid_t pids[PIPE_N];
	char what[32];
	int tasks = n ? start_files(n, pids) : start_pipes(pids);

	snprintf(what, sizeof(what), n ? "%d files" : "the pipe tree", n);
	dump_restore(crf, what, pids, tasks, dump, restore);
}

static void make_data(void)
{
	static char buf[FILE_LEN];
	int fd = mkstemp(data_path);

	if (fd < 0 || write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf) || close(fd) < 0)
		die(data_path);
}

int main(int argc, char **argv)
{
	int sets[MAX_SETS] = {10, 1000, 10000, 0}, n_sets = 4, nf = 0;
	double d[MAX_SETS][RUNS], r[MAX_SETS][RUNS], md[MAX_SETS], mr[MAX_SETS];
	rlim_t lim;

	if (argc < 2) {
		fprintf(stderr, "usage: fds CRF [N...]\n");
		return 2;
	}
	parse_sets(argc, argv, "fds", sets, &n_sets, MAX_SETS);
	lim = bench_setup();
	for (int s = 0; s < n_sets; s++)
		if (sets[s] && (rlim_t)sets[s] + 4 > lim)
			fprintf(stderr,
				"fds: RLIMIT_NOFILE's hard limit %llu allows N up to %llu\n",
				(unsigned long long)lim, (unsigned long long)lim - 4),
				exit(2);
	make_data();
	for (int run_i = 0; run_i < RUNS; run_i++)
		for (int s = 0; s < n_sets; s++)
			measure(argv[1], sets[s], &d[s][run_i], &r[s][run_i]);
	unlink(data_path);
	printf("%-22s %6s %9s %11s %11s %14s\n", "case", "fds", "dump_ms", "restore_ms",
	       "dump_us/fd", "restore_us/fd");
	for (int s = 0; s < n_sets; s++) {
		int fds = sets[s] ? sets[s] : 4 * (PIPE_N - 1);
		char what[32];

		qsort(d[s], RUNS, sizeof(double), cmp);
		qsort(r[s], RUNS, sizeof(double), cmp);
		md[s] = d[s][RUNS / 2];
		mr[s] = r[s][RUNS / 2];
		if (sets[s])
			snprintf(what, sizeof(what), "1 proc, %d files", sets[s]), nf = s + 1;
		else
			snprintf(what, sizeof(what), "%d procs, %d pipes", PIPE_N, PIPE_N - 1);
		printf("%-22s %6d %9.1f %11.1f %11.1f %14.1f\n", what, fds, md[s], mr[s],
		       md[s] * 1e3 / fds, mr[s] * 1e3 / fds);
	}
	if (nf >= 2 && sets[nf - 1] > sets[0])
		printf("marginal per file (%d -> %d): dump %.1f us, restore %.1f us\n", sets[0],
		       sets[nf - 1], (md[nf - 1] - md[0]) * 1e3 / (sets[nf - 1] - sets[0]),
		       (mr[nf - 1] - mr[0]) * 1e3 / (sets[nf - 1] - sets[0]));
	return 0;
}
