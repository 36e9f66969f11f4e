// SPDX-License-Identifier: GPL-2.0-only
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"

/* The mount point of the cgroup2 hierarchy, from /proc/self/mountinfo. */
static int cgroup2_mount(char *out, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	int r = -ENOENT;

	if (!f)
		return -errno;
	while (r < 0 && fgets(line, sizeof(line), f)) {
		char mnt[1024], *sep = strstr(line, " - ");

		/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT ... - FSTYPE SOURCE OPTS" */
		if (!sep || strncmp(sep, " - cgroup2 ", 11) ||
		    sscanf(line, "%*s %*s %*s %*s %1023s", mnt) != 1)
			continue;
		/* Mount points never hold the escaped characters here. */
		if (snprintf(out, len, "%s", mnt) < (int)len)
			r = 0;
	}
	fclose(f);
	return r;
}

/* Our cgroup v2 path: the "0::PATH" line of /proc/self/cgroup. */
static int own_cgroup(char *out, size_t len)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[4096];
	int r = -ENOENT;

	if (!f)
		return -errno;
	while (r < 0 && fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = '\0';
			if (snprintf(out, len, "%s", line + 3) < (int)len)
				r = 0;
		}
	fclose(f);
	return r;
}

int e2e_cgroup_create(const char *name, char *path, size_t len)
{
	char mnt[1024], own[2048];
	int r = cgroup2_mount(mnt, sizeof(mnt));

	if (r >= 0)
		r = own_cgroup(own, sizeof(own));
	if (r < 0)
		return r;
	if (snprintf(path, len, "%s%s/%s", mnt, strcmp(own, "/") ? own : "", name) >= (int)len)
		return -ENAMETOOLONG;
	return mkdir(path, 0755) < 0 ? -errno : 0;
}

int e2e_cgroup_enter(const char *path)
{
	char procs[4200];
	int fd, r = 0;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", path);
	fd = open(procs, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, "0", 1) != 1)
		r = -errno;
	close(fd);
	return r;
}

/* rmdir @path, retrying while a killed task still leaves it. */
static int remove_one(const char *path)
{
	const struct timespec tick = {0, 10 * 1000 * 1000};

	/* A killed task leaves its cgroup a little after it is reaped. */
	for (int i = 0; i < 300; i++) {
		if (rmdir(path) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			return -errno;
		nanosleep(&tick, NULL);
	}
	return -EBUSY;
}

int e2e_cgroup_remove(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int r = 0;

	while (d && (e = readdir(d))) {
		char sub[4200];

		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		if (e2e_cgroup_remove(sub) < 0)
			r = -errno;
	}
	if (d)
		closedir(d);
	return r < 0 ? r : remove_one(path);
}

/* Our path in the v1 hierarchy mounted with @opts ("rw,cpu"), from /proc/self/cgroup. */
static int v1_own(const char *opts, char *out, size_t len)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[4096];
	int r = -ENOENT;

	if (!f)
		return -errno;
	while (r < 0 && fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':'), *p = c ? strchr(c + 1, ':') : NULL;
		char want[256];

		if (!p || p == c + 1)
			continue;
		*p = '\0';
		/* Every controller (or name=) of the line is an option of the mount. */
		r = 0;
		for (char *tok = strtok(c + 1, ","); tok && !r; tok = strtok(NULL, ",")) {
			snprintf(want, sizeof(want), ",%s,", tok);
			if (!strstr(opts, want))
				r = -ENOENT;
		}
		p[1 + strcspn(p + 1, "\n")] = '\0';
		if (!r && snprintf(out, len, "%s", p + 1) >= (int)len)
			r = -ENAMETOOLONG;
	}
	fclose(f);
	return r;
}

static int copy_file(const char *from_dir, const char *to_dir, const char *name)
{
	char from[4200], to[4200], buf[256];
	ssize_t n;
	int fd;

	snprintf(from, sizeof(from), "%s/%s", from_dir, name);
	snprintf(to, sizeof(to), "%s/%s", to_dir, name);
	fd = open(from, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf));
	if (fd >= 0)
		close(fd);
	if (n < 0)
		return -errno;
	fd = open(to, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, buf, (size_t)n) != n) {
		int r = -errno;

		if (fd >= 0)
			close(fd);
		return r;
	}
	close(fd);
	return 0;
}

/* One v1 mount line: make @name under our cgroup there. */
static int v1_one(char *line, const char *name, char *path, size_t len)
{
	char mnt[1024], opts[1024], own[2048], parent[4096];
	char *sep = strstr(line, " - cgroup ");
	int r;

	if (!sep || sscanf(line, "%*s %*s %*s %*s %1023s", mnt) != 1 ||
	    sscanf(sep + 10, "%*s %1021s", opts + 1) != 1)
		return -ENOENT;
	opts[0] = ',';
	strcat(opts, ",");
	r = v1_own(opts, own, sizeof(own));
	if (r < 0)
		return r;
	snprintf(parent, sizeof(parent), "%s%s", mnt, strcmp(own, "/") ? own : "");
	if (snprintf(path, len, "%s/%s", parent, name) >= (int)len)
		return -ENAMETOOLONG;
	if (mkdir(path, 0755) < 0)
		return -errno;
	if (strstr(opts, ",cpuset,") && ((r = copy_file(parent, path, "cpuset.cpus")) < 0 ||
					 (r = copy_file(parent, path, "cpuset.mems")) < 0)) {
		rmdir(path);
		return r;
	}
	return 0;
}

int e2e_cgroup_v1_create(const char *name, char (*paths)[4096], int max)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	int n = 0, r = 0;

	if (!f)
		return -errno;
	while (r >= 0 && n < max && fgets(line, sizeof(line), f)) {
		r = v1_one(line, name, paths[n], sizeof(paths[n]));
		if (r == -ENOENT)
			r = 0;
		else if (r >= 0)
			n++;
	}
	fclose(f);
	if (r < 0)
		while (n > 0)
			e2e_cgroup_remove(paths[--n]);
	return r < 0 ? r : n;
}
