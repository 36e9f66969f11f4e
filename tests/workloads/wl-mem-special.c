// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-mem-special: memory crf refuses to dump, and memory that looks like it
 * but is restored.
 *
 * usage: wl-mem-special KIND
 *
 * Refused (the dump must fail naming pid, address range, what and why, and
 * the workload must run on unchanged):
 *   private-memfd    MAP_PRIVATE of a memfd
 *   private-shmem    MAP_PRIVATE of shared anonymous memory (its map_files entry)
 *   private-deleted  MAP_PRIVATE of a file on tmpfs that was unlinked since
 *   hugetlb          MAP_HUGETLB (MAP_NORESERVE: no huge page needs to exist)
 *   hugetlb-memfd    MAP_SHARED of an MFD_HUGETLB memfd, its fd closed
 *   hugetlb-fd       an MFD_HUGETLB memfd held as an fd
 *   aio              the ring io_setup() maps
 *   io-uring         the rings of an io_uring instance, its fd closed
 * Restored:
 *   handled          MAP_PRIVATE of /dev/zero and of a file on tmpfs, written
 *
 * Each mapping holds PRNG bytes (where it can hold any), checked at the end.
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <linux/io_uring.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define LEN  (4 * WL_PAGE)
#define HUGE (2UL << 20)

static unsigned char *maps[2];
static size_t lens[2];
static int n_maps;

static void *check_map(void *p, const char *what)
{
	if (p == MAP_FAILED)
		wl_fail("mmap %s: %s", what, strerror(errno));
	return p;
}

static void keep(void *p, size_t len, bool fill)
{
	maps[n_maps] = p;
	lens[n_maps++] = len;
	if (fill)
		wl_fill(p, len, len + n_maps);
}

static void *map_fd(int fd, size_t len, int flags, const char *what)
{
	void *p;

	if (fd < 0)
		wl_fail("%s: %s", what, strerror(errno));
	/* A character device (/dev/zero) has no size to set. */
	if (ftruncate(fd, (off_t)len) < 0 && errno != EINVAL)
		wl_fail("%s: ftruncate: %s", what, strerror(errno));
	p = check_map(mmap(NULL, len, PROT_READ | PROT_WRITE, flags, fd, 0), what);
	close(fd);
	return p;
}

static void private_shmem(void)
{
	void *shared = check_map(
		mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0),
		"shared anonymous memory");
	char path[96];
	int fd;

	snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx", (unsigned long)shared,
		 (unsigned long)shared + LEN);
	fd = open(path, O_RDWR | O_CLOEXEC);
	keep(map_fd(fd, LEN, MAP_PRIVATE, path), LEN, true);
	munmap(shared, LEN);
}

/* The kept file's path, removed at exit (/dev/shm is tmpfs; the work dir may not be). */
static char kept_path[256];

static void remove_kept(void)
{
	if (kept_path[0])
		unlink(kept_path);
}

/* A new file on tmpfs, unlinked at once (@deleted) or at exit. */
static int tmpfs_file(const char *name, bool deleted)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "/dev/shm/crf-wl-mem-special-%d-%s", (int)getpid(), name);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		wl_fail("create %s: %s", path, strerror(errno));
	if (deleted && unlink(path) < 0)
		wl_fail("unlink %s: %s", path, strerror(errno));
	if (!deleted) {
		snprintf(kept_path, sizeof(kept_path), "%s", path);
		atexit(remove_kept);
	}
	return fd;
}

static void aio_ring(void)
{
	aio_context_t ctx = 0;

	if (syscall(SYS_io_setup, 16, &ctx) < 0)
		wl_fail("io_setup: %s", strerror(errno));
	keep((void *)(uintptr_t)ctx, WL_PAGE, false);
}

static void io_uring_rings(void)
{
	struct io_uring_params p;
	size_t len;
	int fd;

	memset(&p, 0, sizeof(p));
	fd = (int)syscall(SYS_io_uring_setup, 8, &p);
	if (fd < 0)
		wl_fail("io_uring_setup: %s", strerror(errno));
	len = p.sq_off.array + p.sq_entries * sizeof(uint32_t);
	keep(check_map(mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
			    IORING_OFF_SQ_RING),
		       "io_uring rings"),
	     len, false);
	/* The mapping keeps the instance: only the mapping is left to refuse. */
	close(fd);
}

static int setup(const char *kind)
{
	static int held = -1;

	if (!strcmp(kind, "private-memfd"))
		keep(map_fd(memfd_create("private", MFD_CLOEXEC), LEN, MAP_PRIVATE, "memfd"), LEN,
		     true);
	else if (!strcmp(kind, "private-shmem"))
		private_shmem();
	else if (!strcmp(kind, "private-deleted"))
		keep(map_fd(tmpfs_file("deleted", true), LEN, MAP_PRIVATE, "tmpfs file"), LEN,
		     true);
	else if (!strcmp(kind, "hugetlb"))
		keep(check_map(mmap(NULL, HUGE, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_NORESERVE, -1,
				    0),
			       "MAP_HUGETLB"),
		     HUGE, false);
	else if (!strcmp(kind, "hugetlb-memfd"))
		keep(map_fd(memfd_create("huge", MFD_CLOEXEC | MFD_HUGETLB), HUGE,
			    MAP_SHARED | MAP_NORESERVE, "MFD_HUGETLB memfd"),
		     HUGE, false);
	else if (!strcmp(kind, "hugetlb-fd"))
		held = memfd_create("huge-held", MFD_CLOEXEC | MFD_HUGETLB);
	else if (!strcmp(kind, "aio"))
		aio_ring();
	else if (!strcmp(kind, "io-uring"))
		io_uring_rings();
	else if (!strcmp(kind, "handled")) {
		keep(map_fd(open("/dev/zero", O_RDWR | O_CLOEXEC), LEN, MAP_PRIVATE, "/dev/zero"),
		     LEN, true);
		keep(map_fd(tmpfs_file("kept", false), LEN, MAP_PRIVATE, "tmpfs file"), LEN, true);
	} else
		wl_fail("unknown kind %s", kind);
	if (!strcmp(kind, "hugetlb-fd") && held < 0)
		wl_fail("memfd_create(MFD_HUGETLB): %s", strerror(errno));
	return held;
}

int main(int argc, char **argv)
{
	bool filled;

	if (argc != 2)
		wl_fail("usage: wl-mem-special KIND");
	wl_init("mem-special");
	filled = setup(argv[1]) < 0 && strcmp(argv[1], "hugetlb") &&
		 strcmp(argv[1], "hugetlb-memfd") && strcmp(argv[1], "aio") &&
		 strcmp(argv[1], "io-uring");
	wl_ready();
	wl_wait_verify();
	for (int i = 0; filled && i < n_maps; i++)
		if (wl_cmp_fill(maps[i], lens[i], lens[i] + i + 1) >= 0)
			wl_fail("%s: mapping %d's bytes differ", argv[1], i);
	wl_note("%s: %d mapping%s intact", argv[1], n_maps, n_maps == 1 ? "" : "s");
	return 0;
}
