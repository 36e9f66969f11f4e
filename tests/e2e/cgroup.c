// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
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

int e2e_cgroup_remove(const char *path)
{
	const struct timespec tick = { 0, 10 * 1000 * 1000 };

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
