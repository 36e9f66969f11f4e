// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-live: a program that writes all the time, for crf dump --leave-running
 * --live (tests/e2e/live.sh, docs/live.md).
 *
 *   wl-live CTL MIB [normal|unmap-unsaved|uffd]
 *
 * A region of MIB MiB (a power of two) holds one record per page: sequence
 * number s lives in page s * K % N (K odd: every page in turn, scattered
 * over the region, so that the program's writes run ahead of crf's copy
 * and behind it), the page filled with pattern(s) (by memcpy, or every 16th
 * through read(2) from a pipe: a write by the kernel), and `last` says the
 * newest s.  An s is written every ~2 us.  Between two iterations every
 * page i holds the one s <= last with s * K % N == i and s > last - N: the
 * state of one instant, checked byte for byte.
 *
 CTL is a path prefix: the program makes CTL.ready once set up, is armed
 * by CTL.arm and asked to verify by CTL.verify (every 16th iteration looks),
 * makes CTL.events once the events below ran and writes its verdict to
 * CTL.verdict ("ok: ..." or "FAIL: ...").  Armed, the first pause of the
 * loop in which it slept (the freeze) is followed by events in
 * the middle of the live copy: M1 written then unmapped, M2 moved by mremap
 * then written at its new place, M3 written then discarded (MADV_DONTNEED);
 * unmap-unsaved instead unmaps the region U, never written, at once (the
 * dump must fail).  uffd: the program holds a userfaultfd of its own.
 * Verify: the region as above; and M1..M3 as they were at the snapshot
 * (events not run: a restored program) or as the events left them (the
 * original); then exit 0, or 1 after writing why.
 */
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PAGE	4096UL
#define SMALL	(64 * PAGE)
#define U_BYTES (32UL << 20)

static const char *ctl;
static char *region, *m1, *m2, *m3, *m2_new, *u;
static size_t n_pages;
static const uint64_t K = 0x9e3779b97f4a7c15ull; /* odd */
static uint64_t k_inv;				 /* K * k_inv == 1 mod 2^64 */

static size_t page_of(uint64_t s)
{
	return (size_t)((s * K) & (n_pages - 1));
}
static int pfd[2];

/* Sleeps of this thread: a ptrace-stop (the freeze) is one; this loop has no other. */
static long sleeps(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru) < 0)
		return 0;
	return ru.ru_nvcsw;
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Make CTL.@what holding @a@b. */
static void touch(const char *what, const char *a, const char *b)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s.%s", ctl, what);
	f = fopen(path, "we");
	if (!f)
		return;
	fprintf(f, "%s%s\n", a, b);
	fclose(f);
}

static bool exists(const char *what)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s.%s", ctl, what);
	return access(path, F_OK) == 0;
}

static _Noreturn void verdict(char v, const char *fmt, ...)
{
	char msg[256], path[4096], to[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "wl-live: %s%s\n", v == 'o' ? "" : "FAIL: ", msg);
	touch("verdict.tmp", v == 'o' ? "ok: " : "FAIL: ", msg);
	snprintf(path, sizeof(path), "%s.verdict.tmp", ctl);
	snprintf(to, sizeof(to), "%s.verdict", ctl);
	rename(path, to);
	exit(v == 'o' ? 0 : 1);
}

/* Word k of the page of sequence number @s. */
static uint64_t word(uint64_t s, size_t k)
{
	uint64_t x = s * 0x9e3779b97f4a7c15ull + k;

	x ^= x >> 31;
	return x * 0xbf58476d1ce4e5b9ull;
}

static void pattern(uint64_t *p, uint64_t s)
{
	for (size_t k = 0; k < PAGE / 8; k++)
		p[k] = word(s, k);
}

static void fill(char *p, size_t len, uint64_t seed)
{
	for (size_t off = 0; off < len; off += PAGE)
		pattern((uint64_t *)(p + off), seed + off / PAGE);
}

static void check_fill(const char *what, const char *p, size_t len, uint64_t seed)
{
	uint64_t want[PAGE / 8];

	for (size_t off = 0; off < len; off += PAGE) {
		pattern(want, seed + off / PAGE);
		if (memcmp(p + off, want, PAGE))
			verdict('f', "%s: page %zu is not the one expected (seed %llu)", what,
				off / PAGE, (unsigned long long)seed);
	}
}

static void check_zero(const char *what, const char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i])
			verdict('f', "%s: byte %zu is not zero after MADV_DONTNEED", what, i);
}

/* Every page holds the newest s <= @last of its own, byte for byte. */
static void check_region(uint64_t last)
{
	uint64_t want[PAGE / 8];

	for (size_t i = 0; i < n_pages; i++) {
		uint64_t r = ((uint64_t)i * k_inv) & (n_pages - 1);
		uint64_t s = last - ((last - r) & (n_pages - 1));

		pattern(want, s);
		if (memcmp(region + i * PAGE, want, PAGE))
			verdict('f',
				"page %zu does not hold seq %llu, the newest of its own at seq "
				"%llu: not the state of one instant",
				i, (unsigned long long)s, (unsigned long long)last);
	}
}

static void write_seq(uint64_t s)
{
	char *page = region + page_of(s) * PAGE;
	uint64_t tmp[PAGE / 8];
	ssize_t n;

	if (s % 16) {
		pattern((uint64_t *)page, s);
		return;
	}
	/* The kernel writes this one (copy_to_user): a fault crf must take too. */
	pattern(tmp, s);
	if (write(pfd[1], tmp, PAGE) != (ssize_t)PAGE)
		verdict('f', "write to the pipe: %s", strerror(errno));
	n = read(pfd[0], page, PAGE);
	if (n != (ssize_t)PAGE)
		verdict('f', "read from the pipe: %zd (%s)", n, strerror(errno));
}

/* In the middle of the live copy. */
static void events(void)
{
	fill(m1, SMALL, 5000);
	if (munmap(m1, SMALL))
		verdict('f', "munmap M1: %s", strerror(errno));
	if (mremap(m2, SMALL, SMALL, MREMAP_MAYMOVE | MREMAP_FIXED, m2_new) != m2_new)
		verdict('f', "mremap M2: %s", strerror(errno));
	fill(m2_new, SMALL / 2, 6000);
	fill(m3, SMALL, 7000);
	if (madvise(m3, SMALL, MADV_DONTNEED))
		verdict('f', "madvise M3: %s", strerror(errno));
}

static char *map_anon(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("wl-live: mmap");
		exit(2);
	}
	return p;
}

static void own_uffd(void)
{
	struct uffdio_api api = {.api = UFFD_API};
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (fd < 0 || ioctl(fd, UFFDIO_API, &api) < 0) {
		perror("wl-live: userfaultfd");
		exit(2);
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 3 ? argv[3] : "normal";
	bool unsaved = !strcmp(mode, "unmap-unsaved");
	uint64_t last, prev, t, next;
	bool done = false, armed = false;
	long slept = 0;
	char cmd = 'r';

	if (argc < 3) {
		fprintf(stderr, "usage: wl-live CTL MIB [normal|unmap-unsaved|uffd]\n");
		return 2;
	}
	ctl = argv[1];
	/* Mapped first: highest, so copied last. */
	u = map_anon(U_BYTES);
	fill(u, U_BYTES, 9000);
	n_pages = strtoul(argv[2], NULL, 10) * (1 << 20) / PAGE;
	if (!n_pages || (n_pages & (n_pages - 1))) {
		fprintf(stderr, "wl-live: MIB must be a power of two\n");
		return 2;
	}
	/* Newton's iteration: each step doubles the bits of the inverse that are right. */
	k_inv = K;
	for (int i = 0; i < 6; i++)
		k_inv *= 2 - K * k_inv;
	region = map_anon(n_pages * PAGE);
	m1 = map_anon(SMALL);
	m2 = map_anon(SMALL);
	m3 = map_anon(SMALL);
	m2_new = map_anon(SMALL);
	fill(m1, SMALL, 1000);
	fill(m2, SMALL, 2000);
	fill(m3, SMALL, 3000);
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		perror("wl-live: pipe");
		return 2;
	}
	if (!strcmp(mode, "uffd"))
		own_uffd();
	for (last = 1; last <= n_pages; last++)
		write_seq(last);
	last = n_pages;
	touch("ready", "", "");
	prev = now_ns();
	for (;;) {
		t = now_ns();
		/* After a pause (a restore too) the harness's word is read first. */
		if (last % 16 == 0 || t - prev > 1000000)
			cmd = exists("verify") ? 'v' : exists("arm") ? 'a' : 'r';
		if (cmd == 'v') {
			check_region(last);
			if (done && !unsaved) {
				check_fill("M2 moved", m2_new, SMALL / 2, 6000);
				check_fill("M2 moved, not written", m2_new + SMALL / 2, SMALL / 2,
					   2000 + SMALL / 2 / PAGE);
				check_zero("M3", m3, SMALL);
			} else if (!done) {
				check_fill("M1", m1, SMALL, 1000);
				check_fill("M2", m2, SMALL, 2000);
				check_fill("M3", m3, SMALL, 3000);
				check_fill("U", u, U_BYTES, 9000);
			}
			verdict('o', "%zu pages at seq %llu, events %s: one instant", n_pages,
				(unsigned long long)last, done ? "run" : "not run");
		}
		if (cmd == 'a' && !armed) {
			armed = true;
			slept = sleeps();
		}
		/*
		 * A pause of the loop in which it slept (the freeze, not a
		 * preemption) while armed: now the live copy runs.
		 */
		if (armed && !done && t - prev > 1000000 && sleeps() > slept) {
			done = true;
			if (unsaved) {
				if (munmap(u, U_BYTES))
					verdict('f', "munmap U: %s", strerror(errno));
			} else {
				events();
			}
			touch("events", "", "");
		}
		write_seq(last + 1);
		last++;
		prev = t;
		next = t + 2000;
		while (now_ns() < next)
			;
	}
}
