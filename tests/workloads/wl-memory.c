// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-memory: memory of every common kind survives checkpoint and restore.
 *
 * usage: wl-memory [LARGE_MIB]   (default 64)
 *
 * State: a 3 MiB malloc block and small brk-heap blocks, a stack array,
 * anonymous private mappings of several sizes (one with transparent huge
 * pages advised), a read-only mapping, a sparse mapping (most pages never
 * touched), a mapping with PROT_NONE holes, a shared anonymous mapping,
 * a private file mapping with one page modified, a shared file mapping
 * written through, and one large region.  Every byte is PRNG data from a
 * known seed, re-generated and compared after restore; the layout of each
 * region in /proc/self/maps, the brk and the vDSO addresses must be the
 * same; the brk heap must still grow and the shared file mapping must
 * still write through to its file.
 *
 * The large region's address (plus 8000) is published as corrupt_addr for
 * the harness self-test, which corrupts it on purpose.
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NSMALL		48
#define SMALL_BYTES	(8 * 1024)
#define STACK_BYTES	(64 * 1024)
#define PRIV_PAGES	16
#define PRIV_DIRTY_PAGE 3
#define SHARED_PAGES	8
#define SPARSE_PAGES	64
#define SPARSE_STEP	8
#define HOLES_PAGES	16

struct region {
	const char *what;
	unsigned char *addr;
	size_t len;
	uint64_t seed;
};

static struct region regions[64];
static int nregions;

static char maps_before[64 * 1024], maps_after[64 * 1024];

/* SEED 0: the region is checked on its own, not by check_region(). */
static struct region *add_region(const char *what, void *addr, size_t len, uint64_t seed, bool fill)
{
	if (nregions == (int)(sizeof(regions) / sizeof(regions[0])))
		wl_fail("too many regions");
	regions[nregions] = (struct region){what, addr, len, seed};
	if (fill)
		wl_fill(addr, len, seed);
	return &regions[nregions++];
}

static void *map_anon(size_t len, int flags)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | flags, -1, 0);

	if (p == MAP_FAILED)
		wl_fail("mmap %zu bytes: %s", len, strerror(errno));
	return p;
}

static void check_region(const struct region *r)
{
	ssize_t off = wl_cmp_fill(r->addr, r->len, r->seed);

	if (off >= 0)
		wl_fail("%s: byte %zd of %zu (address %p) differs", r->what, off, r->len,
			(void *)(r->addr + off));
}

/* Write LEN bytes of seed SEED to a new file PATH; nothing stays open. */
static void write_file(const char *path, size_t len, uint64_t seed)
{
	unsigned char *buf = malloc(len);
	int fd;

	if (!buf)
		wl_fail("out of memory");
	wl_fill(buf, len, seed);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, buf, len) != (ssize_t)len || close(fd) < 0)
		wl_fail("write %s: %s", path, strerror(errno));
	free(buf);
}

static void *map_file(const char *path, size_t len, int flags)
{
	void *p;
	int fd;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		wl_fail("open %s: %s", path, strerror(errno));
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, fd, 0);
	if (p == MAP_FAILED)
		wl_fail("mmap %s: %s", path, strerror(errno));
	close(fd); /* the mapping keeps the file; the fd must not stay */
	return p;
}

static void read_whole(const char *path, unsigned char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		wl_fail("open %s: %s", path, strerror(errno));
	n = pread(fd, buf, len, 0);
	close(fd);
	if (n != (ssize_t)len)
		wl_fail("read %s: got %zd of %zu bytes", path, n, len);
}

/*
 * One region's VMAs as "start-end perms offset path" lines clipped to
 * [start, end), with adjacent lines that continue each other merged, so
 * that how the kernel happens to split or merge VMAs does not matter.
 * Shared anonymous memory is named [shmem] whatever file backs it.
 */
static void describe(const char *maps, uintptr_t start, uintptr_t end, char *out, size_t size)
{
	uintptr_t ps = 0, pe = 0, poff = 0;
	char pperm[8] = "", ppath[512] = "";
	const char *line;
	size_t used = strlen(out);

	for (line = maps; *line; line = strchrnul(line, '\n'), line += *line ? 1 : 0) {
		unsigned long s, e, off;
		char perm[8], path[512] = "";
		int pos = 0;

		const char *p;

		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s%n", &s, &e, perm, &off, &pos) < 4)
			continue;
		/* The path, if any, after the padding; never past the end of the line
		 * (a " %[^\n]" would skip the newline and read the next line's). */
		for (p = line + pos; *p == ' '; p++)
			;
		snprintf(path, sizeof(path), "%.*s", (int)strcspn(p, "\n"), p);
		if (e <= start || s >= end)
			continue;
		if (s < start) {
			off += start - s;
			s = start;
		}
		if (e > end)
			e = end;
		if (!strncmp(path, "/dev/zero", 9) || !strncmp(path, "/memfd:", 7) ||
		    !strncmp(path, "/SYSV", 5))
			strcpy(path, "[shmem]");
		if (pe == s && !strcmp(perm, pperm) && !strcmp(path, ppath) &&
		    (!path[0] || poff + (pe - ps) == off)) {
			pe = e;
			continue;
		}
		if (pe)
			used += (size_t)snprintf(out + used, size - used, "%lx-%lx %s %lx %s\n",
						 (unsigned long)ps, (unsigned long)pe, pperm,
						 (unsigned long)poff, ppath);
		ps = s, pe = e, poff = off;
		strcpy(pperm, perm);
		strcpy(ppath, path);
	}
	if (pe)
		snprintf(out + used, size - used, "%lx-%lx %s %lx %s\n", (unsigned long)ps,
			 (unsigned long)pe, pperm, (unsigned long)poff, ppath);
	else
		snprintf(out + used, size - used, "%lx-%lx unmapped\n", (unsigned long)start,
			 (unsigned long)end);
}

/* The special mappings ([heap], [vdso], [vvar]...) as they are. */
static void describe_special(const char *maps, char *out, size_t size)
{
	const char *line;
	size_t used = strlen(out);

	for (line = maps; *line; line = strchrnul(line, '\n'), line += *line ? 1 : 0) {
		const char *eol = strchrnul(line, '\n');
		const char *name = memchr(line, '[', (size_t)(eol - line));

		if (name && strncmp(name, "[stack", 6))
			used += (size_t)snprintf(out + used, size - used, "%.*s %.*s\n",
						 (int)strcspn(line, " "), line, (int)(eol - name),
						 name);
	}
}

static void layout(char *out, size_t size)
{
	static char maps[256 * 1024];

	if (wl_read_file("/proc/self/maps", maps, sizeof(maps)) < 0)
		wl_fail("read /proc/self/maps: %s", strerror(errno));
	out[0] = '\0';
	for (int i = 0; i < nregions; i++)
		if (regions[i].len >= WL_PAGE)
			describe(maps, (uintptr_t)regions[i].addr & ~(WL_PAGE - 1),
				 ((uintptr_t)regions[i].addr + regions[i].len + WL_PAGE - 1) &
					 ~(WL_PAGE - 1),
				 out, size);
	describe_special(maps, out, size);
}

static void check_layout(void)
{
	const char *a = maps_before, *b = maps_after;

	layout(maps_after, sizeof(maps_after));
	if (!strcmp(maps_before, maps_after))
		return;
	while (*a && *b && strcspn(a, "\n") == strcspn(b, "\n") &&
	       !strncmp(a, b, strcspn(a, "\n"))) {
		a += strcspn(a, "\n") + 1;
		b += strcspn(b, "\n") + 1;
	}
	wl_fail("memory layout differs: before \"%.*s\", after \"%.*s\"", (int)strcspn(a, "\n"), a,
		(int)strcspn(b, "\n"), b);
}

static void check_private_file(const char *path, unsigned char *map)
{
	size_t len = PRIV_PAGES * WL_PAGE;
	unsigned char *want = malloc(len), *disk = malloc(len);

	if (!want || !disk)
		wl_fail("out of memory");
	wl_fill(want, len, 20);
	read_whole(path, disk, len);
	if (memcmp(disk, want, len))
		wl_fail("private file mapping: the modified page reached %s", path);
	wl_fill(want + PRIV_DIRTY_PAGE * WL_PAGE, WL_PAGE, 21);
	for (size_t i = 0; i < len; i++)
		if (map[i] != want[i])
			wl_fail("private file mapping: byte %zu (page %zu) differs", i,
				i / WL_PAGE);
	free(want);
	free(disk);
}

static void check_shared_file(const char *path, unsigned char *map)
{
	size_t len = SHARED_PAGES * WL_PAGE;
	unsigned char *disk = malloc(len);
	ssize_t off;

	if (!disk)
		wl_fail("out of memory");
	off = wl_cmp_fill(map, len, 22);
	if (off >= 0)
		wl_fail("shared file mapping: byte %zd differs", off);
	read_whole(path, disk, len);
	if (memcmp(disk, map, len))
		wl_fail("shared file mapping: %s differs from the mapping", path);
	/* Still shared: a write through the mapping reaches the file. */
	wl_fill(map, WL_PAGE, 23);
	if (msync(map, len, MS_SYNC) < 0)
		wl_fail("msync: %s", strerror(errno));
	read_whole(path, disk, len);
	if (memcmp(disk, map, WL_PAGE))
		wl_fail("shared file mapping: a write after restore did not reach %s "
			"(restored as a private copy?)",
			path);
	free(disk);
}

static void check_sparse(unsigned char *p)
{
	for (size_t pg = 0; pg < SPARSE_PAGES; pg++) {
		ssize_t off =
			pg % SPARSE_STEP ? -1 : wl_cmp_fill(p + pg * WL_PAGE, WL_PAGE, 300 + pg);

		if (off >= 0)
			wl_fail("sparse mapping: page %zu byte %zd differs", pg, off);
		if (pg % SPARSE_STEP == 0)
			continue;
		for (size_t i = 0; i < WL_PAGE; i++)
			if (p[pg * WL_PAGE + i])
				wl_fail("sparse mapping: untouched page %zu is not zero", pg);
	}
}

static void check_brk(void *brk0, void *sbrk0)
{
	void *now = (void *)syscall(SYS_brk, 0), *grown;
	unsigned char *p = now;

	if (now != brk0)
		wl_fail("brk is %p, was %p", now, brk0);
	if (sbrk(0) != sbrk0)
		wl_fail("sbrk(0) is %p, was %p", sbrk(0), sbrk0);
	/* The kernel's idea of the heap must match: it can still grow. */
	grown = (void *)syscall(SYS_brk, p + 64 * 1024);
	if (grown != p + 64 * 1024)
		wl_fail("brk cannot grow after restore (%p, wanted %p)", grown,
			(void *)(p + 65536));
	wl_fill(p, 64 * 1024, 99);
	if (wl_cmp_fill(p, 64 * 1024, 99) >= 0)
		wl_fail("the grown heap does not keep its contents");
	syscall(SYS_brk, now);
}

int main(int argc, char **argv)
{
	unsigned char stack_area[STACK_BYTES];
	size_t large = (argc > 1 ? strtoul(argv[1], NULL, 0) : 64) << 20;
	char priv_path[4096], shared_path[4096];
	unsigned char *p, *priv, *shared, *sparse, *holes;
	void *brk0, *sbrk0;
	int i;

	wl_init("memory");
	if (!large)
		wl_fail("usage: wl-memory [LARGE_MIB]");

	p = malloc(3 << 20);
	if (!p)
		wl_fail("out of memory");
	add_region("malloc 3 MiB", p, 3 << 20, 1, true);
	for (i = 0; i < NSMALL; i++) {
		p = malloc(SMALL_BYTES);
		if (!p)
			wl_fail("out of memory");
		add_region("small heap block", p, SMALL_BYTES, 100 + (uint64_t)i, true);
	}
	add_region("stack array", stack_area, sizeof(stack_area), 2, true);

	add_region("anon 1 page", map_anon(WL_PAGE, MAP_PRIVATE), WL_PAGE, 10, true);
	add_region("anon 16 pages", map_anon(16 * WL_PAGE, MAP_PRIVATE), 16 * WL_PAGE, 11, true);
	add_region("anon 257 pages", map_anon(257 * WL_PAGE, MAP_PRIVATE), 257 * WL_PAGE, 12, true);
	p = map_anon(8 << 20, MAP_PRIVATE);
	madvise(p, 8 << 20, MADV_HUGEPAGE);
	add_region("anon 8 MiB, huge pages advised", p, 8 << 20, 13, true);

	p = map_anon(8 * WL_PAGE, MAP_PRIVATE);
	add_region("read-only", p, 8 * WL_PAGE, 14, true);
	if (mprotect(p, 8 * WL_PAGE, PROT_READ) < 0)
		wl_fail("mprotect: %s", strerror(errno));

	sparse = map_anon(SPARSE_PAGES * WL_PAGE, MAP_PRIVATE);
	for (size_t pg = 0; pg < SPARSE_PAGES; pg += SPARSE_STEP)
		wl_fill(sparse + pg * WL_PAGE, WL_PAGE, 300 + pg);

	holes = map_anon(HOLES_PAGES * WL_PAGE, MAP_PRIVATE);
	wl_fill(holes, HOLES_PAGES * WL_PAGE, 15);
	add_region("PROT_NONE holes", holes, HOLES_PAGES * WL_PAGE, 0, false);
	if (mprotect(holes + 4 * WL_PAGE, 4 * WL_PAGE, PROT_NONE) < 0 ||
	    mprotect(holes + 10 * WL_PAGE, WL_PAGE, PROT_NONE) < 0)
		wl_fail("mprotect: %s", strerror(errno));

	add_region("shared anonymous", map_anon(8 * WL_PAGE, MAP_SHARED), 8 * WL_PAGE, 16, true);

	snprintf(priv_path, sizeof(priv_path), "%s/wl-memory-private.dat", wl_tmpdir());
	write_file(priv_path, PRIV_PAGES * WL_PAGE, 20);
	priv = map_file(priv_path, PRIV_PAGES * WL_PAGE, MAP_PRIVATE);
	wl_fill(priv + PRIV_DIRTY_PAGE * WL_PAGE, WL_PAGE, 21);
	add_region("private file mapping", priv, PRIV_PAGES * WL_PAGE, 0, false);

	snprintf(shared_path, sizeof(shared_path), "%s/wl-memory-shared.dat", wl_tmpdir());
	write_file(shared_path, SHARED_PAGES * WL_PAGE, 0);
	shared = map_file(shared_path, SHARED_PAGES * WL_PAGE, MAP_SHARED);
	wl_fill(shared, SHARED_PAGES * WL_PAGE, 22);
	if (msync(shared, SHARED_PAGES * WL_PAGE, MS_SYNC) < 0)
		wl_fail("msync: %s", strerror(errno));
	add_region("shared file mapping", shared, SHARED_PAGES * WL_PAGE, 0, false);

	p = map_anon(large, MAP_PRIVATE);
	add_region("large region", p, large, 17, true);
	add_region("sparse", sparse, SPARSE_PAGES * WL_PAGE, 0, false);

	brk0 = (void *)syscall(SYS_brk, 0);
	sbrk0 = sbrk(0);
	wl_publish("corrupt_addr", "%p", (void *)(p + 8000));
	layout(maps_before, sizeof(maps_before));

	wl_ready();
	wl_wait_verify();

	check_layout();
	check_brk(brk0, sbrk0);
	for (i = 0; i < nregions; i++)
		if (regions[i].seed)
			check_region(&regions[i]);
	check_sparse(sparse);
	if (mprotect(holes, HOLES_PAGES * WL_PAGE, PROT_READ | PROT_WRITE) < 0)
		wl_fail("mprotect: %s", strerror(errno));
	check_region(&(struct region){"PROT_NONE holes", holes, HOLES_PAGES * WL_PAGE, 15});
	check_private_file(priv_path, priv);
	check_shared_file(shared_path, shared);
	wl_note("%d regions, %zu MiB large region: all equal", nregions, large >> 20);
	return 0;
}
