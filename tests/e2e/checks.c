// SPDX-License-Identifier: GPL-2.0-only
/*
 * The harness's checks of the workload from outside: alive, running or
 * stopped, not traced, its maps unchanged; and of the images: their size,
 * and that they reached the disk (harness.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "harness.h"
#include "util.h"

/* --expect-stopped: every thread of @pid in a group stop (state T, not t: traced). */
static void check_stopped(pid_t pid, const char *when)
{
	char path[64], state;
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		fail("%s: %s: %s", when, path, strerror(errno));
	while ((e = readdir(d))) {
		pid_t tid = (pid_t)atoi(e->d_name);

		if (tid <= 0)
			continue;
		if (proc_stat(tid, &state) < 0 || state != 'T') {
			closedir(d);
			fail("%s: thread %d of PID %d is not stopped (state %c)", when, (int)tid,
			     (int)pid, state);
		}
	}
	closedir(d);
}

/* --expect-stopped: the workload stops itself after ready; dump it only then. */
void wait_stopped(void)
{
	char state;

	while (proc_stat(h.pid, &state) >= 0 && state != 'T') {
		if (now_ms() > h.deadline_ms)
			fail("timeout (%d s) waiting for the workload to stop itself", h.timeout_s);
		sleep_ms(5);
	}
}

/* The process must be alive, running (not stopped; --expect-stopped: stopped) and not traced. */
void check_running(pid_t pid, const char *when)
{
	char path[64], status[4096], *tracer;
	char state;
	int fd;
	ssize_t n;

	if (kill(pid, 0) < 0 || proc_stat(pid, &state) < 0)
		fail("%s: PID %d does not exist", when, (int)pid);
	if (state == 'Z' || state == 'X')
		fail("%s: PID %d is dead (state %c)", when, (int)pid, state);
	if (h.expect_stopped && !h.expect_fail && !h.expect_restore_fail)
		check_stopped(pid, when);
	else if (state == 'T' || state == 't')
		fail("%s: PID %d is left stopped (state %c)", when, (int)pid, state);
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, status, sizeof(status) - 1);
	if (fd >= 0)
		close(fd);
	if (n > 0) {
		status[n] = '\0';
		tracer = strstr(status, "TracerPid:");
		if (tracer && atoi(tracer + 10) != 0)
			fail("%s: PID %d is still traced by PID %d", when, (int)pid,
			     atoi(tracer + 10));
	}
}

void check_maps_unchanged(const char *before, const char *when)
{
	static char after[1 << 16];
	char was[256], is[256];
	size_t i = 0;

	if (read_maps(h.pid, after, sizeof(after)) < 0)
		fail("cannot read /proc/%d/maps: %s", (int)h.pid, strerror(errno));
	if (!strcmp(before, after))
		return;
	while (before[i] && before[i] == after[i])
		i++;
	line_at(before, i, was, sizeof(was));
	line_at(after, i, is, sizeof(is));
	append_log("--- harness: maps before ---\n%s--- harness: maps after ---\n%s", before,
		   after);
	fail("%s: /proc/%d/maps changed: '%s' became '%s' (both maps are in the workload log)",
	     when, (int)h.pid, was, is);
}

/* --max-image-kb: the bytes of the files of @dir. */
void check_image_size(const char *dir)
{
	char path[PATH_MAX];
	long long bytes = 0;
	struct dirent *e;
	struct stat st;
	DIR *d;

	if (!h.max_image_kb)
		return;
	d = opendir(dir);
	if (!d)
		fail("opendir %s: %s", dir, strerror(errno));
	while ((e = readdir(d)))
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < (int)sizeof(path) &&
		    stat(path, &st) == 0 && S_ISREG(st.st_mode))
			bytes += st.st_size;
	closedir(d);
	if (bytes > h.max_image_kb * 1024)
		fail("the images in %s take %lld KiB, more than --max-image-kb %ld", dir,
		     bytes / 1024, h.max_image_kb);
}

#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif
#define TMPFS_MAGIC_ 0x01021994
#define RAMFS_MAGIC_ 0x858458f6

/* cachestat(2)'s range and answer (Linux 6.5; not in older headers). */
struct cs_range {
	uint64_t off, len;
};
struct cs_stat {
	uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

/*
 * A dump that kills the tree, or one given --sync, writes its images to
 * disk before it returns (syncfs, which waits for the writeback): no page
 * of an image may still be dirty or under writeback.  A tmpfs has no disk
 * (its pages stay dirty); a kernel without cachestat(2) cannot say: a
 * downgrade, noted.
 */
void check_images_synced(const char *dir)
{
	struct cs_range all = {0, 0};
	char name[NAME_MAX + 1];
	struct cs_stat cs;
	struct statfs fs;
	struct dirent *e;
	int dfd, fd;
	DIR *d;

	if (statfs(dir, &fs) == 0 && (fs.f_type == TMPFS_MAGIC_ || fs.f_type == RAMFS_MAGIC_)) {
		printf("NOTE %s %s: the images are on a tmpfs: whether the dump synced them is "
		       "not checked\n",
		       h.name, test_mode());
		return;
	}
	d = opendir(dir);
	if (!d)
		fail("opendir %s: %s", dir, strerror(errno));
	dfd = dirfd(d);
	while ((e = readdir(d))) {
		fd = openat(dfd, e->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			continue;
		if (syscall(__NR_cachestat, fd, &all, &cs, 0) < 0) {
			int err = errno;

			close(fd);
			if (err == EBADF || err == EOPNOTSUPP) /* a directory, "." and ".." */
				continue;
			snprintf(name, sizeof(name), "%s", e->d_name);
			closedir(d);
			if (err != ENOSYS)
				fail("cachestat %s/%s: %s", dir, name, strerror(err));
			printf("NOTE %s %s: no cachestat(2) on this kernel: whether the dump "
			       "synced its images is not checked\n",
			       h.name, test_mode());
			return;
		}
		close(fd);
		if (cs.nr_dirty || cs.nr_writeback) {
			snprintf(name, sizeof(name), "%s", e->d_name);
			closedir(d);
			fail("after crf dump, %s/%s has %llu dirty pages and %llu under writeback: "
			     "the dump did not sync its images",
			     dir, name, (unsigned long long)cs.nr_dirty,
			     (unsigned long long)cs.nr_writeback);
		}
	}
	closedir(d);
}
