// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-cow: private pages a parent, its child and its grandchild still share
 * copy-on-write after fork stay shared across checkpoint and restore, and
 * the ones any of them wrote stay their own.
 *
 * State: the parent fills a private anonymous mapping of PAGES pages and
 * forks the child; the child writes pages CHILD_W, drops pages CHILD_D
 * (MADV_DONTNEED: zero for it) and forks the grandchild, which writes pages
 * GRAND_W; after the fork the parent writes pages PARENT_W.  The other pages
 * are one page frame for all three (the parent checks that before the dump
 * too, so that the test stands on real sharing).
 *
 * Verify: the parent reads the three processes' pagemap entries (as root:
 * with page frame numbers) and fails unless every page none of them wrote
 * is one frame in all, and every page one of them wrote is its own; it
 * notes the Rss and Pss of the mapping in each process from smaps, before
 * the dump and now (docs/dump-restore.md quotes them).  Then each process
 * checks its own bytes, and the parent collects the verdicts.
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGES	 256
#define PFN_MASK ((1ULL << 55) - 1)
#define PRESENT	 (1ULL << 63)

enum who { PARENT, CHILD, GRAND };

/* Pages each writes after the fork that made the next, and those the child drops. */
static const int parent_w[] = {40, 41, 200};
static const int child_w[] = {10, 11, 12, 13, 100};
static const int child_d[] = {20, 21};
static const int grand_w[] = {30, 31};

#define IN(set, pg) in_set(set, sizeof(set) / sizeof(set[0]), pg)

struct sync {
	volatile int ready; /* processes set up */
	volatile int go;    /* 1: the children check their bytes and exit */
	pid_t pids[3];
};

static unsigned char *mem;
static struct sync *sync_page;

static bool in_set(const int *set, size_t n, int pg)
{
	for (size_t i = 0; i < n; i++)
		if (set[i] == pg)
			return true;
	return false;
}

static void write_pages(const int *set, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++)
		wl_fill(mem + set[i] * WL_PAGE, WL_PAGE, seed + set[i]);
}

/* What page @pg must hold in process @w: its seed, or 0 for zero. */
static uint64_t seed_of(enum who w, int pg)
{
	if (w == PARENT && IN(parent_w, pg))
		return 0x9a0000 + pg;
	if (w != PARENT && IN(child_d, pg))
		return 0;
	if (w != PARENT && IN(child_w, pg))
		return 0xc10000 + pg;
	if (w == GRAND && IN(grand_w, pg))
		return 0x6a0000 + pg;
	return 0xa11000 + pg;
}

static void check_bytes(enum who w)
{
	static const unsigned char zero[WL_PAGE];

	for (int pg = 0; pg < PAGES; pg++) {
		uint64_t seed = seed_of(w, pg);
		const unsigned char *p = mem + pg * WL_PAGE;

		if (seed ? wl_cmp_fill(p, WL_PAGE, seed) >= 0 : memcmp(p, zero, WL_PAGE) != 0)
			wl_fail("process %d: page %d of the mapping differs", (int)w, pg);
	}
}

static void pagemap(pid_t pid, uint64_t *e)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || pread(fd, e, PAGES * 8, (off_t)((uintptr_t)mem / WL_PAGE * 8)) != PAGES * 8)
		wl_fail("read %s: %s", path, strerror(errno));
	close(fd);
}

static bool same(uint64_t a, uint64_t b)
{
	return (a & PRESENT) && (b & PRESENT) && (a & PFN_MASK) && (a & PFN_MASK) == (b & PFN_MASK);
}

/* Every page is shared where no one wrote it, and private where one did. */
static void check_sharing(const char *when)
{
	static uint64_t e[3][PAGES];

	for (int w = 0; w < 3; w++)
		pagemap(sync_page->pids[w], e[w]);
	for (int pg = 0; pg < PAGES; pg++) {
		bool pc = !IN(parent_w, pg) && !IN(child_w, pg) && !IN(child_d, pg);
		bool cg = !IN(grand_w, pg) && !IN(child_d, pg);

		if (same(e[PARENT][pg], e[CHILD][pg]) != pc)
			wl_fail("%s: page %d %s parent and child", when, pg,
				pc ? "is not shared by" : "is shared by");
		if (same(e[CHILD][pg], e[GRAND][pg]) != cg)
			wl_fail("%s: page %d %s child and grandchild", when, pg,
				cg ? "is not shared by" : "is shared by");
	}
}

/* Rss and Pss of the mapping in @pid, in KiB. */
static void usage(pid_t pid, long *rss, long *pss)
{
	static char text[256 * 1024];
	char path[64], key[32];
	const char *at;

	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	if (wl_read_file(path, text, sizeof(text)) < 0)
		wl_fail("read %s: %s", path, strerror(errno));
	snprintf(key, sizeof(key), "%lx-", (unsigned long)(uintptr_t)mem);
	at = strstr(text, key);
	if (!at || !strstr(at, "\nRss:") || !strstr(at, "\nPss:"))
		wl_fail("%s: no mapping at %p", path, (void *)mem);
	*rss = atol(strstr(at, "\nRss:") + 5);
	*pss = atol(strstr(at, "\nPss:") + 5);
}

static void note_usage(const char *when)
{
	static const char *const names[] = {"parent", "child", "grandchild"};
	long rss, pss, total = 0;
	char line[256];
	int n = 0;

	for (int w = 0; w < 3; w++) {
		usage(sync_page->pids[w], &rss, &pss);
		total += pss;
		n += snprintf(line + n, sizeof(line) - n, "%s Rss %ld Pss %ld, ", names[w], rss,
			      pss);
	}
	wl_note("%s: %s Pss of the three %ld KiB (%d KiB mapped each)", when, line, total,
		(int)(PAGES * WL_PAGE / 1024));
}

static void wait_go(void)
{
	while (!sync_page->go) {
		usleep(10000);
		if (getppid() == 1)
			_exit(1);
	}
}

static _Noreturn void grandchild(void)
{
	write_pages(grand_w, sizeof(grand_w) / sizeof(grand_w[0]), 0x6a0000);
	sync_page->pids[GRAND] = getpid();
	__atomic_add_fetch(&sync_page->ready, 1, __ATOMIC_SEQ_CST);
	wait_go();
	check_bytes(GRAND);
	exit(0);
}

static _Noreturn void child(void)
{
	pid_t g;
	int st;

	write_pages(child_w, sizeof(child_w) / sizeof(child_w[0]), 0xc10000);
	for (size_t i = 0; i < sizeof(child_d) / sizeof(child_d[0]); i++)
		if (madvise(mem + child_d[i] * WL_PAGE, WL_PAGE, MADV_DONTNEED) < 0)
			wl_fail("madvise: %s", strerror(errno));
	sync_page->pids[CHILD] = getpid();
	g = fork();
	if (g < 0)
		wl_fail("fork: %s", strerror(errno));
	if (g == 0)
		grandchild();
	__atomic_add_fetch(&sync_page->ready, 1, __ATOMIC_SEQ_CST);
	wait_go();
	check_bytes(CHILD);
	if (waitpid(g, &st, 0) != g || !WIFEXITED(st) || WEXITSTATUS(st))
		wl_fail("the grandchild failed (%#x)", st);
	exit(0);
}

int main(void)
{
	pid_t c;
	int st;

	wl_init("cow");
	sync_page = mmap(NULL, WL_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	mem = mmap(NULL, PAGES * WL_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		   0);
	if (sync_page == MAP_FAILED || mem == MAP_FAILED)
		wl_fail("mmap: %s", strerror(errno));
	for (int pg = 0; pg < PAGES; pg++)
		wl_fill(mem + pg * WL_PAGE, WL_PAGE, 0xa11000 + pg);
	sync_page->pids[PARENT] = getpid();
	c = fork();
	if (c < 0)
		wl_fail("fork: %s", strerror(errno));
	if (c == 0)
		child();
	write_pages(parent_w, sizeof(parent_w) / sizeof(parent_w[0]), 0x9a0000);
	while (__atomic_load_n(&sync_page->ready, __ATOMIC_SEQ_CST) < 2)
		usleep(1000);
	check_sharing("before the dump");
	note_usage("before the dump");
	wl_ready();
	wl_wait_verify();
	note_usage("now");
	check_sharing("now");
	check_bytes(PARENT);
	sync_page->go = 1;
	if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st))
		wl_fail("the child failed (%#x)", st);
	wl_note("%d pages shared or private as they were, in three processes", PAGES);
	return 0;
}
