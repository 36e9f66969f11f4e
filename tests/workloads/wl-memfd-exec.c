// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-memfd-exec: a memfd's mode and whether it can be executed survive
 * checkpoint and restore.
 *
 * State: memfds held as fds: one with mode 0642 and some bytes; one made
 * executable by default holding a copy of /bin/true, held read-only (a
 * writable fd would make exec fail with ETXTBSY); one made with MFD_EXEC
 * holding it too, sealed against writes and against mode changes
 * (F_SEAL_EXEC); and one made with MFD_NOEXEC_SEAL, holding it as well,
 * which must never run.  Memfds only mapped, their fds closed: one with
 * mode 0604, restored by the mem plugin alone, and one mapped and held as
 * an fd with mode 0640, which the files and the mem plugin both restore.
 *
 * Verify: every memfd's mode, seals and bytes are as they were; a child
 * runs the two executable ones with execveat(fd, "", AT_EMPTY_PATH) and
 * they exit 0; the MFD_NOEXEC_SEAL one refuses to run (EACCES) and to
 * change its exec bits (EPERM).
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MFD_EXEC
#define MFD_NOEXEC_SEAL 0x0008U
#define MFD_EXEC	0x0010U
#endif
#ifndef F_SEAL_EXEC
#define F_SEAL_EXEC 0x0020
#endif

#define DATA_BYTES 10000

struct memfd {
	const char *what;
	int fd;	    /* -1 for one only mapped */
	void *map;  /* its shared mapping, or NULL */
	size_t len; /* bytes of content (mapped: the whole mapping) */
	mode_t mode;
	int seals;
	int runs; /* 1: must run and exit 0; -1: must refuse to run; 0: not tried */
};

static struct memfd memfds[8];
static int n_memfds;
static unsigned char *elf;
static size_t elf_len;

static void load_true(void)
{
	struct stat st;
	int fd = open("/bin/true", O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) < 0)
		wl_fail("/bin/true: %s", strerror(errno));
	elf_len = (size_t)st.st_size;
	elf = malloc(elf_len);
	if (!elf || read(fd, elf, elf_len) != (ssize_t)elf_len)
		wl_fail("read /bin/true: %s", strerror(errno));
	close(fd);
}

static int make(const char *name, unsigned int flags)
{
	int fd = memfd_create(name, MFD_CLOEXEC | flags);

	if (fd < 0)
		wl_fail("memfd_create %s: %s", name, strerror(errno));
	return fd;
}

static void put(int fd, const void *buf, size_t len)
{
	if (pwrite(fd, buf, len, 0) != (ssize_t)len)
		wl_fail("write a memfd: %s", strerror(errno));
}

/* A read-only description of @fd's memfd in its place: exec needs no writer. */
static int read_only(int fd)
{
	char path[64];
	int ro;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ro = open(path, O_RDONLY | O_CLOEXEC);
	if (ro < 0)
		wl_fail("reopen %s: %s", path, strerror(errno));
	close(fd);
	return ro;
}

static struct memfd *add(const char *what, int fd, void *map, size_t len, int runs)
{
	struct memfd *m = &memfds[n_memfds++];

	*m = (struct memfd){.what = what, .fd = fd, .map = map, .len = len, .runs = runs};
	return m;
}

static void setup_fds(void)
{
	unsigned char data[DATA_BYTES];
	int fd;

	wl_fill(data, sizeof(data), 0x642);
	fd = make("mode-0642", 0);
	put(fd, data, sizeof(data));
	if (fchmod(fd, 0642) < 0)
		wl_fail("fchmod 0642: %s", strerror(errno));
	add("mode 0642", fd, NULL, sizeof(data), 0);

	fd = make("true", 0);
	put(fd, elf, elf_len);
	add("a copy of /bin/true", read_only(fd), NULL, elf_len, 1);

	fd = make("true-exec-sealed", MFD_EXEC | MFD_ALLOW_SEALING);
	put(fd, elf, elf_len);
	if (fchmod(fd, 0750) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_EXEC) < 0)
		wl_fail("fchmod and seal: %s", strerror(errno));
	add("MFD_EXEC, sealed", read_only(fd), NULL, elf_len, 1);

	fd = make("true-noexec", MFD_NOEXEC_SEAL);
	put(fd, elf, elf_len);
	add("MFD_NOEXEC_SEAL", read_only(fd), NULL, elf_len, -1);
}

static void *map_memfd(int fd, size_t len)
{
	void *p;

	if (ftruncate(fd, (off_t)len) < 0)
		wl_fail("ftruncate a memfd: %s", strerror(errno));
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		wl_fail("mmap a memfd: %s", strerror(errno));
	wl_fill(p, len, len);
	return p;
}

static void setup_maps(void)
{
	int fd;

	fd = make("mapped-0604", 0);
	if (fchmod(fd, 0604) < 0)
		wl_fail("fchmod 0604: %s", strerror(errno));
	add("only mapped, mode 0604", -1, map_memfd(fd, 3 * WL_PAGE), 3 * WL_PAGE, 0);
	close(fd);

	fd = make("mapped-and-held-0640", 0);
	if (fchmod(fd, 0640) < 0)
		wl_fail("fchmod 0640: %s", strerror(errno));
	add("mapped and held, mode 0640", fd, map_memfd(fd, 2 * WL_PAGE), 2 * WL_PAGE, 0);
}

/* The memfd's inode: through its fd, or through its mapping's map_files entry. */
static void stat_memfd(const struct memfd *m, struct stat *st, int *seals)
{
	char path[96];
	int fd = m->fd;

	if (fd < 0) {
		snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx",
			 (unsigned long)(uintptr_t)m->map,
			 (unsigned long)(uintptr_t)m->map + m->len);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			wl_fail("%s: open %s: %s", m->what, path, strerror(errno));
	}
	if (fstat(fd, st) < 0)
		wl_fail("%s: fstat: %s", m->what, strerror(errno));
	*seals = fcntl(fd, F_GET_SEALS);
	if (fd != m->fd)
		close(fd);
}

static void record(void)
{
	for (int i = 0; i < n_memfds; i++) {
		struct stat st;

		stat_memfd(&memfds[i], &st, &memfds[i].seals);
		memfds[i].mode = st.st_mode & 07777;
	}
}

/* A child runs the memfd; 0 if it exited 0, else the errno of execveat (or 255). */
static int run(const struct memfd *m)
{
	char *argv[] = {"true", NULL}, *envp[] = {NULL};
	int status;
	pid_t pid = fork();

	if (pid < 0)
		wl_fail("fork: %s", strerror(errno));
	if (pid == 0) {
		syscall(SYS_execveat, m->fd, "", argv, envp, AT_EMPTY_PATH);
		_exit(errno < 255 ? errno : 255);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		wl_fail("%s: the child that ran it did not exit (%#x)", m->what, status);
	return WEXITSTATUS(status);
}

static void check_run(const struct memfd *m)
{
	int r;

	if (!m->runs)
		return;
	r = run(m);
	if (m->runs > 0 && r)
		wl_fail("%s: execveat of it failed or it exited %d (%s)", m->what, r, strerror(r));
	if (m->runs < 0 && r != EACCES)
		wl_fail("%s: ran, or failed otherwise than EACCES (%d)", m->what, r);
	if (m->runs < 0 && (fchmod(m->fd, 0755) == 0 || errno != EPERM))
		wl_fail("%s: exec bits could be changed (or: %s)", m->what, strerror(errno));
}

static void check(void)
{
	for (int i = 0; i < n_memfds; i++) {
		const struct memfd *m = &memfds[i];
		unsigned char buf[DATA_BYTES];
		struct stat st;
		int seals;

		stat_memfd(m, &st, &seals);
		if ((st.st_mode & 07777) != m->mode || seals != m->seals)
			wl_fail("%s: mode %04o, seals %#x; they were %04o, %#x", m->what,
				st.st_mode & 07777, seals, m->mode, m->seals);
		if (m->map && wl_cmp_fill(m->map, m->len, m->len) >= 0)
			wl_fail("%s: its mapping's bytes differ", m->what);
		if (!m->map && m->runs && (size_t)st.st_size != elf_len)
			wl_fail("%s: %lld bytes, not /bin/true's %zu", m->what,
				(long long)st.st_size, elf_len);
		if (!m->map && !m->runs &&
		    (pread(m->fd, buf, sizeof(buf), 0) != DATA_BYTES ||
		     wl_cmp_fill(buf, sizeof(buf), 0x642) >= 0))
			wl_fail("%s: its bytes differ", m->what);
		check_run(m);
	}
}

int main(void)
{
	wl_init("memfd-exec");
	load_true();
	setup_fds();
	setup_maps();
	record();
	/* The state itself must hold before the dump, or the test proves nothing. */
	check();
	wl_ready();
	wl_wait_verify();
	check();
	wl_note("%d memfds with their modes, seals and exec rights", n_memfds);
	return 0;
}
