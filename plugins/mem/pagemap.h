/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pagemap.h - finding the pages of a task that hold data of its own.
 */
#ifndef CRF_PLUGIN_MEM_PAGEMAP_H
#define CRF_PLUGIN_MEM_PAGEMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct page_region;

struct mem_pagemap {
	int fd;	       /* /proc/PID/pagemap */
	bool scan;     /* PAGEMAP_SCAN answers; else entries are read */
	bool no_guard; /* PAGEMAP_SCAN does not know PAGE_IS_GUARD (before 6.14) */
	size_t page_size;
	struct page_region *vec;
	uint64_t *ents;
};

/*
 * Called for each range [@start, @end) found, in address order; @zero when
 * every page of it is the kernel's shared zero page (read, never written).
 * Returns 0 or -errno, which stops the walk.
 */
typedef int (*mem_range_fn)(void *arg, uint64_t start, uint64_t end, bool zero);

/* Page ranges as [start, end) pairs, in address order. */
struct mem_ranges {
	uint64_t *v;
	size_t n, cap; /* uint64_t used and allocated */
};

/* A mem_range_fn that appends to the struct mem_ranges @arg (merging touching ranges). */
int mem_ranges_add(void *arg, uint64_t start, uint64_t end, bool zero);

/* Open @pid's pagemap; 0 or -errno (logged). */
int mem_pagemap_open(struct mem_pagemap *pm, pid_t pid, size_t page_size);
void mem_pagemap_close(struct mem_pagemap *pm);

/*
 * Walk the pages of [@start, @end) that are present or swapped out and are
 * not pages of a file: all of an anonymous mapping's pages that exist, and
 * the copied-on-write ones of a private file mapping.  Guard regions' pages,
 * which the kernel shows as swapped out, are not among them.
 */
int mem_pagemap_walk(struct mem_pagemap *pm, uint64_t start, uint64_t end, mem_range_fn fn,
		     void *arg);

/*
 * Walk the guard regions of [@start, @end) (MADV_GUARD_INSTALL): pages that
 * fault with SIGSEGV, which hold no data.  Kernels without guard regions
 * report none.
 */
int mem_pagemap_walk_guards(struct mem_pagemap *pm, uint64_t start, uint64_t end, mem_range_fn fn,
			    void *arg);

/*
 * Walk the pages of a shared anonymous mapping [@start, @end) that hold data:
 * those of its shmem object @fd (opened through /proc/PID/map_files) at file
 * offsets [@pgoff, @pgoff + @end - @start), in memory or swapped out, whether
 * or not the task's page tables map them.  Ranges are reported with @zero
 * false; fresh pages that read as zero are left to the caller to spot.
 */
int mem_pagemap_walk_shmem(struct mem_pagemap *pm, int fd, uint64_t pgoff, uint64_t start,
			   uint64_t end, mem_range_fn fn, void *arg);

#endif
