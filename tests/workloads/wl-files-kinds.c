// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-files-kinds: the less common ways of holding a regular file keep
 * their fds across checkpoint and restore.
 *
 * State, at fixed fd numbers, in the workload's directory D:
 *   3  an O_PATH fd of D/kinds.dat
 *   4  an O_PATH | O_DIRECTORY fd of D/sub1
 *   5  an O_PATH | O_NOFOLLOW fd of the symlink D/kinds.lnk -> "kinds.dat"
 *   6  an O_TMPFILE file in D, O_RDWR, 70000 known bytes, offset 3333
 *   7  an O_TMPFILE file in D, O_WRONLY | O_APPEND, 100 bytes
 *   8  D/kinds.direct, O_RDWR | O_DIRECT, offset 4096 (left out, with a
 *      note, when D's filesystem refuses O_DIRECT at open)
 *   9  D/kinds.dat, O_RDONLY | O_NOATIME, offset 77
 *   10 D/kinds.app, O_RDWR | O_APPEND | O_NONBLOCK, offset 50
 *   11 D/old.dat renamed to D/new.dat while open, offset 1234
 *   12 D/sub1/far.dat renamed to D/sub2/moved.dat while open, offset 555
 *   13 an O_PATH fd of the FIFO D/kinds.fifo
 *   14 an O_PATH fd of the unix socket file D/kinds.sock (no socket bound)
 * After restore every fd has its number, its F_GETFL flags exactly, its
 * close-on-exec bit and offset, and the file of the dump: the O_PATH ones
 * reach the same inodes (the symlink itself, not its target), the O_TMPFILE
 * files have no name and their bytes, and fd 6 can be given a name with
 * linkat() through /proc/self/fd, as before the dump; O_DIRECT reads
 * aligned blocks; the renamed files read their bytes at their offsets and
 * /proc/self/fd names their new paths.
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define FD_PATH	   3
#define FD_PDIR	   4
#define FD_PLNK	   5
#define FD_TMP	   6
#define FD_TMPAPP  7
#define FD_DIRECT  8
#define FD_NOATIME 9
#define FD_APPEND  10
#define FD_REN	   11
#define FD_FAR	   12
#define FD_PFIFO   13
#define FD_PSOCK   14
#define N_FDS	   12

#define DATA_LEN (64 * 1024)
#define TMP_LEN	 70000
#define TMP_POS	 3333
#define BLOCK	 4096

struct held {
	int fd;
	int getfl;	  /* F_GETFL at the dump */
	bool cloexec;	  /* FD_CLOEXEC */
	off_t pos;	  /* -1: O_PATH, no offset */
	uint64_t seed;	  /* the content is wl_fill(seed), 0: not checked here */
	size_t len;	  /* ... of that many bytes */
	ino_t ino;	  /* the inode at the dump, 0: not compared (a new file) */
	const char *name; /* the path /proc/self/fd must show, relative to D */
};

static struct held held[N_FDS];
static size_t n_held;
static bool have_direct;
static char dir[4096];

static void path_of(char *out, size_t size, const char *name)
{
	snprintf(out, size, "%s/%s", dir, name);
}

/* Move fd @from to number @to (close-on-exec as @cloexec says). */
static void move_to(int from, int to, bool cloexec, const char *what)
{
	WL_CHECK(from >= 0, "%s: %s", what, strerror(errno));
	if (from == to) {
		WL_CHECK(fcntl(to, F_SETFD, cloexec ? FD_CLOEXEC : 0) == 0, "%s: F_SETFD: %s", what,
			 strerror(errno));
		return;
	}
	WL_CHECK(dup3(from, to, cloexec ? O_CLOEXEC : 0) == to, "%s: dup3 to %d: %s", what, to,
		 strerror(errno));
	close(from);
}

/* Create D/@name holding wl_fill(@seed) of @len bytes. */
static void make_file(const char *name, uint64_t seed, size_t len)
{
	unsigned char *buf = malloc(len);
	char path[4200];
	int fd;

	WL_CHECK(buf, "out of memory");
	wl_fill(buf, len, seed);
	path_of(path, sizeof(path), name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	WL_CHECK(fd >= 0 && write(fd, buf, len) == (ssize_t)len && fsync(fd) == 0 && !close(fd),
		 "%s: %s", path, strerror(errno));
	free(buf);
}

/* Open D/@name with @flags at @fd and remember what it is. */
static struct held *hold(int fd, const char *name, int flags, uint64_t seed, size_t len)
{
	struct held *h = &held[n_held++];
	char path[4200];
	struct stat st;

	path_of(path, sizeof(path), name);
	move_to(open(path, flags | O_CLOEXEC), fd, flags & O_CLOEXEC, path);
	WL_CHECK(fstat(fd, &st) == 0, "fstat %s: %s", path, strerror(errno));
	*h = (struct held){.fd = fd,
			   .cloexec = flags & O_CLOEXEC,
			   .pos = -1,
			   .seed = seed,
			   .len = len,
			   .ino = st.st_ino,
			   .name = name};
	return h;
}

/* Put @h's offset at @pos and take its flags as they are now. */
static void settle(struct held *h, off_t pos)
{
	if (pos >= 0)
		WL_CHECK(lseek(h->fd, pos, SEEK_SET) == pos, "fd %d: seek: %s", h->fd,
			 strerror(errno));
	h->pos = pos;
	h->getfl = fcntl(h->fd, F_GETFL);
	WL_CHECK(h->getfl >= 0, "fd %d: F_GETFL: %s", h->fd, strerror(errno));
}

/* An O_TMPFILE file in D with wl_fill(@seed) of @len bytes, at @fd. */
static struct held *hold_tmpfile(int fd, int flags, uint64_t seed, size_t len)
{
	struct held *h = &held[n_held++];
	unsigned char *buf = malloc(len);
	int tmp = open(dir, O_TMPFILE | flags | O_CLOEXEC, 0640);

	WL_CHECK(buf && tmp >= 0, "O_TMPFILE in %s: %s", dir, strerror(errno));
	wl_fill(buf, len, seed);
	WL_CHECK(write(tmp, buf, len) == (ssize_t)len, "O_TMPFILE: write: %s", strerror(errno));
	free(buf);
	move_to(tmp, fd, false, "O_TMPFILE");
	*h = (struct held){.fd = fd, .pos = -1, .seed = seed, .len = len};
	return h;
}

/* fd 8, unless the filesystem of D has no O_DIRECT. */
static void hold_direct(void)
{
	char path[4200];
	int fd;

	make_file("kinds.direct", 0xd1, 4 * BLOCK);
	path_of(path, sizeof(path), "kinds.direct");
	fd = open(path, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (fd < 0 && errno == EINVAL) {
		wl_downgrade("%s: the filesystem refuses O_DIRECT: fd %d left out", path,
			     FD_DIRECT);
		return;
	}
	WL_CHECK(fd >= 0, "%s: %s", path, strerror(errno));
	close(fd);
	have_direct = true;
	settle(hold(FD_DIRECT, "kinds.direct", O_RDWR | O_DIRECT, 0xd1, 4 * BLOCK), BLOCK);
}

/* D/@from opened, then renamed to D/@to: /proc/self/fd must follow it. */
static void hold_renamed(int fd, const char *from, const char *to, uint64_t seed, off_t pos)
{
	char a[4200], b[4200];
	struct held *h;

	make_file(from, seed, DATA_LEN);
	h = hold(fd, from, O_RDONLY, seed, DATA_LEN);
	path_of(a, sizeof(a), from);
	path_of(b, sizeof(b), to);
	WL_CHECK(rename(a, b) == 0, "rename %s %s: %s", a, b, strerror(errno));
	h->name = to;
	settle(h, pos);
}

/* O_PATH fds of a FIFO and of a socket file: names, not pipes or sockets. */
static void hold_special(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char path[4200];
	int sock;

	path_of(path, sizeof(path), "kinds.fifo");
	WL_CHECK(mkfifo(path, 0600) == 0, "mkfifo %s: %s", path, strerror(errno));
	settle(hold(FD_PFIFO, "kinds.fifo", O_PATH, 0, 0), -1);
	path_of(path, sizeof(path), "kinds.sock");
	WL_CHECK(strlen(path) < sizeof(sa.sun_path), "%s: too long for a socket", path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	WL_CHECK(sock >= 0 && bind(sock, (struct sockaddr *)&sa, sizeof(sa)) == 0 && !close(sock),
		 "socket file %s: %s", path, strerror(errno));
	settle(hold(FD_PSOCK, "kinds.sock", O_PATH, 0, 0), -1);
}

static void setup(void)
{
	char path[4200];
	struct held *h;

	snprintf(dir, sizeof(dir), "%s", wl_tmpdir());
	make_file("kinds.dat", 0xda, DATA_LEN);
	path_of(path, sizeof(path), "sub1");
	WL_CHECK(mkdir(path, 0755) == 0, "mkdir %s: %s", path, strerror(errno));
	path_of(path, sizeof(path), "sub2");
	WL_CHECK(mkdir(path, 0755) == 0, "mkdir %s: %s", path, strerror(errno));
	path_of(path, sizeof(path), "kinds.lnk");
	WL_CHECK(symlink("kinds.dat", path) == 0, "symlink %s: %s", path, strerror(errno));

	settle(hold(FD_PATH, "kinds.dat", O_PATH, 0, 0), -1);
	settle(hold(FD_PDIR, "sub1", O_PATH | O_DIRECTORY, 0, 0), -1);
	settle(hold(FD_PLNK, "kinds.lnk", O_PATH | O_NOFOLLOW, 0, 0), -1);
	settle(hold_tmpfile(FD_TMP, O_RDWR, 0x7e, TMP_LEN), TMP_POS);
	h = hold_tmpfile(FD_TMPAPP, O_WRONLY, 0xa9, 100);
	WL_CHECK(fcntl(FD_TMPAPP, F_SETFL, O_APPEND) == 0, "F_SETFL: %s", strerror(errno));
	settle(h, 100);
	hold_direct();
	settle(hold(FD_NOATIME, "kinds.dat", O_RDONLY | O_NOATIME, 0xda, DATA_LEN), 77);
	make_file("kinds.app", 0xab, 50);
	settle(hold(FD_APPEND, "kinds.app", O_RDWR | O_APPEND | O_NONBLOCK, 0xab, 50), 50);
	hold_renamed(FD_REN, "old.dat", "new.dat", 0x01d, 1234);
	hold_renamed(FD_FAR, "sub1/far.dat", "sub2/moved.dat", 0xfa, 555);
	hold_special();
}

/* The first @len bytes of @fd (through pread, or a reopen for O_PATH) are wl_fill(@seed). */
static void check_bytes(int fd, size_t len, uint64_t seed)
{
	unsigned char *buf = malloc(len);
	ssize_t bad;

	WL_CHECK(buf, "out of memory");
	WL_CHECK(pread(fd, buf, len, 0) == (ssize_t)len, "fd %d: pread %zu: %s", fd, len,
		 strerror(errno));
	bad = wl_cmp_fill(buf, len, seed);
	WL_CHECK(bad < 0, "fd %d: the content differs at byte %zd", fd, bad);
	free(buf);
}

static void check_held(const struct held *h)
{
	int fl = fcntl(h->fd, F_GETFL), fdfl = fcntl(h->fd, F_GETFD);
	char proc[64], link[4200], want[4200];
	struct stat st;
	ssize_t n;

	WL_CHECK(fl >= 0 && fdfl >= 0, "fd %d is not open: %s", h->fd, strerror(errno));
	WL_CHECK(fl == h->getfl, "fd %d: flags %#o, were %#o", h->fd, fl, h->getfl);
	WL_CHECK(!!(fdfl & FD_CLOEXEC) == h->cloexec, "fd %d: close-on-exec %d, was %d", h->fd,
		 !!(fdfl & FD_CLOEXEC), h->cloexec);
	if (h->pos >= 0)
		WL_CHECK(lseek(h->fd, 0, SEEK_CUR) == h->pos, "fd %d: offset %lld, was %lld", h->fd,
			 (long long)lseek(h->fd, 0, SEEK_CUR), (long long)h->pos);
	WL_CHECK(fstat(h->fd, &st) == 0, "fd %d: fstat: %s", h->fd, strerror(errno));
	WL_CHECK(!h->ino || st.st_ino == h->ino, "fd %d: inode %llu, was %llu", h->fd,
		 (unsigned long long)st.st_ino, (unsigned long long)h->ino);
	if (h->seed && !(fl & O_DIRECT) && (fl & O_ACCMODE) != O_WRONLY)
		check_bytes(h->fd, h->len, h->seed);
	if (!h->name)
		return;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", h->fd);
	n = readlink(proc, link, sizeof(link) - 1);
	WL_CHECK(n > 0, "readlink %s: %s", proc, strerror(errno));
	link[n] = '\0';
	path_of(want, sizeof(want), h->name);
	WL_CHECK(!strcmp(link, want), "fd %d is %s, was %s", h->fd, link, want);
}

/* The O_PATH fds lead where they did: into sub1, to the symlink itself, to the data. */
static void check_opath(void)
{
	char target[64], proc[64];
	struct stat st;
	ssize_t n;
	int fd;

	WL_CHECK(fstatat(FD_PDIR, "far.dat", &st, 0) < 0 && errno == ENOENT,
		 "sub1/far.dat is back: fd %d is not sub1", FD_PDIR);
	fd = openat(FD_PDIR, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	WL_CHECK(fd >= 0, "openat through O_PATH fd %d: %s", FD_PDIR, strerror(errno));
	close(fd);
	WL_CHECK(fstat(FD_PLNK, &st) == 0 && S_ISLNK(st.st_mode), "fd %d is not a symlink",
		 FD_PLNK);
	n = readlinkat(FD_PLNK, "", target, sizeof(target) - 1);
	WL_CHECK(n == 9 && !memcmp(target, "kinds.dat", 9), "fd %d: readlinkat: %zd (%s)", FD_PLNK,
		 n, strerror(errno));
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", FD_PATH);
	fd = open(proc, O_RDONLY | O_CLOEXEC);
	WL_CHECK(fd >= 0, "reopening O_PATH fd %d: %s", FD_PATH, strerror(errno));
	check_bytes(fd, DATA_LEN, 0xda);
	close(fd);
}

/* No name, the bytes, and fd 6 still takes a name (it was opened without O_EXCL). */
static void check_tmpfiles(void)
{
	char proc[64], name[4200];
	struct stat st;
	int fd;

	for (int f = FD_TMP; f <= FD_TMPAPP; f++)
		WL_CHECK(fstat(f, &st) == 0 && st.st_nlink == 0 && (st.st_mode & 07777) == 0640,
			 "fd %d: %lu links, mode %o", f, (unsigned long)st.st_nlink,
			 st.st_mode & 07777);
	WL_CHECK(write(FD_TMPAPP, "+", 1) == 1 && fstat(FD_TMPAPP, &st) == 0 && st.st_size == 101 &&
			 lseek(FD_TMPAPP, 0, SEEK_CUR) == 101,
		 "fd %d does not append: size %lld", FD_TMPAPP, (long long)st.st_size);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", FD_TMP);
	path_of(name, sizeof(name), "kinds.linked");
	WL_CHECK(linkat(AT_FDCWD, proc, AT_FDCWD, name, AT_SYMLINK_FOLLOW) == 0,
		 "linkat of O_TMPFILE fd %d: %s", FD_TMP, strerror(errno));
	fd = open(name, O_RDONLY | O_CLOEXEC);
	WL_CHECK(fd >= 0, "%s: %s", name, strerror(errno));
	check_bytes(fd, TMP_LEN, 0x7e);
	close(fd);
	WL_CHECK(unlink(name) == 0, "unlink %s: %s", name, strerror(errno));
}

/* An aligned O_DIRECT read at the offset reads the block that is there. */
static void check_direct(void)
{
	unsigned char *buf, *want;

	if (!have_direct)
		return;
	WL_CHECK(posix_memalign((void **)&buf, BLOCK, BLOCK) == 0 && (want = malloc(2 * BLOCK)),
		 "out of memory");
	WL_CHECK(read(FD_DIRECT, buf, BLOCK) == BLOCK, "O_DIRECT read on fd %d: %s", FD_DIRECT,
		 strerror(errno));
	wl_fill(want, 2 * BLOCK, 0xd1);
	WL_CHECK(!memcmp(buf, want + BLOCK, BLOCK), "fd %d: the O_DIRECT block differs", FD_DIRECT);
	free(want);
	free(buf);
}

int main(void)
{
	wl_init("files-kinds");
	setup();
	wl_ready();
	wl_wait_verify();
	for (size_t i = 0; i < n_held; i++)
		check_held(&held[i]);
	check_opath();
	check_tmpfiles();
	check_direct();
	wl_note("%zu fds: O_PATH, O_TMPFILE, O_DIRECT, O_NOATIME, O_APPEND and renamed files "
		"all as they were",
		n_held);
	return 0;
}
