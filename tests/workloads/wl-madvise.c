// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-madvise: the VmFlags a program can set on its mappings survive
 * checkpoint and restore, flag for flag, with the contents byte for byte.
 *
 * State: one anonymous mapping per flag a program sets - MADV_DONTFORK
 * ("dc"), MADV_WIPEONFORK ("wf"), MADV_DONTDUMP ("dd"), MADV_HUGEPAGE
 * ("hg"), MADV_NOHUGEPAGE ("nh"), MADV_MERGEABLE ("mg"), MADV_SEQUENTIAL
 * ("sr"), MADV_RANDOM ("rr"), mlock() ("lo"), mlock2(MLOCK_ONFAULT) with
 * some pages never touched ("lo lf"), MAP_LOCKED, MAP_NORESERVE ("nr"),
 * MAP_DROPPABLE ("dp"), mseal() ("sl"), guard regions ("gu"), and one
 * whose guard was removed again ("gu" alone) - a mapping split in three by
 * advice on its middle pages, and three read-only ones whose accounting
 * ("ac") differs: written and then made read-only (charged), never written
 * (not charged), and read-only from the start with data written through
 * /proc/self/mem (not charged).  Last, mlockall(MCL_FUTURE | MCL_ONFAULT).
 *
 * Verify: every mapping of the process (not only these) has the maps line
 * and VmFlags it had, every region its bytes; the pages of the lock-on-fault
 * mapping never touched are still not resident, the guard pages are guards
 * (pagemap bit 58, and /proc/self/mem cannot read them), the sealed
 * mapping cannot be unmapped, a child forked now sees zeros in the
 * WIPEONFORK mapping, and a mapping made now is locked on fault.
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MAP_DROPPABLE
#define MAP_DROPPABLE 0x08
#endif
#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#define MADV_GUARD_REMOVE  103
#endif
#ifndef SYS_mseal
#define SYS_mseal 462
#endif
#define PM_GUARD (1ULL << 58)

#define PAGES 8

enum { LOCK_ONFAULT_TOUCHED = 3, GUARD_FIRST = 2, GUARD_PAGES = 3 };

struct region {
	const char *what;
	unsigned char *addr;
	uint64_t seed;
};

static struct region regions[32];
static int nregions;
static unsigned char *onfault, *guarded, *sealed, *wiped;
static unsigned char guarded_copy[PAGES * WL_PAGE]; /* its bytes before the guards */

/* smaps as it was and as it is: 64 KiB is far more than this process has. */
static char smaps_before[256 * 1024], smaps_after[256 * 1024];

static unsigned char *map(int flags, int prot)
{
	void *p = mmap(NULL, PAGES * WL_PAGE, prot, flags | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		wl_fail("mmap flags %#x: %s", flags, strerror(errno));
	return p;
}

static unsigned char *add(const char *what, unsigned char *p, bool fill)
{
	regions[nregions] = (struct region){what, p, fill ? 0x5eed0000u + nregions : 0};
	if (fill)
		wl_fill(p, PAGES * WL_PAGE, regions[nregions].seed);
	nregions++;
	return p;
}

static void advise(const char *what, int advice)
{
	unsigned char *p = add(what, map(MAP_PRIVATE, PROT_READ | PROT_WRITE), true);

	if (madvise(p, PAGES * WL_PAGE, advice) < 0)
		wl_fail("madvise %s: %s", what, strerror(errno));
}

/* Write @len bytes of @seed at @p, read-only memory, as a debugger would. */
static void force_write(unsigned char *p, size_t len, uint64_t seed)
{
	unsigned char *buf = malloc(len);
	int fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);

	if (!buf || fd < 0)
		wl_fail("/proc/self/mem: %s", strerror(errno));
	wl_fill(buf, len, seed);
	if (pwrite(fd, buf, len, (off_t)(uintptr_t)p) != (ssize_t)len)
		wl_fail("write /proc/self/mem: %s", strerror(errno));
	close(fd);
	free(buf);
}

static void setup_accounting(void)
{
	unsigned char *p;

	/* Charged while writable: "ac" stays after mprotect. */
	p = add("written, then read-only", map(MAP_PRIVATE, PROT_READ | PROT_WRITE), true);
	if (mprotect(p, PAGES * WL_PAGE, PROT_READ) < 0)
		wl_fail("mprotect: %s", strerror(errno));
	/* Charged, dropped, read-only: no page but its anon_vma keeps "ac". */
	p = map(MAP_PRIVATE, PROT_READ | PROT_WRITE);
	memset(p, 1, PAGES * WL_PAGE);
	if (madvise(p, PAGES * WL_PAGE, MADV_DONTNEED) < 0 ||
	    mprotect(p, PAGES * WL_PAGE, PROT_READ) < 0)
		wl_fail("madvise/mprotect: %s", strerror(errno));
	add("dropped, then read-only", p, false);
	/* Never had a page: the kernel takes "ac" back at mprotect. */
	p = map(MAP_PRIVATE, PROT_READ | PROT_WRITE);
	if (mprotect(p, PAGES * WL_PAGE, PROT_READ) < 0)
		wl_fail("mprotect: %s", strerror(errno));
	add("never written, read-only", p, false);
	/* Never writable, never charged, yet holding data of its own. */
	p = add("read-only, written by force", map(MAP_PRIVATE, PROT_READ), false);
	regions[nregions - 1].seed = 0xf0ace;
	force_write(p, PAGES * WL_PAGE, 0xf0ace);
}

static void setup_locks(void)
{
	unsigned char *p;

	p = add("mlock", map(MAP_PRIVATE, PROT_READ | PROT_WRITE), true);
	if (mlock(p, PAGES * WL_PAGE) < 0)
		wl_fail("mlock: %s", strerror(errno));
	onfault = map(MAP_PRIVATE, PROT_READ | PROT_WRITE);
	if (mlock2(onfault, PAGES * WL_PAGE, MLOCK_ONFAULT) < 0)
		wl_fail("mlock2: %s", strerror(errno));
	wl_fill(onfault, LOCK_ONFAULT_TOUCHED * WL_PAGE, 0x0f);
	add("MAP_LOCKED", map(MAP_PRIVATE | MAP_LOCKED, PROT_READ | PROT_WRITE), true);
}

static void setup_guards(void)
{
	unsigned char *p;

	guarded = add("guard regions", map(MAP_PRIVATE, PROT_READ | PROT_WRITE), false);
	wl_fill(guarded, PAGES * WL_PAGE, 0x9a4d);
	memcpy(guarded_copy, guarded, sizeof(guarded_copy));
	if (madvise(guarded + GUARD_FIRST * WL_PAGE, GUARD_PAGES * WL_PAGE, MADV_GUARD_INSTALL) < 0)
		wl_fail("MADV_GUARD_INSTALL: %s", strerror(errno));
	p = add("guard removed", map(MAP_PRIVATE, PROT_READ), false);
	if (madvise(p, WL_PAGE, MADV_GUARD_INSTALL) < 0 ||
	    madvise(p, WL_PAGE, MADV_GUARD_REMOVE) < 0)
		wl_fail("MADV_GUARD_INSTALL/REMOVE: %s", strerror(errno));
}

static void setup(void)
{
	unsigned char *p;

	advise("MADV_DONTFORK", MADV_DONTFORK);
	advise("MADV_WIPEONFORK", MADV_WIPEONFORK);
	wiped = regions[nregions - 1].addr;
	advise("MADV_DONTDUMP", MADV_DONTDUMP);
	advise("MADV_HUGEPAGE", MADV_HUGEPAGE);
	advise("MADV_NOHUGEPAGE", MADV_NOHUGEPAGE);
	advise("MADV_MERGEABLE", MADV_MERGEABLE);
	advise("MADV_SEQUENTIAL", MADV_SEQUENTIAL);
	advise("MADV_RANDOM", MADV_RANDOM);
	p = add("split by advice", map(MAP_PRIVATE, PROT_READ | PROT_WRITE), true);
	if (madvise(p + 2 * WL_PAGE, 3 * WL_PAGE, MADV_DONTDUMP) < 0 ||
	    madvise(p + 3 * WL_PAGE, WL_PAGE, MADV_RANDOM) < 0)
		wl_fail("madvise split: %s", strerror(errno));
	add("MAP_NORESERVE", map(MAP_PRIVATE | MAP_NORESERVE, PROT_READ | PROT_WRITE), true);
	add("MAP_DROPPABLE", map(MAP_DROPPABLE, PROT_READ | PROT_WRITE), true);
	sealed = add("mseal", map(MAP_PRIVATE, PROT_READ | PROT_WRITE), true);
	if (syscall(SYS_mseal, sealed, PAGES * WL_PAGE, 0) < 0)
		wl_fail("mseal: %s", strerror(errno));
	setup_accounting();
	setup_locks();
	setup_guards();
}

/*
 * One line per mapping of @text (smaps): the maps line without device and
 * inode, then its VmFlags.  Into @out.
 */
static void summarize(const char *text, char *out, size_t size)
{
	size_t n = 0;

	for (const char *l = text; *l; l = strchrnul(l, '\n') + (*strchrnul(l, '\n') != 0)) {
		char line[512], range[40], perms[8], off[20], dev[16], name[256] = "";
		int len = (int)(strchrnul(l, '\n') - l);
		unsigned long ino;

		snprintf(line, sizeof(line), "%.*s", len, l);
		if (!strncmp(line, "VmFlags:", 8))
			n += snprintf(out + n, size - n, " [%s]\n", line + 8);
		else if (sscanf(line, "%39s %7s %19s %15s %lu %255[^\n]", range, perms, off, dev,
				&ino, name) >= 5 &&
			 strchr(range, '-'))
			n += snprintf(out + n, size - n, "%s %s %s %s", range, perms, off, name);
		if (n >= size)
			wl_fail("smaps summary too long");
	}
}

static void read_smaps(char *out, size_t size)
{
	static char text[sizeof(smaps_before) * 8];

	if (wl_read_file("/proc/self/smaps", text, sizeof(text)) < 0)
		wl_fail("read /proc/self/smaps: %s", strerror(errno));
	summarize(text, out, size);
}

/* The first line that differs, for the message. */
static void compare_smaps(void)
{
	const char *a = smaps_before, *b = smaps_after;

	while (*a && *b) {
		size_t la = strchrnul(a, '\n') - a, lb = strchrnul(b, '\n') - b;

		if (la != lb || memcmp(a, b, la))
			wl_fail("mapping changed: '%.*s' is now '%.*s'", (int)la, a, (int)lb, b);
		a += la + (a[la] != 0);
		b += lb + (b[lb] != 0);
	}
	if (*a || *b)
		wl_fail("mappings changed: '%.80s' / '%.80s' left over", a, b);
}

static uint64_t pagemap_entry(const void *p)
{
	uint64_t e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);

	if (fd < 0 || pread(fd, &e, sizeof(e), (off_t)((uintptr_t)p / WL_PAGE * 8)) != sizeof(e))
		wl_fail("read pagemap: %s", strerror(errno));
	close(fd);
	return e;
}

/* The guard pages are guards again, the others hold their bytes. */
static void check_guards(void)
{
	int fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
	char c;

	if (fd < 0)
		wl_fail("open /proc/self/mem: %s", strerror(errno));
	for (int i = 0; i < PAGES; i++) {
		bool guard = i >= GUARD_FIRST && i < GUARD_FIRST + GUARD_PAGES;
		const unsigned char *p = guarded + i * WL_PAGE;
		bool is = pagemap_entry(p) & PM_GUARD;
		ssize_t n = pread(fd, &c, 1, (off_t)(uintptr_t)p);

		if (is != guard || (n == 1) == guard)
			wl_fail("page %d of the guarded mapping %s a guard (pagemap: %s, read: "
				"%zd)",
				i, guard ? "is not" : "is", is ? "guard" : "not", n);
		if (!guard && memcmp(p, guarded_copy + i * WL_PAGE, WL_PAGE))
			wl_fail("page %d of the guarded mapping differs", i);
	}
	close(fd);
}

static void check_contents(void)
{
	for (int i = 0; i < nregions; i++) {
		const struct region *r = &regions[i];
		ssize_t off;

		if (!r->seed)
			continue;
		off = wl_cmp_fill(r->addr, PAGES * WL_PAGE, r->seed);
		if (off >= 0)
			wl_fail("%s: byte %zd differs", r->what, off);
	}
	if (wl_cmp_fill(onfault, LOCK_ONFAULT_TOUCHED * WL_PAGE, 0x0f) >= 0)
		wl_fail("lock-on-fault mapping: its contents differ");
}

/* Whether the VmFlags of the mapping at @p in @summary hold " @flags ". */
static bool has_flags(const char *summary, const void *p, const char *flags)
{
	char key[40];
	const char *at, *eol;

	snprintf(key, sizeof(key), "%lx-", (unsigned long)(uintptr_t)p);
	at = strstr(summary, key);
	if (!at)
		return false;
	eol = strchrnul(at, '\n');
	at = strstr(at, flags);
	return at && at < eol;
}

static void check_semantics(void)
{
	unsigned char vec[PAGES], *p;
	int status;
	pid_t pid;

	if (mincore(onfault, PAGES * WL_PAGE, vec) < 0)
		wl_fail("mincore: %s", strerror(errno));
	for (int i = 0; i < PAGES; i++)
		if (!!(vec[i] & 1) != (i < LOCK_ONFAULT_TOUCHED))
			wl_fail("lock-on-fault page %d is %sresident", i, vec[i] & 1 ? "" : "not ");
	if (munmap(sealed, WL_PAGE) == 0 || errno != EPERM)
		wl_fail("the sealed mapping could be unmapped (or: %s)", strerror(errno));
	pid = fork();
	if (pid < 0)
		wl_fail("fork: %s", strerror(errno));
	if (pid == 0) {
		for (size_t i = 0; i < PAGES * WL_PAGE; i++)
			if (wiped[i])
				_exit(1);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		wl_fail("a child forked now sees the WIPEONFORK mapping not wiped (%#x)", status);
	/* mlockall(MCL_FUTURE | MCL_ONFAULT): every new mapping is locked on fault. */
	p = map(MAP_PRIVATE, PROT_READ | PROT_WRITE);
	read_smaps(smaps_after, sizeof(smaps_after));
	if (!has_flags(smaps_after, p, " lo lf "))
		wl_fail("a mapping made after the restore is not locked on fault (mlockall)");
	munmap(p, PAGES * WL_PAGE);
}

int main(void)
{
	wl_init("madvise");
	setup();
	if (mlockall(MCL_FUTURE | MCL_ONFAULT) < 0)
		wl_fail("mlockall: %s", strerror(errno));
	read_smaps(smaps_before, sizeof(smaps_before));
	wl_ready();
	wl_wait_verify();
	read_smaps(smaps_after, sizeof(smaps_after));
	compare_smaps();
	check_contents();
	check_guards();
	check_semantics();
	wl_note("%d mappings with their flags and contents intact", nregions);
	return 0;
}
