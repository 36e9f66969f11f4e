// SPDX-License-Identifier: GPL-2.0-only
/*
 * Which pages to save.  The PAGEMAP_SCAN ioctl (Linux 6.7) returns whole
 * ranges of matching pages in one call; older kernels get the same answer
 * from /proc/PID/pagemap's entries, one 64-bit word per page.
 *
 * A page holds data of the task's own when it is present or swapped out and
 * is not a page of the file cache (PAGE_IS_FILE, or entry bit 61).  In a
 * private file mapping that leaves exactly the copied-on-write pages; pages
 * still shared with the file are read from it again at restore.
 *
 * Shared anonymous memory cannot be found that way: its pages are shmem
 * pages, PAGE_IS_FILE like any file's; one swapped out leaves no entry in
 * the task's page table (its swap entry is kept in the shmem object), and
 * one the task dropped with MADV_DONTNEED keeps its data in the object.  The
 * object itself answers: SEEK_DATA counts its pages in memory and in swap.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <crf/log.h>

#include "pagemap.h"
#include "scan-uapi.h"

#define VEC_LEN	 512
#define ENTS_LEN 512

int mem_ranges_add(void *arg, uint64_t start, uint64_t end, bool zero)
{
	struct mem_ranges *g = arg;
	uint64_t *v;

	(void)zero;
	if (g->n && g->v[g->n - 1] == start) {
		g->v[g->n - 1] = end;
		return 0;
	}
	if (g->n + 2 > g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 16;

		v = reallocarray(g->v, cap, sizeof(*v));
		if (!v)
			return crf_error_errno(ENOMEM, "page ranges");
		g->v = v;
		g->cap = cap;
	}
	g->v[g->n++] = start;
	g->v[g->n++] = end;
	return 0;
}

int mem_pagemap_open(struct mem_pagemap *pm, pid_t pid, size_t page_size)
{
	char path[64];

	*pm = (struct mem_pagemap){.fd = -1, .page_size = page_size, .scan = true};
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	pm->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (pm->fd < 0)
		return crf_error_errno(errno, "open %s", path);
	pm->vec = calloc(VEC_LEN, sizeof(*pm->vec));
	pm->ents = calloc(ENTS_LEN, sizeof(*pm->ents));
	if (!pm->vec || !pm->ents) {
		mem_pagemap_close(pm);
		return crf_error_errno(ENOMEM, "pagemap buffers");
	}
	return 0;
}

void mem_pagemap_close(struct mem_pagemap *pm)
{
	if (pm->fd >= 0)
		close(pm->fd);
	free(pm->vec);
	free(pm->ents);
	pm->fd = -1;
	pm->vec = NULL;
	pm->ents = NULL;
}

/* Which pages a PAGEMAP_SCAN query matches: see struct pm_scan_arg. */
struct scan_query {
	uint64_t inverted, mask, anyof, ret;
};

/* 1 when the ioctl is missing (the caller falls back), 0 when done, or -errno. */
static int walk_scan(struct mem_pagemap *pm, uint64_t start, uint64_t end,
		     const struct scan_query *q, mem_range_fn fn, void *arg)
{
	struct pm_scan_arg a = {
		.size = sizeof(a),
		.start = start,
		.end = end,
		.vec = (uintptr_t)pm->vec,
		.vec_len = VEC_LEN,
		.category_inverted = q->inverted,
		.category_mask = q->mask,
		.category_anyof_mask = q->anyof,
		.return_mask = q->ret,
	};
	int n, r;

	while (a.start < end) {
		n = ioctl(pm->fd, PAGEMAP_SCAN, &a);
		if (n < 0 && (errno == ENOTTY || errno == EINVAL) && a.start == start)
			return 1;
		if (n < 0)
			return crf_error_errno(errno, "PAGEMAP_SCAN of %#llx-%#llx",
					       (unsigned long long)a.start,
					       (unsigned long long)end);
		for (int i = 0; i < n; i++) {
			r = fn(arg, pm->vec[i].start, pm->vec[i].end,
			       pm->vec[i].categories & PAGE_IS_PFNZERO);
			if (r < 0)
				return r;
		}
		/* A full vector stops the walk early; walk_end says where. */
		if (a.walk_end <= a.start)
			return crf_error_errno(EIO, "PAGEMAP_SCAN made no progress at %#llx",
					       (unsigned long long)a.start);
		a.start = a.walk_end;
	}
	return 0;
}

/*
 * The pages of the task's own; a kernel that does not know PAGE_IS_GUARD
 * (EINVAL: before 6.14, which has no guard regions) is asked without it.
 */
static int scan_own(struct mem_pagemap *pm, uint64_t start, uint64_t end, mem_range_fn fn,
		    void *arg)
{
	/* Only what tells ranges apart is returned; more bits would split them. */
	struct scan_query q = {
		.inverted = PAGE_IS_FILE | PAGE_IS_GUARD,
		.mask = PAGE_IS_FILE | PAGE_IS_GUARD,
		.anyof = PAGE_IS_PRESENT | PAGE_IS_SWAPPED,
		.ret = PAGE_IS_PFNZERO,
	};
	int r = 1;

	if (!pm->no_guard) {
		r = walk_scan(pm, start, end, &q, fn, arg);
		pm->no_guard = r > 0;
	}
	if (r > 0) {
		q.inverted = q.mask = PAGE_IS_FILE;
		r = walk_scan(pm, start, end, &q, fn, arg);
	}
	return r;
}

static bool entry_wanted(uint64_t e)
{
	return (e & (PM_PRESENT | PM_SWAPPED)) && !(e & (PM_FILE | PM_GUARD));
}

static bool entry_guard(uint64_t e)
{
	return e & PM_GUARD;
}

static int walk_entries(struct mem_pagemap *pm, uint64_t start, uint64_t end,
			bool (*wanted)(uint64_t), mem_range_fn fn, void *arg)
{
	uint64_t run = 0, addr = start;
	bool in_run = false;
	ssize_t got;
	size_t n;
	int r;

	while (addr < end) {
		n = (end - addr) / pm->page_size;
		if (n > ENTS_LEN)
			n = ENTS_LEN;
		got = pread(pm->fd, pm->ents, n * sizeof(uint64_t),
			    (off_t)(addr / pm->page_size * sizeof(uint64_t)));
		if (got <= 0 || got % sizeof(uint64_t))
			return crf_error_errno(got < 0 ? errno : EIO, "read pagemap at %#llx",
					       (unsigned long long)addr);
		n = got / sizeof(uint64_t);
		for (size_t i = 0; i < n; i++, addr += pm->page_size) {
			bool want = wanted(pm->ents[i]);

			if (want && !in_run)
				run = addr;
			if (!want && in_run && (r = fn(arg, run, addr, false)) < 0)
				return r;
			in_run = want;
		}
	}
	return in_run ? fn(arg, run, end, false) : 0;
}

int mem_pagemap_walk(struct mem_pagemap *pm, uint64_t start, uint64_t end, mem_range_fn fn,
		     void *arg)
{
	int r;

	if (pm->scan) {
		r = scan_own(pm, start, end, fn, arg);
		if (r <= 0)
			return r;
		crf_debug("PAGEMAP_SCAN unavailable (%m); reading pagemap entries");
		pm->scan = false;
	}
	return walk_entries(pm, start, end, entry_wanted, fn, arg);
}

int mem_pagemap_walk_guards(struct mem_pagemap *pm, uint64_t start, uint64_t end, mem_range_fn fn,
			    void *arg)
{
	const struct scan_query q = {.mask = PAGE_IS_GUARD};
	int r;

	if (pm->scan && !pm->no_guard) {
		r = walk_scan(pm, start, end, &q, fn, arg);
		if (r <= 0)
			return r;
	}
	return walk_entries(pm, start, end, entry_guard, fn, arg);
}

int mem_pagemap_walk_shmem(struct mem_pagemap *pm, int fd, uint64_t pgoff, uint64_t start,
			   uint64_t end, mem_range_fn fn, void *arg)
{
	uint64_t last = pgoff + (end - start), mask = pm->page_size - 1;
	off_t off = (off_t)pgoff, data, hole;
	int r;

	while ((uint64_t)off < last) {
		data = lseek(fd, off, SEEK_DATA);
		/* ENXIO: no data from @off to the end of the object. */
		if (data < 0 && errno == ENXIO)
			return 0;
		hole = data < 0 ? -1 : lseek(fd, data, SEEK_HOLE);
		if (hole < 0)
			return crf_error_errno(errno, "seek data in shared memory at %#" PRIx64,
					       start + ((uint64_t)off - pgoff));
		if ((uint64_t)data >= last)
			return 0;
		/* The object's size may end inside a page (not for mmap()'s own). */
		hole = (off_t)(((uint64_t)hole + mask) & ~mask);
		if ((uint64_t)hole > last)
			hole = (off_t)last;
		data &= ~(off_t)mask;
		r = fn(arg, start + ((uint64_t)data - pgoff), start + ((uint64_t)hole - pgoff),
		       false);
		if (r < 0)
			return r;
		off = hole;
	}
	return 0;
}
