// SPDX-License-Identifier: GPL-2.0-only
/*
 * The cgroup v2 freezer for crf_freeze().  Freezing a cgroup stops every
 * task in it at once, so no thread can clone or exit while crf seizes them
 * one by one; it is used only when the target is alone in its cgroup,
 * since it would stop everything else there too.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <crf/log.h>
#include <crf/mountinfo.h>

#include "freeze-cgroup.h"
#include "procfs.h"
#include "util.h"

/* The "0::PATH" line of /proc/PID/cgroup: the cgroup v2 path. */
static int v2_path(pid_t pid, char **path)
{
	_cleanup_free_ char *text = NULL;
	char file[64];
	char *line;
	int r;

	snprintf(file, sizeof(file), "/proc/%d/cgroup", (int)pid);
	r = crf_read_file(file, &text);
	if (r == -ENOENT)
		return crf_error_errno(ESRCH, "pid %d", (int)pid);
	if (r < 0)
		return crf_error_errno(r, "%s", file);
	for (line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		if (!strncmp(line, "0::", 3)) {
			*path = strdup(line + 3);
			return *path ? 0 : -ENOMEM;
		}
	}
	return -ENOENT;
}

static int cgroup2_mount(char *mnt, size_t len)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return crf_error_errno(errno, "/proc/self/mountinfo");
	return crf_cgroup2_mount_from_mountinfo(f, mnt, len);
}

/* Is any cgroup below @dir populated?  (Freezing @dir would stop it too.) */
static bool populated_below(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	bool busy = false;

	if (!d)
		return false;
	while (!busy && (e = readdir(d))) {
		_cleanup_free_ char *events = NULL;
		_cleanup_free_ char *path = NULL;

		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		path = xasprintf("%s/%s/cgroup.events", dir, e->d_name);
		if (path && crf_read_file(path, &events) >= 0)
			busy = strstr(events, "populated 1") != NULL;
	}
	closedir(d);
	return busy;
}

/* Is @pid the only process in DIR/cgroup.procs? */
static bool alone(const char *dir, pid_t pid)
{
	_cleanup_free_ char *procs = NULL;
	_cleanup_free_ char *path = xasprintf("%s/cgroup.procs", dir);
	char *end;

	if (!path || crf_read_file(path, &procs) < 0)
		return false;
	return strtol(procs, &end, 10) == pid && (*end == '\n' || !*end) && (!*end || !end[1]);
}

static int read_cg_file(const char *dir, const char *name, char **text)
{
	_cleanup_free_ char *path = xasprintf("%s/%s", dir, name);

	if (!path)
		return -ENOMEM;
	return crf_read_file(path, text);
}

int cgroup_of_lone(pid_t pid, char *dir, size_t len, char *why, size_t why_len)
{
	_cleanup_free_ char *rel = NULL;
	_cleanup_free_ char *freeze = NULL;
	char mnt[4096];
	int r;

	r = v2_path(pid, &rel);
	if (r == -ENOENT || (r >= 0 && !strcmp(rel, "/"))) {
		snprintf(why, why_len, "pid %d is in the root cgroup v2 (or none)", (int)pid);
		return -EBUSY;
	}
	if (r < 0)
		return r;
	r = cgroup2_mount(mnt, sizeof(mnt));
	if (r < 0) {
		snprintf(why, why_len, "no cgroup2 mount found: %s", strerror(-r));
		return -EBUSY;
	}
	if ((size_t)snprintf(dir, len, "%s%s", mnt, rel) >= len)
		return crf_error_errno(ENAMETOOLONG, "cgroup %s%s", mnt, rel);
	if (read_cg_file(dir, "cgroup.freeze", &freeze) < 0) {
		snprintf(why, why_len, "%s has no cgroup.freeze", dir);
		return -EBUSY;
	}
	/* Already frozen by someone else: thawing it afterwards would be wrong. */
	if (freeze[0] != '0') {
		snprintf(why, why_len, "%s is frozen already", dir);
		return -EBUSY;
	}
	if (!alone(dir, pid) || populated_below(dir)) {
		snprintf(why, why_len, "%s holds other processes than pid %d", dir, (int)pid);
		return -EBUSY;
	}
	return 0;
}

static int write_freeze(const char *dir, const char *val)
{
	_cleanup_free_ char *path = xasprintf("%s/cgroup.freeze", dir);
	_cleanup_close_ int fd = -1;

	if (!path)
		return -ENOMEM;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, val, 1) != 1)
		return crf_error_errno(errno, "writing %s to %s", val, path);
	return 0;
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000L + (t.tv_nsec - t0->tv_nsec) / 1000000L;
}

/*
 * cgroup.events changes are signalled to poll() as POLLPRI (kernfs notify);
 * the file is read again from the start after each one.
 */
static int wait_frozen(const char *path, int timeout_ms)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct timespec t0;
	char buf[256];
	ssize_t n;

	if (fd < 0)
		return crf_error_errno(errno, "%s", path);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd pfd = {.fd = fd, .events = POLLPRI};
		long left;

		n = pread(fd, buf, sizeof(buf) - 1, 0);
		if (n < 0)
			return crf_error_errno(errno, "%s", path);
		buf[n] = '\0';
		if (strstr(buf, "frozen 1"))
			return 0;
		left = timeout_ms - ms_since(&t0);
		if (left <= 0)
			return crf_error_errno(ETIMEDOUT, "%s: not frozen after %d ms", path,
					       timeout_ms);
		if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
			return crf_error_errno(errno, "poll %s", path);
	}
}

int crf_cgroup_freeze(const char *dir, int timeout_ms)
{
	_cleanup_free_ char *events = xasprintf("%s/cgroup.events", dir);
	int r;

	if (!events)
		return -ENOMEM;
	r = write_freeze(dir, "1");
	if (r < 0)
		return r;
	r = wait_frozen(events, timeout_ms);
	if (r < 0)
		cgroup_thaw(dir);
	return r;
}

int cgroup_thaw(const char *dir)
{
	return write_freeze(dir, "0");
}
