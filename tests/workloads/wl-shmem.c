// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-shmem: memory shared by a parent and two children after fork.
 *
 *   counter  one MAP_SHARED | MAP_ANONYMOUS page: each process adds 1 before
 *            the dump and 1 after the restore, and waits until it sees the
 *            others' increments
 *   region   1 MiB of shared anonymous memory filled by the parent; after the
 *            restore each process writes a page of its own, which the parent
 *            checks once the children are gone
 *   memfd    "wl-shmem" with F_SEAL_SHRINK | F_SEAL_GROW, mapped shared by
 *            the parent and child 1 (child 2 unmaps it); its fd is closed
 *
 * With the argument "sysv", the parent also creates a System V segment with
 * a key of its own, attached by it and child 1 (child 2 detaches it).  After
 * the restore both check its key, id, mode, size and attach count and its
 * contents; the parent writes, child 1 sees it, answers and detaches; the
 * parent sees the answer and one attachment left, detaches and removes it.
 * Every process checks its own view; the parent's exit status is the verdict
 * of all three.
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REGION_BYTES (1024 * 1024)
#define MEMFD_BYTES  (64 * 1024)
#define REGION_SEED  0x5a5a0001ULL
#define MEMFD_SEED   0x5a5a0002ULL
#define SEALS	     (F_SEAL_SHRINK | F_SEAL_GROW)
#define NPROC	     3

static _Atomic long *counter;
static unsigned char *region, *mfd;
static int setup_r = -1, setup_w = -1;
static unsigned char *sysv;
static int sysv_id = -1;
static key_t sysv_key;

#define SYSV_BYTES (4 * WL_PAGE)
#define SYSV_SEED  0x5a5a0003ULL
#define SYSV_MODE  0640
/* The last page carries the parent's word and child 1's answer. */
#define SYSV_WORD   (SYSV_BYTES - WL_PAGE)
#define SYSV_ANSWER (SYSV_WORD + 1)

static void *map_shared(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		wl_fail("mmap: %s", strerror(errno));
	return p;
}

static void make_memfd(void)
{
	int fd = memfd_create("wl-shmem", MFD_ALLOW_SEALING | MFD_CLOEXEC);

	if (fd < 0 || ftruncate(fd, MEMFD_BYTES) < 0)
		wl_fail("memfd: %s", strerror(errno));
	mfd = mmap(NULL, MEMFD_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mfd == MAP_FAILED)
		wl_fail("mmap memfd: %s", strerror(errno));
	wl_fill(mfd, MEMFD_BYTES, MEMFD_SEED);
	if (fcntl(fd, F_ADD_SEALS, SEALS) < 0)
		wl_fail("seal memfd: %s", strerror(errno));
	close(fd);
}

/* Wait until the counter reaches @n (the others' increments are seen). */
static void wait_counter(const char *who, long n)
{
	for (int i = 0; i < 1000 && atomic_load(counter) < n; i++)
		usleep(10000);
	if (atomic_load(counter) != n)
		wl_fail("%s: counter %ld, expected %ld", who, atomic_load(counter), n);
}

static void check_memfd(const char *who)
{
	char link[96], path[128];
	ssize_t n, bad;
	int fd, seals;

	snprintf(link, sizeof(link), "/proc/self/map_files/%lx-%lx", (unsigned long)mfd,
		 (unsigned long)mfd + MEMFD_BYTES);
	n = readlink(link, path, sizeof(path) - 1);
	WL_CHECK(n > 0, "%s: readlink %s: %s", who, link, strerror(errno));
	path[n] = '\0';
	WL_CHECK(!strcmp(path, "/memfd:wl-shmem (deleted)"), "%s: memfd is %s", who, path);
	fd = open(link, O_RDONLY | O_CLOEXEC);
	WL_CHECK(fd >= 0, "%s: open %s: %s", who, link, strerror(errno));
	seals = fcntl(fd, F_GET_SEALS);
	close(fd);
	WL_CHECK(seals == SEALS, "%s: memfd seals %#x, expected %#x", who, seals, SEALS);
	bad = wl_cmp_fill(mfd, MEMFD_BYTES - WL_PAGE, MEMFD_SEED);
	WL_CHECK(bad < 0, "%s: memfd differs at offset %zd", who, bad);
}

static void attach_sysv(void)
{
	sysv_key = (key_t)(0x7a000000 | (getpid() & 0xffffff));
	sysv_id = shmget(sysv_key, SYSV_BYTES, IPC_CREAT | IPC_EXCL | SYSV_MODE);
	if (sysv_id < 0)
		wl_fail("shmget: %s", strerror(errno));
	sysv = shmat(sysv_id, NULL, 0);
	if (sysv == (void *)-1) {
		shmctl(sysv_id, IPC_RMID, NULL);
		wl_fail("shmat: %s", strerror(errno));
	}
	wl_fill(sysv, SYSV_WORD, SYSV_SEED);
	memset(sysv + SYSV_WORD, 0, WL_PAGE);
}

static int sysv_nattch(const char *who)
{
	struct shmid_ds ds;

	WL_CHECK(shmctl(sysv_id, IPC_STAT, &ds) == 0, "%s: IPC_STAT of segment %d: %s", who,
		 sysv_id, strerror(errno));
	WL_CHECK(ds.shm_perm.__key == sysv_key && (ds.shm_perm.mode & 0777) == SYSV_MODE &&
			 ds.shm_segsz == SYSV_BYTES,
		 "%s: segment %d has key %#x, mode %#o, %zu bytes", who, sysv_id, ds.shm_perm.__key,
		 ds.shm_perm.mode, (size_t)ds.shm_segsz);
	return (int)ds.shm_nattch;
}

/* Wait until the byte at @off of the segment is @v. */
static void wait_sysv(const char *who, size_t off, unsigned char v)
{
	for (int i = 0; i < 1000 && atomic_load((_Atomic unsigned char *)(sysv + off)) != v; i++)
		usleep(10000);
	WL_CHECK(sysv[off] == v, "%s: the other's write to the segment is not seen", who);
}

/* Parent and child 1 after the restore: key, id, mode, contents, shmdt. */
static void check_sysv(const char *who, int idx)
{
	ssize_t bad;

	if (sysv_id < 0 || idx == 2)
		return;
	WL_CHECK(shmget(sysv_key, 0, 0) == sysv_id, "%s: key %#x gives another id than %d", who,
		 sysv_key, sysv_id);
	bad = wl_cmp_fill(sysv, SYSV_WORD, SYSV_SEED);
	WL_CHECK(bad < 0, "%s: segment differs at offset %zd", who, bad);
	if (idx == 0) {
		WL_CHECK(sysv_nattch(who) == 2, "%s: segment attached %d times, expected 2", who,
			 sysv_nattch(who));
		atomic_store((_Atomic unsigned char *)(sysv + SYSV_WORD), 1);
		wait_sysv(who, SYSV_ANSWER, 2);
		return;
	}
	wait_sysv(who, SYSV_WORD, 1);
	atomic_store((_Atomic unsigned char *)(sysv + SYSV_ANSWER), 2);
	WL_CHECK(shmdt(sysv) == 0, "%s: shmdt: %s", who, strerror(errno));
}

/* The parent, last: one attachment left, its own; then the segment goes. */
static void remove_sysv(void)
{
	if (sysv_id < 0)
		return;
	WL_CHECK(sysv_nattch("parent") == 1, "parent: segment still attached %d times",
		 sysv_nattch("parent"));
	WL_CHECK(shmdt(sysv) == 0, "parent: shmdt: %s", strerror(errno));
	WL_CHECK(shmctl(sysv_id, IPC_RMID, NULL) == 0, "parent: IPC_RMID: %s", strerror(errno));
	wl_note("System V segment %d (key %#x): attached twice, shared, detached, removed", sysv_id,
		sysv_key);
}

/* After the restore: count, see the others, check the shared data, write. */
static void verify(const char *who, int idx, bool has_memfd)
{
	ssize_t bad;

	atomic_fetch_add(counter, 1);
	wait_counter(who, 2 * NPROC);
	bad = wl_cmp_fill(region, REGION_BYTES - NPROC * WL_PAGE, REGION_SEED);
	WL_CHECK(bad < 0, "%s: shared region differs at offset %zd", who, bad);
	memset(region + REGION_BYTES - (size_t)(idx + 1) * WL_PAGE, 0x40 + idx, WL_PAGE);
	if (has_memfd)
		check_memfd(who);
	check_sysv(who, idx);
}

static _Noreturn void child(int idx)
{
	char who[16];

	snprintf(who, sizeof(who), "child %d", idx);
	close(setup_r);
	if (idx == 2 && munmap(mfd, MEMFD_BYTES) < 0)
		wl_fail("munmap memfd: %s", strerror(errno));
	if (idx == 2 && sysv && shmdt(sysv) < 0)
		wl_fail("shmdt: %s", strerror(errno));
	atomic_fetch_add(counter, 1);
	close(setup_w);
	wl_wait_verify();
	verify(who, idx, idx == 1);
	/* The parent checks this after the restore. */
	if (idx == 1)
		mfd[MEMFD_BYTES - WL_PAGE] = 0x77;
	exit(0);
}

static void reap(pid_t *kids)
{
	int failed = 0, st;

	for (int k = 0; k < NPROC - 1; k++) {
		if (waitpid(kids[k], &st, 0) != kids[k])
			wl_fail("waitpid(%d): %s", (int)kids[k], strerror(errno));
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			wl_note("child %d failed (status %#x)", k + 1, st);
			failed = 1;
		}
	}
	if (failed)
		wl_fail("a child failed");
}

int main(int argc, char **argv)
{
	pid_t kids[NPROC - 1];
	int pfd[2];
	char c;

	wl_init("shmem");
	counter = map_shared(WL_PAGE);
	region = map_shared(REGION_BYTES);
	wl_fill(region, REGION_BYTES, REGION_SEED);
	make_memfd();
	if (argc > 1 && !strcmp(argv[1], "sysv"))
		attach_sysv();
	if (pipe(pfd) < 0)
		wl_fail("pipe: %s", strerror(errno));
	setup_r = pfd[0];
	setup_w = pfd[1];
	for (int k = 0; k < NPROC - 1; k++) {
		kids[k] = fork();
		if (kids[k] < 0)
			wl_fail("fork: %s", strerror(errno));
		if (kids[k] == 0)
			child(k + 1);
	}
	atomic_fetch_add(counter, 1);
	close(setup_w);
	/* EOF once every child has counted and closed its copy. */
	if (read(setup_r, &c, 1) != 0)
		wl_fail("setup pipe: unexpected data");
	close(setup_r);
	wait_counter("parent", NPROC);
	wl_ready();
	wl_wait_verify();
	verify("parent", 0, true);
	reap(kids);
	for (int k = 1; k < NPROC; k++)
		WL_CHECK(region[REGION_BYTES - (size_t)(k + 1) * WL_PAGE] == 0x40 + k,
			 "child %d's write to the shared region is not seen", k);
	WL_CHECK(mfd[MEMFD_BYTES - WL_PAGE] == 0x77, "child 1's write to the memfd is not seen");
	remove_sysv();
	wl_note("3 processes: shared counter, region and memfd (name, seals, contents) shared");
	return 0;
}
