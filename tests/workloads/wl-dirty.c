// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-dirty: what a program wrote through its fds is on disk once the dump
 * is done (crf keeps offsets, not the bytes: the files plugin syncs each
 * filesystem the tree writes to, sync.c).
 *
 * State: two files in the workload's directory written without any sync,
 * A through fd 3 (O_RDWR) and B through fd 4 (O_WRONLY | O_APPEND), and
 * fd 5, A opened again O_RDONLY.  Before the dump their pages are dirty in
 * the page cache (cachestat(2)); after it (leave-running) or after the
 * restore (kill, twice) no page of either is dirty or under writeback, and
 * both read back the bytes written, at the same offsets.
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_cachestat
#define SYS_cachestat 451
#endif

#define A_LEN (256 * 1024)
#define B_LEN (64 * 1024)

/* Linux's struct cachestat_range and struct cachestat (6.5). */
struct cs_range {
	uint64_t off, len;
};

struct cs {
	uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

static unsigned char a_bytes[A_LEN], b_bytes[B_LEN];

/* The dirty and writeback pages of @fd's file; false when the kernel lacks cachestat. */
static bool unsynced(int fd, uint64_t *pages)
{
	struct cs_range range = {0, 0};
	struct cs cs;

	if (syscall(SYS_cachestat, fd, &range, &cs, 0) < 0) {
		WL_CHECK(errno == ENOSYS, "cachestat(%d): %s", fd, strerror(errno));
		return false;
	}
	*pages = cs.nr_dirty + cs.nr_writeback;
	return true;
}

static void fill(unsigned char *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)((i * 131 + seed) ^ (i >> 9));
}

static void check_bytes(int fd, const unsigned char *want, size_t n, const char *what)
{
	static unsigned char got[A_LEN];

	WL_CHECK(pread(fd, got, n, 0) == (ssize_t)n, "%s: pread: %s", what, strerror(errno));
	WL_CHECK(!memcmp(got, want, n), "%s: the bytes written are not in the file", what);
}

int main(void)
{
	char a_path[4096], b_path[4096];
	uint64_t a_dirty = 0, b_dirty = 0;
	bool have;

	wl_init("dirty");
	snprintf(a_path, sizeof(a_path), "%s/dirty-a", wl_tmpdir());
	snprintf(b_path, sizeof(b_path), "%s/dirty-b", wl_tmpdir());
	fill(a_bytes, A_LEN, 7);
	fill(b_bytes, B_LEN, 99);
	WL_CHECK(open(a_path, O_RDWR | O_CREAT | O_TRUNC, 0600) == 3, "%s: %s", a_path,
		 strerror(errno));
	WL_CHECK(open(b_path, O_WRONLY | O_APPEND | O_CREAT | O_TRUNC, 0600) == 4, "%s: %s", b_path,
		 strerror(errno));
	WL_CHECK(open(a_path, O_RDONLY) == 5, "%s: %s", a_path, strerror(errno));
	WL_CHECK(write(3, a_bytes, A_LEN) == A_LEN, "write A: %s", strerror(errno));
	WL_CHECK(write(4, b_bytes, B_LEN) == B_LEN, "write B: %s", strerror(errno));

	have = unsynced(3, &a_dirty) && unsynced(4, &b_dirty);
	if (!have)
		wl_downgrade(
			"no cachestat(2) here: whether the writes reached the disk is not checked");
	else if (!a_dirty || !b_dirty)
		wl_downgrade("the kernel wrote the pages back before the dump (A %llu, B %llu "
			     "dirty): the sync is not checked",
			     (unsigned long long)a_dirty, (unsigned long long)b_dirty);
	wl_ready();
	wl_wait_verify();

	if (have && a_dirty && b_dirty) {
		WL_CHECK(unsynced(3, &a_dirty) && !a_dirty,
			 "A: %llu pages dirty or under writeback after the dump",
			 (unsigned long long)a_dirty);
		WL_CHECK(unsynced(4, &b_dirty) && !b_dirty,
			 "B: %llu pages dirty or under writeback after the dump",
			 (unsigned long long)b_dirty);
	}
	check_bytes(5, a_bytes, A_LEN, "A");
	WL_CHECK(lseek(3, 0, SEEK_CUR) == A_LEN && lseek(4, 0, SEEK_CUR) == B_LEN &&
			 lseek(5, 0, SEEK_CUR) == 0,
		 "offsets changed");
	{
		int b = open(b_path, O_RDONLY);

		WL_CHECK(b >= 0, "%s: %s", b_path, strerror(errno));
		check_bytes(b, b_bytes, B_LEN, "B");
		close(b);
	}
	return 0;
}
