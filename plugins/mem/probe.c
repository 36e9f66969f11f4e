// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe of the interfaces the mem plugin finds and reads a task's pages with
 * (pagemap, process_vm_readv, map_files) and rebuilds its mm with
 * (PR_SET_MM_MAP).  Everything is tried on memory of our own.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/prctl.h>

#include "mem.h"
#include "scan-uapi.h"

static void probe_pagemap(struct crf_ctx *ctx, struct mem_scratch *s)
{
	off_t off = (uintptr_t)s->base / s->page_size * sizeof(uint64_t);
	uint64_t e[2];
	ssize_t n;

	s->pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (s->pagemap < 0) {
		crf_probe_feature(ctx, "pagemap", false, true, "open /proc/self/pagemap: %s",
				  strerror(errno));
		return;
	}
	n = pread(s->pagemap, e, sizeof(e), off);
	if (n != (ssize_t)sizeof(e)) {
		crf_probe_feature(ctx, "pagemap", false, true, "read /proc/self/pagemap: %s",
				  n < 0 ? strerror(errno) : "short read");
		return;
	}
	if (!(e[0] & PM_PRESENT) || (e[1] & PM_PRESENT)) {
		crf_probe_feature(ctx, "pagemap", false, true,
				  "wrong entries: a touched page reads %s, an untouched one %s",
				  e[0] & PM_PRESENT ? "present" : "absent",
				  e[1] & PM_PRESENT ? "present" : "absent");
		return;
	}
	/* PFNs read as zero without CAP_SYS_ADMIN; the dump does not need them. */
	crf_probe_feature(ctx, "pagemap", true, true,
			  "a touched page reads present, an untouched one absent; PFNs %s",
			  e[0] & PM_PFN_MASK ? "visible" : "hidden");
}

static void probe_vm_readv(struct crf_ctx *ctx)
{
	static const char src[] = "crf process_vm_readv probe";
	char dst[sizeof(src)] = "";
	struct iovec local = {.iov_base = dst, .iov_len = sizeof(dst)};
	struct iovec remote = {.iov_base = (void *)src, .iov_len = sizeof(src)};
	ssize_t n;

	n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	if (n < 0)
		crf_probe_feature(ctx, "process-vm-readv", false, true, "on ourselves: %s",
				  strerror(errno));
	else if (n != (ssize_t)sizeof(src) || memcmp(src, dst, sizeof(src)))
		crf_probe_feature(ctx, "process-vm-readv", false, true,
				  "read %zd of %zu bytes, or wrong ones", n, sizeof(src));
	else
		crf_probe_feature(ctx, "process-vm-readv", true, true,
				  "read %zd bytes of our own memory", n);
}

/*
 * map_files gives the file behind a mapping even when it was unlinked; opening
 * an entry needs CAP_SYS_ADMIN (or CAP_CHECKPOINT_RESTORE), so open one.
 */
static void probe_map_files(struct crf_ctx *ctx)
{
	DIR *d = opendir("/proc/self/map_files");
	struct dirent *de;
	int fd;

	if (!d) {
		crf_probe_feature(ctx, "map-files", false, false, "open /proc/self/map_files: %s",
				  strerror(errno));
		return;
	}
	errno = 0;
	while ((de = readdir(d)) && de->d_name[0] == '.')
		;
	if (!de) {
		crf_probe_feature(ctx, "map-files", false, false,
				  "/proc/self/map_files has no entry: %s",
				  errno ? strerror(errno) : "no file mapping");
	} else if ((fd = openat(dirfd(d), de->d_name, O_RDONLY | O_CLOEXEC)) < 0) {
		crf_probe_feature(ctx, "map-files", false, false,
				  "open /proc/self/map_files/%s: %s", de->d_name, strerror(errno));
	} else {
		crf_probe_feature(ctx, "map-files", true, false, "opened the file of mapping %s",
				  de->d_name);
		close(fd);
	}
	closedir(d);
}

/*
 * The restorer sets the mm fields in one PR_SET_MM_MAP call because the
 * single-field PR_SET_MM forms need CAP_SYS_RESOURCE.  PR_SET_MM_MAP_SIZE only
 * reports the size of the struct, so it is safe to call on ourselves; the
 * kernel has both only with CONFIG_CHECKPOINT_RESTORE.
 */
static void probe_mm_map(struct crf_ctx *ctx)
{
	unsigned int size = 0;

	if (prctl(PR_SET_MM, PR_SET_MM_MAP_SIZE, (unsigned long)&size, 0, 0))
		crf_probe_feature(ctx, "prctl-mm-map", false, true,
				  "prctl(PR_SET_MM, PR_SET_MM_MAP_SIZE): %s", strerror(errno));
	else if (size != sizeof(struct prctl_mm_map))
		crf_probe_feature(ctx, "prctl-mm-map", false, true,
				  "kernel's struct prctl_mm_map has %u bytes, crf's %zu", size,
				  sizeof(struct prctl_mm_map));
	else
		crf_probe_feature(ctx, "prctl-mm-map", true, true,
				  "PR_SET_MM_MAP_SIZE: struct prctl_mm_map of %u bytes", size);
}

int mem_probe(struct crf_ctx *ctx)
{
	struct mem_scratch s = {
		.page_size = mem_page_size(),
		.pagemap = -1,
	};
	void *p;

	p = mmap(NULL, 2 * s.page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return crf_error_errno(errno, "cannot map two pages to probe with");
	s.base = p;
	s.base[0] = 1;

	probe_pagemap(ctx, &s);
	mem_probe_scan(ctx, &s);
	mem_probe_uffd(ctx, &s);
	probe_vm_readv(ctx);
	probe_map_files(ctx);
	probe_mm_map(ctx);
	mem_probe_vdso(ctx);

	if (s.pagemap >= 0)
		close(s.pagemap);
	munmap(p, 2 * s.page_size);
	return 0;
}
