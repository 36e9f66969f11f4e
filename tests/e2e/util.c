// SPDX-License-Identifier: GPL-2.0-only
/* Helpers of the end-to-end harness that need none of its state. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};

	nanosleep(&ts, NULL);
}

void print_tail(const char *title, const char *path)
{
	char buf[2048], *p, *nl;
	ssize_t n;
	off_t size;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	size = lseek(fd, 0, SEEK_END);
	n = pread(fd, buf, sizeof(buf) - 1,
		  size > (off_t)sizeof(buf) - 1 ? size - (off_t)sizeof(buf) + 1 : 0);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	p = buf;
	if (size > n && (nl = strchr(p, '\n')))
		p = nl + 1;
	fprintf(stderr, "  %s (%s):\n", title, path);
	for (; *p; p = nl + 1) {
		nl = strchrnul(p, '\n');
		fprintf(stderr, "  | %.*s\n", (int)(nl - p), p);
		if (!*nl)
			break;
	}
}

/* Field 4 of /proc/PID/stat (the parent) and field 3 (the state). */
pid_t proc_stat(pid_t pid, char *state)
{
	char path[64], buf[1024], *p;
	int fd, ppid = -1;
	ssize_t n;

	*state = '?';
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c %d", state, &ppid) != 2)
		return -1;
	return ppid;
}

/* Remove an image directory: it holds plain files only. */
void remove_images(const char *dir)
{
	struct dirent *e;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((e = readdir(d)))
		if (e->d_type == DT_REG || e->d_type == DT_LNK)
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
	if (rmdir(dir) < 0)
		fprintf(stderr, "  note: %s is not empty, left in place\n", dir);
}

void remove_tree(const char *path)
{
	struct dirent *e;
	char sub[PATH_MAX];
	DIR *d = opendir(path);

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		if (e->d_type == DT_DIR)
			remove_tree(sub);
		else
			unlink(sub);
	}
	closedir(d);
	rmdir(path);
}

const char *describe_status(int st)
{
	static char buf[64];

	if (WIFEXITED(st))
		snprintf(buf, sizeof(buf), "exit status %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, sizeof(buf), "killed by signal %d (%s)", WTERMSIG(st),
			 strsignal(WTERMSIG(st)));
	else
		snprintf(buf, sizeof(buf), "status %#x", st);
	return buf;
}

/*
 * Rewrite maps lines with single spaces.  Shared anonymous memory and a
 * memfd are new kernel objects after a restore, with another device and inode number:
 * those two fields become "#" on its lines.
 */
void normalize_maps(char *maps)
{
	char *in = maps, *out = maps;

	while (*in) {
		char range[64], perms[8], off[32], dev[32], ino[32], line[512];
		char *end = strchr(in, '\n'), *path;
		int used = 0, n;

		if (end)
			*end = '\0';
		if (sscanf(in, "%63s %7s %31s %31s %31s %n", range, perms, off, dev, ino, &used) <
		    5)
			used = 0;
		path = in + used;
		if (used && (strstr(path, "/dev/zero (deleted)") || strstr(path, "[anon_shmem:") ||
			     !strncmp(path, "/memfd:", 7)))
			strcpy(dev, "#"), strcpy(ino, "#");
		/* Never longer than the input line: safe to move back in place. */
		n = used ? snprintf(line, sizeof(line), "%s %s %s %s %s %s\n", range, perms, off,
				    dev, ino, path)
			 : 0;
		if (n > 0 && (size_t)n < sizeof(line)) {
			memmove(out, line, (size_t)n);
			out += n;
		}
		if (!end)
			break;
		in = end + 1;
	}
	*out = '\0';
}

/* The line of @text that holds offset @at, copied to @out. */
void line_at(const char *text, size_t at, char *out, size_t len)
{
	size_t start = at, end = at;

	while (start > 0 && text[start - 1] != '\n')
		start--;
	while (text[end] && text[end] != '\n')
		end++;
	snprintf(out, len, "%.*s", (int)(end - start), text + start);
}

int read_maps(pid_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n, got = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((size_t)got < len - 1 && (n = read(fd, buf + got, len - 1 - (size_t)got)) > 0)
		got += n;
	close(fd);
	buf[got] = '\0';
	normalize_maps(buf);
	return 0;
}
