// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-unlinked [leave]: unlinked and O_TMPFILE files come back as the files
 * they were: their holes, owner, mode and times, one file for every fd,
 * description and former name (hard link) that led to it; and a dump does
 * not change the times of the files the tree has open.
 *
 * State during the dump:
 *   S    an O_TMPFILE file of 1 GiB with three data extents (8 KiB at 0,
 *        64 KiB at 300 MiB, the last 4 KiB), the rest holes; and a second
 *        description of it, opened through /proc/self/fd
 *   U    an unlinked file of 5000 bytes, owner 1234:5678, mode 06640,
 *        atime and mtime set in the past (atime before mtime, so that a
 *        read would move it), at offset 123, with an attribute user.crf
 *        and the inode flag FS_NODUMP_FL (where the file system has them)
 *   H    a file with two names, opened through each (and once more with
 *        O_APPEND), then both unlinked; the child opened it again too
 *   R    a regular file, written, with times set in the past
 * After restore: S has the same SEEK_DATA/SEEK_HOLE layout, about the same
 * st_blocks, the same bytes and times; U its owner, mode, times, bytes,
 * offset, attribute and inode flag; every fd of H is on one file (what the child writes through its
 * description the parent reads through another name's); R and every
 * other file have the times of before the dump, and with "leave" (the
 * dump let the tree run) the same inodes and ctimes too.  The harness
 * checks that the images stay small (--max-image-kb).
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/fs.h>
#include <linux/kcmp.h>

#define GIB	    (1024LL * 1024 * 1024)
#define U_LEN	    5000
#define U_POS	    123
#define H_LEN	    3000
#define R_LEN	    2000
#define SEED_S	    0x5a5aULL
#define SEED_U	    0x7575ULL
#define SEED_H	    0x4848ULL
#define SEED_R	    0x5252ULL
#define MAX_EXT	    16
#define TMPFILE_BIT 020000000 /* O_TMPFILE without O_DIRECTORY, kept in the flags */
#define XATTR_VALUE "kept"

static const struct {
	off_t off, len;
} s_data[] = {{0, 8192}, {300LL << 20, 65536}, {GIB - 4096, 4096}};

struct layout {
	off_t data[MAX_EXT], hole[MAX_EXT];
	int n;
};

struct before {
	struct stat s, u, h, r;
	struct layout s_layout;
	int s_flags;
};

static bool leave;

static void write_at(int fd, off_t off, size_t len, uint64_t seed, const char *what)
{
	char *buf = malloc(len);

	WL_CHECK(buf, "malloc");
	wl_fill(buf, len, seed);
	WL_CHECK(pwrite(fd, buf, len, off) == (ssize_t)len, "%s: pwrite: %s", what,
		 strerror(errno));
	free(buf);
}

static void check_at(int fd, off_t off, size_t len, uint64_t seed, const char *what)
{
	char *buf = malloc(len);

	WL_CHECK(buf, "malloc");
	WL_CHECK(pread(fd, buf, len, off) == (ssize_t)len, "%s: pread at %lld: %s", what,
		 (long long)off, strerror(errno));
	WL_CHECK(wl_cmp_fill(buf, len, seed) < 0, "%s: byte %lld differs", what,
		 (long long)(off + wl_cmp_fill(buf, len, seed)));
	free(buf);
}

/* Through a description of our own: SEEK_DATA on @fd would move its offset. */
static void read_layout(int fd, off_t size, struct layout *l)
{
	char path[64];
	int rd;
	off_t off = 0;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	rd = open(path, O_RDONLY | O_NOATIME);
	WL_CHECK(rd >= 0, "open %s: %s", path, strerror(errno));
	for (l->n = 0; off < size; l->n++) {
		WL_CHECK(l->n < MAX_EXT, "more than %d data extents", MAX_EXT);
		l->data[l->n] = lseek(rd, off, SEEK_DATA);
		if (l->data[l->n] < 0 && errno == ENXIO)
			break;
		l->hole[l->n] = lseek(rd, l->data[l->n], SEEK_HOLE);
		WL_CHECK(l->data[l->n] >= 0 && l->hole[l->n] > l->data[l->n], "SEEK_DATA: %s",
			 strerror(errno));
		off = l->hole[l->n];
	}
	close(rd);
}

static void stat_fd(int fd, struct stat *st, const char *what)
{
	WL_CHECK(fstat(fd, st) == 0, "%s: fstat: %s", what, strerror(errno));
}

static bool same_time(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

/* What survives a restore: owner, mode, size, links, atime and mtime; the rest with leave. */
static void check_stat(int fd, const struct stat *b, const char *what)
{
	struct stat st;

	stat_fd(fd, &st, what);
	WL_CHECK(st.st_uid == b->st_uid && st.st_gid == b->st_gid && st.st_mode == b->st_mode,
		 "%s: owner %u:%u mode %#o, want %u:%u %#o", what, st.st_uid, st.st_gid, st.st_mode,
		 b->st_uid, b->st_gid, b->st_mode);
	WL_CHECK(st.st_size == b->st_size && st.st_nlink == b->st_nlink,
		 "%s: size %lld links %lu, want %lld %lu", what, (long long)st.st_size,
		 (unsigned long)st.st_nlink, (long long)b->st_size, (unsigned long)b->st_nlink);
	WL_CHECK(same_time(&st.st_atim, &b->st_atim) && same_time(&st.st_mtim, &b->st_mtim),
		 "%s: atime %lld.%09ld mtime %lld.%09ld, want %lld.%09ld %lld.%09ld", what,
		 (long long)st.st_atim.tv_sec, st.st_atim.tv_nsec, (long long)st.st_mtim.tv_sec,
		 st.st_mtim.tv_nsec, (long long)b->st_atim.tv_sec, b->st_atim.tv_nsec,
		 (long long)b->st_mtim.tv_sec, b->st_mtim.tv_nsec);
	if (!leave)
		return;
	WL_CHECK(st.st_ino == b->st_ino && same_time(&st.st_ctim, &b->st_ctim),
		 "%s: inode %lu ctime %lld.%09ld, want %lu %lld.%09ld after a dump that let us run",
		 what, (unsigned long)st.st_ino, (long long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec,
		 (unsigned long)b->st_ino, (long long)b->st_ctim.tv_sec, b->st_ctim.tv_nsec);
}

static void set_times(int fd, time_t atime, time_t mtime, const char *what)
{
	const struct timespec t[2] = {{atime, 111111111}, {mtime, 222222222}};

	WL_CHECK(futimens(fd, t) == 0, "%s: futimens: %s", what, strerror(errno));
}

static int reopen(int fd, int flags)
{
	char path[64];
	int r;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	r = open(path, flags);
	WL_CHECK(r >= 0, "open %s: %s", path, strerror(errno));
	return r;
}

static void check_sparse(int s, int s2, const struct before *b)
{
	struct layout now;
	struct stat st, st2;
	char zero[4096] = {0}, buf[4096];

	check_stat(s, &b->s, "O_TMPFILE sparse file");
	read_layout(s, b->s.st_size, &now);
	WL_CHECK(now.n == b->s_layout.n, "sparse file: %d data extents, want %d", now.n,
		 b->s_layout.n);
	for (int i = 0; i < now.n; i++)
		WL_CHECK(now.data[i] == b->s_layout.data[i] && now.hole[i] == b->s_layout.hole[i],
			 "sparse file: extent %d is %lld-%lld, want %lld-%lld", i,
			 (long long)now.data[i], (long long)now.hole[i],
			 (long long)b->s_layout.data[i], (long long)b->s_layout.hole[i]);
	stat_fd(s, &st, "sparse file");
	WL_CHECK(st.st_blocks >= 152 && st.st_blocks <= b->s.st_blocks + 64,
		 "sparse file: %lld blocks, was %lld", (long long)st.st_blocks,
		 (long long)b->s.st_blocks);
	for (size_t i = 0; i < sizeof(s_data) / sizeof(s_data[0]); i++)
		check_at(s2, s_data[i].off, (size_t)s_data[i].len, SEED_S + i, "sparse file");
	WL_CHECK(pread(s2, buf, sizeof(buf), 600LL << 20) == sizeof(buf) &&
			 !memcmp(buf, zero, sizeof(buf)),
		 "sparse file: its hole at 600 MiB does not read as zeroes");
	WL_CHECK(fcntl(s, F_GETFL) == b->s_flags, "sparse file: flags %#o, want %#o",
		 fcntl(s, F_GETFL), b->s_flags);
	stat_fd(s2, &st2, "sparse file's second description");
	WL_CHECK(st.st_ino == st2.st_ino && st.st_dev == st2.st_dev,
		 "the sparse file's two descriptions are on two files now");
	WL_CHECK(syscall(SYS_kcmp, getpid(), getpid(), KCMP_FILE, s, s2) != 0,
		 "the sparse file's two descriptions are one now");
}

static void check_same_file(int a, int b, const char *what)
{
	struct stat x, y;

	stat_fd(a, &x, what);
	stat_fd(b, &y, what);
	WL_CHECK(x.st_ino == y.st_ino && x.st_dev == y.st_dev && x.st_nlink == 0,
		 "%s: fds %d and %d are on inodes %lu and %lu (links %lu)", what, a, b,
		 (unsigned long)x.st_ino, (unsigned long)y.st_ino, (unsigned long)x.st_nlink);
}

/*
 * The child: its own description of H.  After restore, once the parent
 * has checked H's times (a byte on @go_rd), it writes through it.
 */
static _Noreturn void child(int ha, int sync_wr, int go_rd)
{
	int ch = reopen(ha, O_RDWR);
	char byte;

	close(sync_wr);
	wl_wait_verify();
	WL_CHECK(read(go_rd, &byte, 1) == 1, "child: the parent is gone before its go");
	check_same_file(ch, ha, "child: hard-linked file");
	write_at(ch, 2000, 100, SEED_H + 9, "child: hard-linked file");
	_exit(0);
}

static void check_links(int ha, int hb, int hc, int go_wr, pid_t pid, const struct before *b)
{
	int status;

	check_stat(ha, &b->h, "hard-linked file");
	WL_CHECK(write(go_wr, "g", 1) == 1, "telling the child: %s", strerror(errno));
	check_same_file(ha, hb, "hard-linked file's two names");
	check_same_file(ha, hc, "hard-linked file's O_APPEND fd");
	WL_CHECK(lseek(ha, 0, SEEK_CUR) == 10 && lseek(hb, 0, SEEK_CUR) == 20,
		 "hard-linked file: offsets %lld and %lld, want 10 and 20",
		 (long long)lseek(ha, 0, SEEK_CUR), (long long)lseek(hb, 0, SEEK_CUR));
	WL_CHECK(fcntl(hc, F_GETFL) & O_APPEND, "hard-linked file: O_APPEND lost");
	check_at(hb, 0, 1000, SEED_H, "hard-linked file");
	write_at(ha, 100, 50, SEED_H + 1, "hard-linked file");
	check_at(hb, 100, 50, SEED_H + 1, "hard-linked file, through the other name");
	WL_CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
	WL_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: status %#x", status);
	check_at(hb, 2000, 100, SEED_H + 9, "hard-linked file, as the child wrote it");
}

static int make_sparse(void)
{
	int s = open(wl_tmpdir(), O_TMPFILE | O_RDWR, 0600);

	WL_CHECK(s >= 0, "O_TMPFILE in %s: %s", wl_tmpdir(), strerror(errno));
	WL_CHECK(ftruncate(s, GIB) == 0, "ftruncate 1 GiB: %s", strerror(errno));
	for (size_t i = 0; i < sizeof(s_data) / sizeof(s_data[0]); i++)
		write_at(s, s_data[i].off, (size_t)s_data[i].len, SEED_S + i, "sparse file");
	return s;
}

/*
 * An extended attribute and an inode flag (chattr +d), where the file
 * system has them; whether it did, in @attrs.
 */
static void set_attrs(int u, bool *attrs)
{
	int fl = 0;

	*attrs = fsetxattr(u, "user.crf", XATTR_VALUE, sizeof(XATTR_VALUE), 0) == 0 &&
		 ioctl(u, FS_IOC_GETFLAGS, &fl) == 0 && (fl |= FS_NODUMP_FL) &&
		 ioctl(u, FS_IOC_SETFLAGS, &fl) == 0;
	if (!*attrs)
		wl_note("no user.* attribute or inode flags in %s (%s): not checked", wl_tmpdir(),
			strerror(errno));
}

static void check_attrs(int u)
{
	char buf[64];
	int fl = 0;

	WL_CHECK(fgetxattr(u, "user.crf", buf, sizeof(buf)) == sizeof(XATTR_VALUE) &&
			 !memcmp(buf, XATTR_VALUE, sizeof(XATTR_VALUE)),
		 "unlinked file: its attribute user.crf is lost: %s", strerror(errno));
	WL_CHECK(ioctl(u, FS_IOC_GETFLAGS, &fl) == 0 && (fl & FS_NODUMP_FL),
		 "unlinked file: inode flags %#x, no FS_NODUMP_FL", fl);
}

static int make_unlinked(const char *path)
{
	int u = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	WL_CHECK(u >= 0, "open %s: %s", path, strerror(errno));
	write_at(u, 0, U_LEN, SEED_U, "unlinked file");
	WL_CHECK(fchown(u, 1234, 5678) == 0 && fchmod(u, 06640) == 0, "chown/chmod: %s",
		 strerror(errno));
	WL_CHECK(unlink(path) == 0, "unlink %s: %s", path, strerror(errno));
	set_times(u, 1000000000, 1100000000, "unlinked file");
	WL_CHECK(lseek(u, U_POS, SEEK_SET) == U_POS, "lseek: %s", strerror(errno));
	return u;
}

int main(int argc, char **argv)
{
	char a[4096], b_path[4096], u_path[4096], r_path[4096], byte;
	int s, s2, u, ha, hb, hc, r, sync[2], go[2];
	struct before b;
	bool attrs;
	pid_t pid;

	wl_init("unlinked");
	leave = argc > 1 && !strcmp(argv[1], "leave");
	snprintf(a, sizeof(a), "%s/wl-unlinked.a", wl_tmpdir());
	snprintf(b_path, sizeof(b_path), "%s/wl-unlinked.b", wl_tmpdir());
	snprintf(u_path, sizeof(u_path), "%s/wl-unlinked.u", wl_tmpdir());
	snprintf(r_path, sizeof(r_path), "%s/wl-unlinked.r", wl_tmpdir());
	unlink(a);
	unlink(b_path);

	s = make_sparse();
	s2 = reopen(s, O_RDONLY);
	u = make_unlinked(u_path);
	set_attrs(u, &attrs);
	ha = open(a, O_RDWR | O_CREAT | O_EXCL, 0644);
	WL_CHECK(ha >= 0 && link(a, b_path) == 0, "%s: %s", a, strerror(errno));
	write_at(ha, 0, H_LEN, SEED_H, "hard-linked file");
	hb = open(b_path, O_RDONLY);
	hc = open(a, O_WRONLY | O_APPEND);
	WL_CHECK(hb >= 0 && hc >= 0 && unlink(a) == 0 && unlink(b_path) == 0, "%s: %s", b_path,
		 strerror(errno));
	WL_CHECK(lseek(ha, 10, SEEK_SET) == 10 && lseek(hb, 20, SEEK_SET) == 20, "lseek: %s",
		 strerror(errno));
	r = open(r_path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	WL_CHECK(r >= 0, "open %s: %s", r_path, strerror(errno));
	write_at(r, 0, R_LEN, SEED_R, "regular file");
	set_times(r, 1200000000, 1300000000, "regular file");

	WL_CHECK(pipe2(sync, O_CLOEXEC) == 0 && pipe2(go, O_CLOEXEC) == 0, "pipe: %s",
		 strerror(errno));
	pid = fork();
	WL_CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(sync[0]);
		close(go[1]);
		child(ha, sync[1], go[0]);
	}
	close(sync[1]);
	close(go[0]);
	WL_CHECK(read(sync[0], &byte, 1) == 0, "sync: %s", strerror(errno));
	close(sync[0]);

	stat_fd(s, &b.s, "sparse file");
	read_layout(s, b.s.st_size, &b.s_layout);
	WL_CHECK(b.s_layout.n == 3, "sparse file: %d data extents, not 3 (no SEEK_DATA here?)",
		 b.s_layout.n);
	b.s_flags = fcntl(s, F_GETFL);
	WL_CHECK(b.s_flags & TMPFILE_BIT, "O_TMPFILE file: flags %#o", b.s_flags);
	stat_fd(u, &b.u, "unlinked file");
	stat_fd(ha, &b.h, "hard-linked file");
	stat_fd(r, &b.r, "regular file");
	wl_ready();
	wl_wait_verify();

	/* The times first: reading the files would move their atime. */
	check_stat(r, &b.r, "regular file");
	check_stat(u, &b.u, "unlinked file");
	check_sparse(s, s2, &b);
	WL_CHECK(lseek(u, 0, SEEK_CUR) == U_POS, "unlinked file: offset %lld, want %d",
		 (long long)lseek(u, 0, SEEK_CUR), U_POS);
	check_at(u, 0, U_LEN, SEED_U, "unlinked file");
	if (attrs)
		check_attrs(u);
	check_at(r, 0, R_LEN, SEED_R, "regular file");
	check_links(ha, hb, hc, go[1], pid, &b);
	unlink(r_path);
	return 0;
}
