// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-memfd-map: a memfd that is both an fd and a shared mapping stays one
 * memfd across checkpoint and restore, in every process that has either.
 *
 * State, made by the parent before it forks one child:
 *   a      memfd "wl-memfd-a", 64 KiB, sealed against growing and
 *          shrinking, mapped shared and writable (ma) by both; its fd is
 *          one description held by both (offset A_POS)
 *   ro     a second description of a, O_RDONLY through /proc/self/fd, held
 *          by the parent alone (offset RO_POS)
 *   b      memfd "wl-memfd-b", 16 KiB, sealed against writing, growing and
 *          shrinking, mapped shared read-only (mb) by both; its fd is held
 *          by the child alone
 * So the restore meets all three orders: a's fd made first for the tree
 * (a description shared between processes), a's ro and b's fd made in a
 * task after the mapping's memfd.
 *
 * After the restore each process checks that it holds no fd but its own,
 * that every fd is on the memfd its mapping maps (same inode), names,
 * seals, access modes, offsets and contents, through the fds and the
 * mappings.  Then, on the last page of a
 * (zero at the dump): the parent writes a byte through its fd and sees it
 * in its mapping; the child sees it in its mapping, stores its inode of b
 * and a byte into its mapping and reads the byte back through its fd; the
 * parent reads it through ro and finds its b mapping on the child's inode.
 * On today's restore of two memfds per object none of this is seen.
 */
#include "wl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define A_BYTES (64 * 1024)
#define B_BYTES (16 * 1024)
#define A_SEED	0x6d660001ULL
#define B_SEED	0x6d660002ULL
#define A_SEALS (F_SEAL_SHRINK | F_SEAL_GROW)
#define B_SEALS (F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW)
#define A_POS	4321
#define RO_POS	777
/* The last page of a: zero at the dump, then the exchange. */
#define CTL	(A_BYTES - WL_PAGE)
#define OFF_P	CTL	  /* the parent's byte, written through its fd */
#define OFF_C	(CTL + 1) /* the child's byte, stored into its mapping */
#define OFF_INO (CTL + 8) /* the child's inode of b */
#define BYTE_P	0x5a
#define BYTE_C	0xa5

static unsigned char *ma;
static const unsigned char *mb;
static int a_fd = -1, ro_fd = -1, b_fd = -1;

static void fill_fd(int fd, size_t len, uint64_t seed)
{
	unsigned char *buf = malloc(len);

	if (!buf)
		wl_fail("out of memory");
	wl_fill(buf, len, seed);
	if (pwrite(fd, buf, len, 0) != (ssize_t)len)
		wl_fail("write memfd: %s", strerror(errno));
	free(buf);
}

static void setup(void)
{
	char path[64];

	a_fd = memfd_create("wl-memfd-a", MFD_ALLOW_SEALING);
	if (a_fd < 0 || ftruncate(a_fd, A_BYTES) < 0)
		wl_fail("memfd a: %s", strerror(errno));
	ma = mmap(NULL, A_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, a_fd, 0);
	if (ma == MAP_FAILED)
		wl_fail("mmap memfd a: %s", strerror(errno));
	wl_fill(ma, CTL, A_SEED);
	if (fcntl(a_fd, F_ADD_SEALS, A_SEALS) < 0 || lseek(a_fd, A_POS, SEEK_SET) != A_POS)
		wl_fail("seal or seek memfd a: %s", strerror(errno));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", a_fd);
	ro_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (ro_fd < 0 || lseek(ro_fd, RO_POS, SEEK_SET) != RO_POS)
		wl_fail("reopen memfd a read-only: %s", strerror(errno));

	b_fd = memfd_create("wl-memfd-b", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (b_fd < 0)
		wl_fail("memfd b: %s", strerror(errno));
	fill_fd(b_fd, B_BYTES, B_SEED);
	if (fcntl(b_fd, F_ADD_SEALS, B_SEALS) < 0)
		wl_fail("seal memfd b: %s", strerror(errno));
	mb = mmap(NULL, B_BYTES, PROT_READ, MAP_SHARED, b_fd, 0);
	if (mb == MAP_FAILED)
		wl_fail("mmap memfd b: %s", strerror(errno));
}

/* The inode of the object mapped at @p. */
static ino_t mapped_inode(const char *who, const void *p, size_t len)
{
	char link[96];
	struct stat st;

	snprintf(link, sizeof(link), "/proc/self/map_files/%lx-%lx", (unsigned long)p,
		 (unsigned long)p + len);
	WL_CHECK(stat(link, &st) == 0, "%s: stat %s: %s", who, link, strerror(errno));
	return st.st_ino;
}

/* Fd @fd is on the memfd @name mapped at @p, with @seals, @mode and offset @pos. */
static void check_fd(const char *who, int fd, const void *p, size_t len, const char *name,
		     int seals, int mode, off_t pos)
{
	char link[64], path[128], want[128];
	struct stat st;
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	WL_CHECK(n > 0, "%s: readlink %s: %s", who, link, strerror(errno));
	path[n] = '\0';
	snprintf(want, sizeof(want), "/memfd:%s (deleted)", name);
	WL_CHECK(!strcmp(path, want), "%s: fd %d is %s, expected %s", who, fd, path, want);
	WL_CHECK(fstat(fd, &st) == 0, "%s: fstat fd %d: %s", who, fd, strerror(errno));
	WL_CHECK(st.st_ino == mapped_inode(who, p, len),
		 "%s: fd %d (inode %lu) is not the memfd its mapping maps (inode %lu)", who, fd,
		 (unsigned long)st.st_ino, (unsigned long)mapped_inode(who, p, len));
	WL_CHECK((size_t)st.st_size == len, "%s: fd %d: size %lld", who, fd, (long long)st.st_size);
	WL_CHECK(fcntl(fd, F_GET_SEALS) == seals, "%s: fd %d: seals %#x, expected %#x", who, fd,
		 fcntl(fd, F_GET_SEALS), seals);
	WL_CHECK((fcntl(fd, F_GETFL) & O_ACCMODE) == mode, "%s: fd %d: access mode %#x", who, fd,
		 fcntl(fd, F_GETFL) & O_ACCMODE);
	WL_CHECK(lseek(fd, 0, SEEK_CUR) == pos, "%s: fd %d: offset %lld, expected %lld", who, fd,
		 (long long)lseek(fd, 0, SEEK_CUR), (long long)pos);
}

/* The content through fd @fd and through the mapping @p: the fill of @seed, then zeros. */
static void check_content(const char *who, int fd, const unsigned char *p, size_t len,
			  size_t filled, uint64_t seed)
{
	unsigned char *buf = malloc(len);
	ssize_t bad;

	WL_CHECK(buf != NULL, "%s: out of memory", who);
	bad = wl_cmp_fill(p, filled, seed);
	WL_CHECK(bad < 0, "%s: mapping differs at offset %zd", who, bad);
	for (size_t i = filled; i < len; i++)
		WL_CHECK(!p[i], "%s: mapping byte %zu is %#x", who, i, p[i]);
	if (fd >= 0) {
		WL_CHECK(pread(fd, buf, len, 0) == (ssize_t)len, "%s: pread fd %d: %s", who, fd,
			 strerror(errno));
		WL_CHECK(!memcmp(buf, p, len), "%s: fd %d and its mapping differ", who, fd);
	}
	free(buf);
}

/* The process holds 0, 1, 2, @x and @y and no other fd (none of crf's on a memfd). */
static void check_fd_table(const char *who, int x, int y)
{
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");
	int fd;

	WL_CHECK(d != NULL, "%s: opendir /proc/self/fd: %s", who, strerror(errno));
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		fd = atoi(de->d_name);
		WL_CHECK(fd <= 2 || fd == x || fd == y || fd == dirfd(d),
			 "%s: holds fd %d, which it did not open", who, fd);
	}
	closedir(d);
}

/* Wait until @get() is @v (up to 10 s). */
static bool wait_byte(unsigned char (*get)(void), unsigned char v)
{
	for (int i = 0; i < 1000; i++) {
		if (get() == v)
			return true;
		usleep(10000);
	}
	return false;
}

static unsigned char child_sees_parent(void)
{
	return atomic_load((_Atomic unsigned char *)(ma + OFF_P));
}

static unsigned char parent_reads_child(void)
{
	unsigned char c = 0;

	if (pread(ro_fd, &c, 1, OFF_C) != 1)
		wl_fail("parent: pread ro: %s", strerror(errno));
	return c;
}

static _Noreturn void child(int setup_w)
{
	const char *who = "child";
	unsigned char c = 0;
	uint64_t ino;
	struct stat st;

	close(ro_fd);
	close(setup_w);
	wl_wait_verify();
	check_fd_table(who, a_fd, b_fd);
	check_fd(who, a_fd, ma, A_BYTES, "wl-memfd-a", A_SEALS, O_RDWR, A_POS);
	check_fd(who, b_fd, mb, B_BYTES, "wl-memfd-b", B_SEALS, O_RDWR, 0);
	check_content(who, b_fd, mb, B_BYTES, B_BYTES, B_SEED);
	WL_CHECK(pwrite(b_fd, "x", 1, 0) < 0 && errno == EPERM,
		 "child: a write through b's fd was not refused by its seal");
	WL_CHECK(wait_byte(child_sees_parent, BYTE_P),
		 "child: the parent's write through its fd of a is not seen in the mapping");
	WL_CHECK(fstat(b_fd, &st) == 0, "child: fstat b: %s", strerror(errno));
	ino = st.st_ino;
	memcpy(ma + OFF_INO, &ino, sizeof(ino));
	atomic_store((_Atomic unsigned char *)(ma + OFF_C), BYTE_C);
	WL_CHECK(pread(a_fd, &c, 1, OFF_C) == 1 && c == BYTE_C,
		 "child: its store into a's mapping is not read back through its fd (%#x)", c);
	exit(0);
}

static void parent(pid_t kid)
{
	const char *who = "parent";
	unsigned char p = BYTE_P;
	uint64_t ino;
	int st;

	check_fd_table(who, a_fd, ro_fd);
	check_fd(who, a_fd, ma, A_BYTES, "wl-memfd-a", A_SEALS, O_RDWR, A_POS);
	check_fd(who, ro_fd, ma, A_BYTES, "wl-memfd-a", A_SEALS, O_RDONLY, RO_POS);
	check_content(who, a_fd, ma, A_BYTES, CTL, A_SEED);
	check_content(who, ro_fd, ma, A_BYTES, CTL, A_SEED);
	check_content(who, -1, mb, B_BYTES, B_BYTES, B_SEED);
	WL_CHECK(pwrite(a_fd, &p, 1, OFF_P) == 1, "parent: pwrite a: %s", strerror(errno));
	WL_CHECK(ma[OFF_P] == BYTE_P, "parent: its write through a's fd is not in its mapping");
	WL_CHECK(wait_byte(parent_reads_child, BYTE_C),
		 "parent: the child's store into a's mapping is not read through ro");
	memcpy(&ino, ma + OFF_INO, sizeof(ino));
	WL_CHECK(ino == (uint64_t)mapped_inode(who, mb, B_BYTES),
		 "parent: its mapping of b (inode %lu) is not the child's b (inode %llu)",
		 (unsigned long)mapped_inode(who, mb, B_BYTES), (unsigned long long)ino);
	WL_CHECK(lseek(a_fd, 0, SEEK_CUR) == A_POS && lseek(ro_fd, 0, SEEK_CUR) == RO_POS,
		 "parent: an offset moved");
	WL_CHECK(waitpid(kid, &st, 0) == kid, "waitpid: %s", strerror(errno));
	WL_CHECK(WIFEXITED(st) && !WEXITSTATUS(st), "the child failed (status %#x)", st);
}

int main(void)
{
	int pfd[2];
	pid_t kid;
	char c;

	wl_init("memfd-map");
	setup();
	if (pipe(pfd) < 0)
		wl_fail("pipe: %s", strerror(errno));
	kid = fork();
	if (kid < 0)
		wl_fail("fork: %s", strerror(errno));
	if (kid == 0) {
		close(pfd[0]);
		child(pfd[1]);
	}
	close(pfd[1]);
	close(b_fd);
	b_fd = -1;
	/* EOF once the child has closed its copy of ro (and of the pipe). */
	if (read(pfd[0], &c, 1) != 0)
		wl_fail("setup pipe: unexpected data");
	close(pfd[0]);
	wl_ready();
	wl_wait_verify();
	parent(kid);
	wl_note("memfd a (fd shared by 2 processes, a read-only reopen) and b (write-sealed): "
		"each fd is its mapping's memfd in both processes");
	return 0;
}
