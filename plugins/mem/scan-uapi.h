/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * scan-uapi.h - the PAGEMAP_SCAN ioctl of /proc/PID/pagemap.
 *
 * From <linux/fs.h> of Linux 6.7; the installed uapi headers may be older,
 * so the definitions are repeated here when they lack them.
 */
#ifndef CRF_PLUGIN_MEM_SCAN_UAPI_H
#define CRF_PLUGIN_MEM_SCAN_UAPI_H

#include <sys/ioctl.h>

#include <linux/fs.h>
#include <linux/types.h>

#ifndef PAGEMAP_SCAN
#define PAGE_IS_WPALLOWED  (1 << 0)
#define PAGE_IS_WRITTEN	   (1 << 1)
#define PAGE_IS_FILE	   (1 << 2)
#define PAGE_IS_PRESENT	   (1 << 3)
#define PAGE_IS_SWAPPED	   (1 << 4)
#define PAGE_IS_PFNZERO	   (1 << 5)
#define PAGE_IS_HUGE	   (1 << 6)
#define PAGE_IS_SOFT_DIRTY (1 << 7)

struct page_region {
	__u64 start;
	__u64 end;
	__u64 categories;
};

struct pm_scan_arg {
	__u64 size;
	__u64 flags;
	__u64 start;
	__u64 end;
	__u64 walk_end;
	__u64 vec;
	__u64 vec_len;
	__u64 max_pages;
	__u64 category_inverted;
	__u64 category_mask;
	__u64 category_anyof_mask;
	__u64 return_mask;
};

#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#endif

/* A guard region's page (MADV_GUARD_INSTALL), Linux 6.14. */
#ifndef PAGE_IS_GUARD
#define PAGE_IS_GUARD (1 << 8)
#endif

/* Bits of a /proc/PID/pagemap entry (Documentation/admin-guide/mm/pagemap.rst). */
#define PM_PRESENT  (1ULL << 63)
#define PM_SWAPPED  (1ULL << 62)
#define PM_FILE	    (1ULL << 61) /* a page cache page, or shared anonymous memory */
#define PM_GUARD    (1ULL << 58) /* a guard region's page (Linux 6.14), with PM_SWAPPED */
#define PM_PFN_MASK ((1ULL << 55) - 1)

#endif
