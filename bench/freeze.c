// SPDX-License-Identifier: GPL-2.0-only
/*
 * freeze: how long a tree is frozen with the cgroup freezer against the
 * ptrace freezer.
 *
 *   freeze CRF [N]   (default 100 processes; 5 interleaved runs of each)
 *
 * It makes a scratch cgroup v2 below its own (found in /proc/self/mountinfo),
 * starts a tree of N small processes in it (a root and N-1 children, each
 * with one touched page of its own), and dumps it with `crf dump -v
 * --leave-running`, --freeze=cgroup and --freeze=ptrace in turn; from crf's
 * output it takes the time spent freezing the tree ("tree of pid P: N
 * processes frozen ... in X ms": from the first freeze to the last stop,
 * the cgroup's freeze and thaw included) and the whole time the tree was
 * frozen ("was frozen for X ms", the freeze to the thaw at the end).  Prints the medians and the
 * ratios cgroup/ptrace.  The tree and the cgroup are removed at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "driver.h"

#define RUNS  5
#define MAX_N 4096

static char cgroup[4096];

/* Our cgroup v2's directory, and a child of it for the tree. */
static void make_cgroup(void)
{
	char line[8192], mnt[4096] = "", own[4096] = "";
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		die("/proc/self/mountinfo");
	while (fgets(line, sizeof(line), f))
		if (strstr(line, " - cgroup2 ") && sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1)
			break;
	fclose(f);
	f = fopen("/proc/self/cgroup", "re");
	if (!f)
		die("/proc/self/cgroup");
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(own, sizeof(own), "%.4000s",
				 strcmp(line + 3, "/") ? line + 3 : "");
		}
	fclose(f);
	if (!*mnt)
		fprintf(stderr, "freeze: no cgroup2 mount\n"), exit(1);
	snprintf(cgroup, sizeof(cgroup), "%.2000s%.1000s/crf-bench-freeze-%d", mnt, own,
		 (int)getpid());
	if (mkdir(cgroup, 0755) < 0)
		die(cgroup);
}

/* A tree of @n processes in the cgroup; their PIDs go to @pids (the root first). */
static void start_tree(int n, pid_t *pids)
{
	char procs[4200];
	int ready[2];
	pid_t root;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cgroup);
	if (pipe(ready) < 0)
		die("pipe");
	root = fork();
	if (root < 0)
		die("fork");
	if (root == 0) {
		char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				  -1, 0);
		int fd = open(procs, O_WRONLY);

		if (fd < 0 || write(fd, "0", 1) != 1)
			_exit(1);
		close(fd);
		close(ready[0]);
		tree_root(n, ready[1], page);
	}
	close(ready[1]);
	pids[0] = root;
	tree_pids(ready[0], pids, n);
}

/* crf dump -v --leave-running --freeze=@how of @root: its output into @out. */
static int dump(const char *crf, pid_t root, const char *how, char *out, size_t len)
{
	char pid[16], freeze[32], dir[] = "/tmp/crf-bench-freeze-XXXXXX";
	char *argv[] = {(char *)crf, "dump", "-v", "--leave-running", freeze, "-t", pid,
			"-D",	     dir,    NULL};
	size_t got = 0;
	int p[2], st;
	ssize_t n;
	pid_t c;

	if (!mkdtemp(dir))
		die("mkdtemp");
	snprintf(pid, sizeof(pid), "%d", (int)root);
	snprintf(freeze, sizeof(freeze), "--freeze=%s", how);
	if (pipe(p) < 0)
		die("pipe");
	c = fork();
	if (c < 0)
		die("fork");
	if (c == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 0);
		dup2(p[1], 1);
		dup2(p[1], 2);
		execv(crf, argv);
		_exit(127);
	}
	close(p[1]);
	while ((n = read(p[0], out + got, len - 1 - got)) > 0)
		got += (size_t)n;
	out[got] = '\0';
	close(p[0]);
	while (waitpid(c, &st, 0) < 0)
		if (errno != EINTR)
			die("waitpid");
	{
		char rm[128];

		snprintf(rm, sizeof(rm), "rm -rf %s", dir);
		if (system(rm) != 0)
			fprintf(stderr, "freeze: cannot remove %s\n", dir);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The tree's freeze time and its whole frozen time, from crf's output. */
static void parse(const char *out, double *freezing, double *frozen)
{
	*freezing = 0;
	*frozen = -1;
	for (const char *l = out; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] == '\n')) {
		const char *s = strstr(l, "tree of pid ");
		const char *e = strchr(l, '\n');
		double v;

		if (s && (!e || s < e) && (s = strstr(s, " in ")) && (!e || s < e) &&
		    sscanf(s, " in %lf ms", &v) == 1)
			*freezing = v;
		s = strstr(l, "was frozen for ");
		if (s && (!e || s < e) && sscanf(s, "was frozen for %lf ms", &v) == 1)
			*frozen = v;
	}
}

int main(int argc, char **argv)
{
	static char out[1 << 20];
	static pid_t pids[MAX_N];
	const char *how[2] = {"cgroup", "ptrace"};
	double fz[2][RUNS], fr[2][RUNS];
	int n = argc > 2 ? atoi(argv[2]) : 100;

	(void)dump_restore; /* driver.h's, for the other drivers */
	if (argc < 2 || n < 1 || n > MAX_N) {
		fprintf(stderr, "usage: freeze CRF [N (1..%d)]\n", MAX_N);
		return 2;
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		die("PR_SET_CHILD_SUBREAPER");
	if (syscall(SYS_close_range, 3, ~0u, 0) < 0)
		die("close_range");
	make_cgroup();
	start_tree(n, pids);
	for (int run_i = 0; run_i < RUNS; run_i++)
		for (int m = 0; m < 2; m++) {
			int st = dump(argv[1], pids[0], how[m], out, sizeof(out));

			if (st)
				fprintf(stderr, "freeze: crf dump --freeze=%s: status %d\n%s",
					how[m], st, out);
			parse(out, &fz[m][run_i], &fr[m][run_i]);
			if (m == 0 && !strstr(out, "frozen with the cgroup freezer"))
				fprintf(stderr, "freeze: the tree was not frozen by its cgroup\n");
		}
	kill_tree(pids, n);
	if (rmdir(cgroup) < 0)
		perror(cgroup);
	printf("%8s %8s %13s %10s\n", "procs", "freezer", "freezing_ms", "frozen_ms");
	for (int m = 0; m < 2; m++) {
		qsort(fz[m], RUNS, sizeof(double), cmp);
		qsort(fr[m], RUNS, sizeof(double), cmp);
		printf("%8d %8s %13.2f %10.1f\n", n, how[m], fz[m][RUNS / 2], fr[m][RUNS / 2]);
	}
	printf("cgroup/ptrace: freezing %.2f, frozen %.2f\n", fz[0][RUNS / 2] / fz[1][RUNS / 2],
	       fr[0][RUNS / 2] / fr[1][RUNS / 2]);
	return 0;
}
