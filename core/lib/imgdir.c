// SPDX-License-Identifier: GPL-2.0-only
/*
 * The per-task images of an image directory ("mm-1234.img"), in PID order,
 * and whether a PID an image names is a task of the dump.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/image.h>
#include <crf/log.h>

/* The PID of @name when it is exactly "@prefix-PID.img", else 0. */
static pid_t task_image_pid(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);
	char again[64];
	int pid;

	if (strncmp(name, prefix, n) || name[n] != '-' || sscanf(name + n + 1, "%d", &pid) != 1 ||
	    pid <= 0)
		return 0;
	snprintf(again, sizeof(again), "%s-%d.img", prefix, pid);
	return strcmp(again, name) ? 0 : (pid_t)pid;
}

static int pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* The PIDs of @dir's "@prefix-PID.img" files, sorted, in *@out (malloc()ed). */
static int task_images(struct crf_imgdir *dir, const char *prefix, pid_t **out, size_t *n)
{
	_cleanup_closedir_ DIR *d = NULL;
	_cleanup_free_ pid_t *v = NULL;
	size_t cap = 0;
	struct dirent *de;
	int fd;

	*n = 0;
	fd = openat(crf_imgdir_fd(dir), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return crf_error_errno(errno, "%s: open the image directory", crf_imgdir_path(dir));
	d = fdopendir(fd);
	if (!d) {
		int r = crf_error_errno(errno, "%s: open the image directory",
					crf_imgdir_path(dir));

		close(fd);
		return r;
	}
	while ((errno = 0, de = readdir(d))) {
		pid_t pid = task_image_pid(de->d_name, prefix);

		if (!pid)
			continue;
		if (*n == cap) {
			pid_t *w = reallocarray(v, cap ? 2 * cap : 16, sizeof(*v));

			if (!w)
				return crf_error_errno(ENOMEM, "%s", crf_imgdir_path(dir));
			v = w;
			cap = cap ? 2 * cap : 16;
		}
		v[(*n)++] = pid;
	}
	if (errno)
		return crf_error_errno(errno, "%s: read the image directory", crf_imgdir_path(dir));
	if (*n)
		qsort(v, *n, sizeof(*v), pid_cmp);
	*out = TAKE_PTR(v);
	return 0;
}

int crf_imgdir_each_task(struct crf_imgdir *dir, const char *prefix,
			 int (*fn)(void *arg, const char *name, pid_t pid), void *arg)
{
	_cleanup_free_ pid_t *pids = NULL;
	char name[64];
	size_t n;
	int r = task_images(dir, prefix, &pids, &n);

	for (size_t i = 0; r >= 0 && i < n; i++) {
		snprintf(name, sizeof(name), "%s-%d.img", prefix, (int)pids[i]);
		r = fn(arg, name, pids[i]);
	}
	return r < 0 ? r : 0;
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
