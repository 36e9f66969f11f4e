// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe of page tracking: PAGEMAP_SCAN finds present pages in one call, and
 * with userfaultfd write-protection in async mode it also finds the pages
 * written since the last dump, which incremental dumps are built on (this
 * kernel has no soft-dirty bits).  Both are optional: /proc/PID/pagemap is read
 * instead, and every dump is then a full one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/userfaultfd.h>

#include <crf/cleanup.h>

#include "mem.h"
#include "scan-uapi.h"

/* From <linux/userfaultfd.h> of Linux 6.7. */
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif
/* From <linux/userfaultfd.h> of Linux 5.11. */
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

/* Regions of [@start, @start + @len) whose pages are in all of @mask: a count or -errno. */
static int scan(int pagemap, volatile char *start, size_t len, uint64_t mask,
		struct page_region *vec, size_t n)
{
	struct pm_scan_arg arg = {
		.size = sizeof(arg),
		.start = (uintptr_t)start,
		.end = (uintptr_t)start + len,
		.vec = (uintptr_t)vec,
		.vec_len = n,
		.category_mask = mask,
		.return_mask = mask,
	};
	int r;

	r = ioctl(pagemap, PAGEMAP_SCAN, &arg);
	return r < 0 ? -errno : r;
}

void mem_probe_scan(struct crf_ctx *ctx, struct mem_scratch *s)
{
	struct page_region v[2] = {0};
	int n;

	if (s->pagemap < 0) {
		crf_probe_feature(ctx, "pagemap-scan", false, false,
				  "no /proc/self/pagemap to ask");
		return;
	}
	n = scan(s->pagemap, s->base, 2 * s->page_size, PAGE_IS_PRESENT, v, 2);
	if (n < 0) {
		crf_probe_feature(ctx, "pagemap-scan", false, false,
				  "PAGEMAP_SCAN ioctl: %s%s; pagemap is read instead", strerror(-n),
				  n == -ENOTTY ? " (kernel < 6.7)" : "");
		return;
	}
	if (n != 1 || v[0].start != (uintptr_t)s->base ||
	    v[0].end != (uintptr_t)s->base + s->page_size) {
		crf_probe_feature(ctx, "pagemap-scan", false, false,
				  "PAGEMAP_SCAN gave %d regions, not the one present page", n);
		return;
	}
	s->scan = true;
	crf_probe_feature(ctx, "pagemap-scan", true, false,
			  "PAGEMAP_SCAN found the one present page of two");
}

/*
 * Open a userfaultfd with UFFD_FEATURE_WP_ASYNC and write-protect @s's touched
 * page through it.  Returns the fd, or -errno with @step naming what failed.
 */
static int uffd_protect(struct mem_scratch *s, const char **step)
{
	struct uffdio_api api = {.api = UFFD_API, .features = UFFD_FEATURE_WP_ASYNC};
	struct uffdio_range range = {.start = (uintptr_t)s->base, .len = s->page_size};
	struct uffdio_register reg = {.range = range, .mode = UFFDIO_REGISTER_MODE_WP};
	struct uffdio_writeprotect wp = {.range = range, .mode = UFFDIO_WRITEPROTECT_MODE_WP};
	_cleanup_close_ int fd = -1;

	/* User-mode-only faults are allowed even where vm.unprivileged_userfaultfd is 0. */
	*step = "userfaultfd()";
	fd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
	if (fd < 0)
		return -errno;
	*step = "UFFDIO_API with UFFD_FEATURE_WP_ASYNC";
	if (ioctl(fd, UFFDIO_API, &api))
		return -errno;
	*step = "UFFDIO_REGISTER in write-protect mode";
	if (ioctl(fd, UFFDIO_REGISTER, &reg))
		return -errno;
	*step = "UFFDIO_WRITEPROTECT";
	if (ioctl(fd, UFFDIO_WRITEPROTECT, &wp))
		return -errno;
	return TAKE_FD(fd);
}

/* With @s's page write-protected: does PAGEMAP_SCAN see it written after a write? */
static void probe_written(struct crf_ctx *ctx, struct mem_scratch *s)
{
	struct page_region v[1] = {0};
	int before, after;

	before = scan(s->pagemap, s->base, s->page_size, PAGE_IS_WRITTEN, v, 1);
	/* In async mode the kernel lifts the protection itself; nothing blocks. */
	s->base[0] = 2;
	after = scan(s->pagemap, s->base, s->page_size, PAGE_IS_WRITTEN, v, 1);
	if (before < 0 || after < 0)
		crf_probe_feature(ctx, "write-tracking", false, false,
				  "PAGEMAP_SCAN for PAGE_IS_WRITTEN: %s",
				  strerror(before < 0 ? -before : -after));
	else
		crf_probe_feature(ctx, "write-tracking", before == 0 && after == 1, false,
				  "PAGEMAP_SCAN saw %d written page before a write and %d after%s",
				  before, after,
				  before == 0 && after == 1 ? "" : " (expected 0 and 1)");
}

void mem_probe_uffd(struct crf_ctx *ctx, struct mem_scratch *s)
{
	/* Closing the userfaultfd, on return, unregisters the page and drops its protection. */
	_cleanup_close_ int fd = -1;
	const char *step;

	fd = uffd_protect(s, &step);
	if (fd < 0) {
		crf_probe_feature(ctx, "uffd-wp-async", false, false, "%s: %s%s", step,
				  strerror(-fd), fd == -EINVAL ? " (kernel < 6.7?)" : "");
		crf_probe_feature(ctx, "write-tracking", false, false,
				  "needs uffd-wp-async; incremental dumps are off");
		return;
	}
	crf_probe_feature(ctx, "uffd-wp-async", true, false,
			  "a page was write-protected in UFFD_FEATURE_WP_ASYNC mode");
	if (s->scan)
		probe_written(ctx, s);
	else
		crf_probe_feature(ctx, "write-tracking", false, false,
				  "needs PAGEMAP_SCAN; incremental dumps are off");
}
