// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-cgprops STATUS [PROCS_FILE [ns]]: a process and its child, in the
 * cgroups the test put the process in (the child moves itself to the cgroup
 * v2 whose cgroup.procs is PROCS_FILE first); with "ns", in a cgroup
 * namespace the process makes in its cgroups before it forks (so that it
 * reads "/" and its child "/b" for its cgroup v2).  Each remembers its
 * /proc/self/cgroup and, every 20 ms, reads it again and writes how many
 * times it did to STATUS.0 (the process) or STATUS.1 (the child); the
 * first time it reads otherwise, it writes "BAD" and what it read there
 * and exits 1, unless STATUS.rebase exists (the test moved the tree with
 * crf restore --cgroup-root): then what it reads now is the new reference.
 * tests/e2e/cgroup-props.sh drives it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sched.h>
#include <sys/syscall.h>

static int read_cgroup(char *buf, size_t len)
{
	int fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

/*
 * In place, at a fixed width, with no temporary file: the test restores one
 * image several times, and an fd crf saved on a file the first restored tree
 * then renamed away would make the next restore refuse.
 */
static void put(const char *file, const char *text)
{
	size_t len = strlen(text);
	int fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0 || pwrite(fd, text, len, 0) != (ssize_t)len || ftruncate(fd, (off_t)len) < 0 ||
	    close(fd) < 0)
		exit(2);
}

static int loop(const char *base, const char *file)
{
	char rebase[4096];

	static char first[8192], now[8192], out[8300];
	const struct timespec tick = {.tv_nsec = 20 * 1000 * 1000};

	if (read_cgroup(first, sizeof(first)) < 0)
		return 2;
	for (unsigned long n = 1;; n++) {
		if (read_cgroup(now, sizeof(now)) < 0)
			return 2;
		snprintf(rebase, sizeof(rebase), "%s.rebase", base);
		if (strcmp(first, now) && access(rebase, F_OK) == 0)
			memcpy(first, now, sizeof(first));
		if (strcmp(first, now)) {
			snprintf(out, sizeof(out), "BAD\n%s", now);
			put(file, out);
			return 1;
		}
		snprintf(out, sizeof(out), "%20lu\n", n);
		put(file, out);
		nanosleep(&tick, NULL);
	}
}

int main(int argc, char **argv)
{
	char file[4096];
	pid_t kid;

	if (argc < 2)
		return 2;
	/* Nothing of the test's shell may stay open: crf would refuse its pipes. */
	syscall(SYS_close_range, 3, ~0U, 0);
	if (argc > 3 && !strcmp(argv[3], "ns") && unshare(CLONE_NEWCGROUP) < 0)
		return 4;
	kid = fork();
	if (kid < 0)
		return 2;
	if (kid == 0) {
		if (argc > 2) {
			int fd = open(argv[2], O_WRONLY | O_CLOEXEC);

			if (fd < 0 || write(fd, "0", 1) < 0)
				return 3;
			close(fd);
		}
		snprintf(file, sizeof(file), "%s.1", argv[1]);
		return loop(argv[1], file);
	}
	snprintf(file, sizeof(file), "%s.0", argv[1]);
	return loop(argv[1], file);
}
