// SPDX-License-Identifier: GPL-2.0-only
/*
 * touch: the benchmark's workload and its physical-limit yardstick.
 *
 *   touch MIB READY_FILE
 *       map MIB MiB of anonymous memory, fill it with PRNG data (so no page
 *       is zero and none compresses), create READY_FILE, then sleep until
 *       killed.  Holds no fd but 0, 1 and 2 while it sleeps.
 *   touch --dirty RATE MIB READY_FILE
 *       the same, then instead of sleeping write one 8-byte word into a
 *       page RATE times a second, the pages scattered over the region (the
 *       dirtying rate a live dump, crf dump --live, meets).
 *   touch --copy MIB FILE
 *       fill a MIB MiB buffer the same way, then time writing it to FILE
 *       with write() and close(), no fsync (crf dump syncs only with
 *       --sync, which the benchmark does not use), print the milliseconds
 *       and remove FILE.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stderr, "touch: %s: %s\n", what, strerror(errno));
	exit(1);
}

static unsigned char *filled(size_t bytes)
{
	uint64_t *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t s = 0x6372662d62656e63ULL;

	if (p == MAP_FAILED)
		die("mmap");
	for (size_t i = 0; i < bytes / 8; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		p[i] = s;
	}
	return (unsigned char *)p;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int copy(size_t bytes, const char *path)
{
	unsigned char *buf = filled(bytes);
	size_t done = 0;
	double t0, t1;
	ssize_t n;
	int fd;

	t0 = now_ms();
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		die(path);
	while (done < bytes) {
		n = write(fd, buf + done, bytes - done > (8 << 20) ? 8 << 20 : bytes - done);
		if (n <= 0)
			die("write");
		done += (size_t)n;
	}
	if (close(fd) < 0)
		die("close");
	t1 = now_ms();
	unlink(path);
	printf("%.1f\n", t1 - t0);
	return 0;
}

/* RATE page writes a second over @p, until killed. */
static _Noreturn void dirty(unsigned char *p, size_t bytes, double rate)
{
	size_t pages = bytes / 4096, i = 0;
	double t0 = now_ms();
	uint64_t n = 0;

	for (;;) {
		i = (i + 40503) % pages;
		((volatile uint64_t *)(p + i * 4096))[0] += 1;
		n++;
		while (now_ms() - t0 < n * 1e3 / rate)
			;
	}
}

int main(int argc, char **argv)
{
	unsigned char *p;
	double rate = 0;
	int fd;

	if (argc == 4 && !strcmp(argv[1], "--copy"))
		return copy(strtoul(argv[2], NULL, 0) << 20, argv[3]);
	if (argc == 5 && !strcmp(argv[1], "--dirty")) {
		rate = strtod(argv[2], NULL);
		argv += 2;
		argc -= 2;
	}
	if (argc != 3 || !strtoul(argv[1], NULL, 0)) {
		fprintf(stderr, "usage: touch [--dirty RATE] MIB READY_FILE | touch --copy MIB "
				"FILE\n");
		return 2;
	}
	/* Whatever fds the caller leaked to us would stop the dump. */
	if (syscall(SYS_close_range, 3, ~0u, 0) < 0)
		die("close_range");
	p = filled(strtoul(argv[1], NULL, 0) << 20);
	fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		die(argv[2]);
	close(fd);
	if (rate > 0)
		dirty(p, strtoul(argv[1], NULL, 0) << 20, rate);
	for (;;)
		pause();
}
