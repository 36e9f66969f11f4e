// SPDX-License-Identifier: GPL-2.0-only
/*
 * sockets: how the dump and restore of sockets scale with their number.
 *
 *   sockets CRF [N...]   (default: 1 100 1000; 5 interleaved runs)
 *
 * For each N it starts one process holding N established TCP connections
 * over loopback, both ends (the listener closed once they are accepted: 2N
 * sockets, each with 64 bytes sent and not yet read), dumped with crf dump
 * --tcp-established; and one process holding 1000 unix socketpairs (2000
 * sockets, 64 bytes queued on one end of each).  Each is dumped (which kills
 * it), restored with crf restore -d and killed again, five times
 * interleaved; it prints the medians, the cost per socket, and the
 * marginal cost per TCP connection between the smallest and the largest N.
 * A child subreaper like fds.c; RLIMIT_NOFILE is raised to its hard limit.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "driver.h"

#define RUNS	 5
#define MAX_SETS 8
#define PAIRS	 1000

static const char bytes[64];

static void ready_and_sleep(int fd)
{
	if (write(fd, "r", 1) != 1)
		_exit(1);
	close(fd);
	for (;;)
		pause();
}

/* @n TCP connections over loopback, both ends here; 0: PAIRS socketpairs. */
static void make_sockets(int n)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int l;

	if (!n) {
		for (int i = 0; i < PAIRS; i++) {
			int sv[2];

			if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0 ||
			    write(sv[0], bytes, sizeof(bytes)) != sizeof(bytes))
				_exit(1);
		}
		return;
	}
	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, n) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &len) < 0)
		_exit(1);
	for (int i = 0; i < n; i++) {
		int c = socket(AF_INET, SOCK_STREAM, 0), s;

		if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)) < 0)
			_exit(1);
		s = accept(l, NULL, NULL);
		if (s < 0 || write(c, bytes, sizeof(bytes)) != sizeof(bytes) ||
		    write(s, bytes, sizeof(bytes)) != sizeof(bytes))
			_exit(1);
	}
	close(l);
}

static pid_t start(int n)
{
	int ready[2];
	char c;
	pid_t p;

	if (pipe2(ready, O_CLOEXEC) < 0)
		die("pipe");
	p = fork();
	if (p < 0)
		die("fork");
	if (p == 0) {
		close(ready[0]);
		make_sockets(n);
		ready_and_sleep(ready[1]);
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1)
		die("waiting for the workload");
	close(ready[0]);
	return p;
}

static void measure(const char *crf, int n, double *dump, double *restore)
{
	pid_t pid = start(n);
	char what[48];

	snprintf(what, sizeof(what), n ? "%d TCP connections" : "%d socketpairs", n ? n : PAIRS);
	dump_restore_with(crf, what, &pid, 1, n ? "--tcp-established" : NULL, dump, restore);
}

int main(int argc, char **argv)
{
	int sets[MAX_SETS] = {1, 100, 1000, 0}, n_sets = 4, nt = 0;
	double d[MAX_SETS][RUNS], r[MAX_SETS][RUNS], md[MAX_SETS], mr[MAX_SETS];

	if (argc < 2) {
		fprintf(stderr, "usage: sockets CRF [N...]\n");
		return 2;
	}
	parse_sets(argc, argv, "sockets", sets, &n_sets, MAX_SETS);
	bench_setup();
	for (int run_i = 0; run_i < RUNS; run_i++)
		for (int s = 0; s < n_sets; s++)
			measure(argv[1], sets[s], &d[s][run_i], &r[s][run_i]);
	printf("%-26s %8s %9s %11s %12s %15s\n", "case", "sockets", "dump_ms", "restore_ms",
	       "dump_us/sk", "restore_us/sk");
	for (int s = 0; s < n_sets; s++) {
		int sks = 2 * (sets[s] ? sets[s] : PAIRS);
		char what[40];

		qsort(d[s], RUNS, sizeof(double), cmp);
		qsort(r[s], RUNS, sizeof(double), cmp);
		md[s] = d[s][RUNS / 2];
		mr[s] = r[s][RUNS / 2];
		if (sets[s])
			snprintf(what, sizeof(what), "%d TCP connections", sets[s]), nt = s + 1;
		else
			snprintf(what, sizeof(what), "%d unix socketpairs", PAIRS);
		printf("%-26s %8d %9.1f %11.1f %12.1f %15.1f\n", what, sks, md[s], mr[s],
		       md[s] * 1e3 / sks, mr[s] * 1e3 / sks);
	}
	if (nt >= 2 && sets[nt - 1] > sets[0])
		printf("marginal per TCP connection (%d -> %d): dump %.1f us, restore %.1f us\n",
		       sets[0], sets[nt - 1], (md[nt - 1] - md[0]) * 1e3 / (sets[nt - 1] - sets[0]),
		       (mr[nt - 1] - mr[0]) * 1e3 / (sets[nt - 1] - sets[0]));
	return 0;
}
