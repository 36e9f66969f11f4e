// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe of the cgroup v2 hierarchy: where it is mounted, where we are in it,
 * and whether its freezer works the way the dump uses it (write cgroup.freeze,
 * then wait for cgroup.events to change with poll, never with sleep).  The
 * freezer is optional, since a ptrace freeze loop is the fallback.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/mountinfo.h>

#include "cgroup.h"

/* How long the kernel gets to report that an empty cgroup froze. */
#define FREEZE_POLL_MS 50

static int find_mount(struct crf_ctx *ctx, char *mnt, size_t len)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	int r;

	if (!f) {
		r = -errno;
		crf_probe_feature(ctx, "cgroup2-mount", false, true,
				  "open /proc/self/mountinfo: %s", strerror(-r));
		return r;
	}
	r = crf_cgroup2_mount_from_mountinfo(f, mnt, len);
	if (r == -ENOENT)
		crf_probe_feature(ctx, "cgroup2-mount", false, true,
				  "no cgroup2 mount in /proc/self/mountinfo");
	else if (r < 0)
		crf_probe_feature(ctx, "cgroup2-mount", false, true,
				  "parsing /proc/self/mountinfo: %s", strerror(-r));
	else
		crf_probe_feature(ctx, "cgroup2-mount", true, true, "cgroup2 mounted at %s", mnt);
	return r;
}

/* Our cgroup v2 path, from the "0::" line of /proc/self/cgroup. */
static int find_self(struct crf_ctx *ctx, char *self, size_t len)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/cgroup", "re");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int r = -ENOENT;

	if (!f) {
		r = -errno;
		crf_probe_feature(ctx, "cgroup-self", false, true, "open /proc/self/cgroup: %s",
				  strerror(-r));
		return r;
	}
	while ((n = getline(&line, &cap, f)) > 0) {
		if (strncmp(line, "0::", 3))
			continue;
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		r = (size_t)n - 3 < len ? 0 : -ENAMETOOLONG;
		if (!r)
			memcpy(self, line + 3, n - 2);
		break;
	}
	if (r == -ENOENT)
		crf_probe_feature(
			ctx, "cgroup-self", false, true,
			"no \"0::\" line in /proc/self/cgroup: not in a cgroup v2 hierarchy");
	else if (r < 0)
		crf_probe_feature(ctx, "cgroup-self", false, true, "/proc/self/cgroup: %s",
				  strerror(-r));
	else
		crf_probe_feature(ctx, "cgroup-self", true, true, "we are in cgroup %s", self);
	return r;
}

/* Write @text to the file @name of the directory @dir; 0 or -errno. */
static int write_at(int dir, const char *name, const char *text)
{
	_cleanup_close_ int fd = openat(dir, name, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) < 0)
		return -errno;
	return 0;
}

/* cgroup.events on one line ("populated 0,frozen 1") into @buf; 0 or -errno. */
static int read_events(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);

	if (n < 0)
		return -errno;
	while (n > 0 && buf[n - 1] == '\n')
		n--;
	buf[n] = '\0';
	for (char *p = buf; (p = strchr(p, '\n'));)
		*p = ',';
	return 0;
}

/*
 * Freeze the empty cgroup @dir and wait with poll() for cgroup.events to say
 * so.  Returns 0, with @woke telling whether poll() saw the change and
 * @events what cgroup.events said after it, or -errno with @step naming what
 * failed.
 */
static int freeze_and_poll(int dir, const char **step, bool *woke, char *events, size_t len)
{
	_cleanup_close_ int fd = -1;
	struct pollfd pfd = {.events = POLLPRI};
	int r;

	*step = "open cgroup.events";
	fd = pfd.fd = openat(dir, "cgroup.events", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* Reading arms the notification: poll() reports changes after the last read. */
	r = read_events(fd, events, len);
	if (r < 0)
		return r;
	*step = "write cgroup.freeze";
	r = write_at(dir, "cgroup.freeze", "1");
	if (r < 0)
		return r;
	*step = "poll cgroup.events";
	r = poll(&pfd, 1, FREEZE_POLL_MS);
	if (r < 0)
		return -errno;
	*woke = r > 0 && (pfd.revents & POLLPRI);
	*step = "read cgroup.events";
	return read_events(fd, events, len);
}

/* With a cgroup of our own to try it on, the freezer is tested for real. */
static void probe_freezer_in(struct crf_ctx *ctx, int dir)
{
	char events[128] = "";
	bool woke = false;
	const char *step;
	int r;

	r = freeze_and_poll(dir, &step, &woke, events, sizeof(events));
	if (r < 0) {
		crf_probe_feature(ctx, "cgroup-freeze", false, false, "%s of a probe cgroup: %s",
				  step, strerror(-r));
		crf_probe_feature(ctx, "cgroup-events-poll", false, false, "not tried");
		return;
	}
	crf_probe_feature(ctx, "cgroup-freeze", strstr(events, "frozen 1"), false,
			  "froze an empty probe cgroup; cgroup.events then read \"%s\"", events);
	if (woke)
		crf_probe_feature(ctx, "cgroup-events-poll", true, false,
				  "poll woke with POLLPRI when the probe cgroup froze");
	else
		crf_probe_feature(ctx, "cgroup-events-poll", false, false,
				  "no POLLPRI within %d ms of freezing", FREEZE_POLL_MS);
}

/*
 * Without a probe cgroup (no permission to create one), only look for the
 * files in @dir, our own cgroup, which we must not freeze.
 */
static void probe_freezer_files(struct crf_ctx *ctx, int dir, bool root, int err)
{
	bool freeze = !faccessat(dir, "cgroup.freeze", W_OK, 0);
	bool events = !faccessat(dir, "cgroup.events", R_OK, 0);

	if (root) {
		crf_probe_feature(ctx, "cgroup-freeze", false, false,
				  "cannot create a probe cgroup (%s), and the root cgroup has no "
				  "cgroup.freeze",
				  strerror(err));
		crf_probe_feature(ctx, "cgroup-events-poll", false, false, "not tried");
		return;
	}
	crf_probe_feature(ctx, "cgroup-freeze", freeze, false,
			  "our cgroup.freeze is %s; not tried: cannot create a probe cgroup (%s)",
			  freeze ? "writable" : "not writable", strerror(err));
	crf_probe_feature(ctx, "cgroup-events-poll", events, false,
			  "our cgroup.events is %s; not tried: cannot create a probe cgroup (%s)",
			  events ? "readable" : "not readable", strerror(err));
}

/* The freezer tried on the child @name of @dir, which its caller made and removes. */
static void probe_freezer_child(struct crf_ctx *ctx, int dir, const char *name)
{
	_cleanup_close_ int probe = openat(dir, name, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (probe < 0) {
		crf_probe_feature(ctx, "cgroup-freeze", false, false, "open probe cgroup %s: %s",
				  name, strerror(errno));
		crf_probe_feature(ctx, "cgroup-events-poll", false, false, "not tried");
		return;
	}
	probe_freezer_in(ctx, probe);
}

/*
 * Try the freezer on an empty child of our own cgroup: freezing it touches no
 * process, and it is removed right after.
 */
static void probe_freezer_under(struct crf_ctx *ctx, int dir, bool root)
{
	char name[32];

	snprintf(name, sizeof(name), "crf-probe.%d", (int)getpid());
	if (mkdirat(dir, name, 0700)) {
		probe_freezer_files(ctx, dir, root, errno);
		return;
	}
	probe_freezer_child(ctx, dir, name);
	if (unlinkat(dir, name, AT_REMOVEDIR))
		crf_log_errno(CRF_LOG_WARN, errno, "cannot remove the probe cgroup %s", name);
}

static void probe_freezer(struct crf_ctx *ctx, const char *mnt, const char *self)
{
	bool root = !strcmp(self, "/");
	_cleanup_close_ int top = -1, dir = -1;

	top = open(mnt, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (top >= 0)
		dir = openat(top, root ? "." : self + 1, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0) {
		crf_probe_feature(ctx, "cgroup-freeze", false, false,
				  "our cgroup %s not found under %s: %s", self, mnt,
				  strerror(errno));
		crf_probe_feature(ctx, "cgroup-events-poll", false, false, "not tried");
	} else {
		probe_freezer_under(ctx, dir, root);
	}
}

int cgroup_probe(struct crf_ctx *ctx)
{
	char mnt[PATH_MAX], self[PATH_MAX];
	int r, s;

	r = find_mount(ctx, mnt, sizeof(mnt));
	s = find_self(ctx, self, sizeof(self));
	if (r < 0 || s < 0) {
		crf_probe_feature(ctx, "cgroup-freeze", false, false, "no cgroup v2 to try");
		crf_probe_feature(ctx, "cgroup-events-poll", false, false, "no cgroup v2 to try");
		return 0;
	}
	probe_freezer(ctx, mnt, self);
	return 0;
}
