// SPDX-License-Identifier: GPL-2.0-only
/*
 * Helpers for the checks a restore runs on the images before the first fork
 * (ABI 1.5, crf/image.h): the per-process images of a dump, and whether
 * a PID they name is a live process of the dumped tree.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/image.h>
#include <crf/log.h>

/* Is @name exactly PREFIX-PID.img, as crf writes it?  Then *@pid. */
static bool pid_name(const char *name, const char *prefix, pid_t *pid)
{
	size_t n = strlen(prefix);
	char again[300];
	int v;

	if (strncmp(name, prefix, n) || name[n] != '-' || sscanf(name + n + 1, "%d", &v) != 1 ||
	    v <= 0)
		return false;
	snprintf(again, sizeof(again), "%s-%d.img", prefix, v);
	*pid = v;
	return !strcmp(again, name);
}

int crf_img_each_pid(struct crf_imgdir *dir, const char *prefix,
		     int (*fn)(struct crf_imgdir *dir, const char *name, pid_t pid, void *arg),
		     void *arg)
{
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	int fd, r = 0;
	pid_t pid;

	fd = openat(crf_imgdir_fd(dir), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		r = crf_error_errno(errno, "%s", crf_imgdir_path(dir));
		if (fd >= 0)
			close(fd);
		return r;
	}
	while (r >= 0 && (errno = 0, de = readdir(d)))
		if (pid_name(de->d_name, prefix, &pid))
			r = fn(dir, de->d_name, pid, arg);
	if (r >= 0 && errno)
		r = crf_error_errno(errno, "%s", crf_imgdir_path(dir));
	return r;
}

int crf_img_check_task(struct crf_imgdir *dir, const char *img, pid_t pid)
{
	char core[64];

	snprintf(core, sizeof(core), "core-%d.img", (int)pid);
	if (pid > 0 && faccessat(crf_imgdir_fd(dir), core, F_OK, 0) == 0)
		return 0;
	return crf_error_errno(EBADMSG, "%s/%s: PID %d is not a live process of the dump (no %s)",
			       crf_imgdir_path(dir), img, (int)pid, core);
}
