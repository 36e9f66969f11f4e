// SPDX-License-Identifier: GPL-2.0-only
/*
 * dump-task: the pages a task still shares copy-on-write with its parent.
 *
 * After fork, a private page neither process wrote since is one page frame
 * mapped by both; /proc/PID/pagemap (as root) shows its frame number, or
 * the swap slot both entries point to once it is swapped out.  So a page of
 * the child is shared when the parent has the same mapping (same range, both
 * plain private anonymous memory: mem_vma_cow_eligible) and the entries at
 * its address name the same frame or slot.  Both tasks are frozen for the
 * whole dump, and the parent's dump-task ran first (the tree is dumped
 * parents first), so its image exists when the child's is written.
 *
 * Reading the pages does not unshare them: /proc/PID/mem reads with
 * FOLL_FORCE but without pinning (process_vm_readv's pin of a shared
 * anonymous page would give the task a private copy; pages.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/image.h>
#include <crf/log.h>

#include "cow.h"
#include "mem.h"
#include "scan-uapi.h"

#define ENTS 512
/* A swap entry: its type and offset, below the flag bits. */
#define PM_SWAP_MASK PM_PFN_MASK

static pid_t parent_of(pid_t pid)
{
	char path[64], text[4096];
	_cleanup_close_ int fd = -1;
	const char *line;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, text, sizeof(text) - 1);
	if (n <= 0)
		return 0;
	text[n] = '\0';
	line = strstr(text, "\nPPid:");
	return line ? (pid_t)atoi(line + 6) : 0;
}

/* Whether two pagemap entries map the same page: one frame, or one swap slot. */
static bool same_page(uint64_t a, uint64_t b)
{
	if ((a & PM_PRESENT) && (b & PM_PRESENT))
		return (a & PM_PFN_MASK) && (a & PM_PFN_MASK) == (b & PM_PFN_MASK);
	if ((a & PM_SWAPPED) && (b & PM_SWAPPED) && !((a | b) & PM_GUARD))
		return (a & PM_SWAP_MASK) == (b & PM_SWAP_MASK);
	return false;
}

static int read_ents(int fd, uint64_t *e, size_t n, uint64_t addr, size_t page_size)
{
	ssize_t got = pread(fd, e, n * sizeof(*e), (off_t)(addr / page_size * sizeof(*e)));

	if (got != (ssize_t)(n * sizeof(*e)))
		return crf_error_errno(got < 0 ? errno : EIO, "read pagemap at %#llx",
				       (unsigned long long)addr);
	return 0;
}

/* The shared pages of [@start, @end) into @out. */
static int compare(int child, int parent, uint64_t start, uint64_t end, size_t page_size,
		   struct mem_ranges *out)
{
	uint64_t a[ENTS], b[ENTS];
	int r;

	for (uint64_t addr = start; addr < end;) {
		size_t n = (end - addr) / page_size < ENTS ? (end - addr) / page_size : ENTS;

		r = read_ents(child, a, n, addr, page_size);
		if (r == 0)
			r = read_ents(parent, b, n, addr, page_size);
		for (size_t i = 0; r == 0 && i < n; i++, addr += page_size)
			if (same_page(a[i], b[i]))
				r = mem_ranges_add(out, addr, addr + page_size, false);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The parent's mapping of the same range, if it is one that may share. */
static bool parent_has(const struct smaps *pm, const struct smaps_vma *v)
{
	const char *why;

	for (size_t i = 0; i < pm->n; i++) {
		const struct smaps_vma *p = &pm->v[i];

		if (p->start != v->start)
			continue;
		return p->end == v->end && p->prot == v->prot && !strcmp(p->name, v->name) &&
		       mem_vma_cow_eligible(mem_vma_kind(p, &why), p->prot, p->vmflags);
	}
	return false;
}

static int read_parent(pid_t ppid, struct smaps *pm, int *fd)
{
	_cleanup_fclose_ FILE *f = NULL;
	char path[64];
	int r;

	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)ppid);
	f = fopen(path, "re");
	if (!f)
		return crf_error_errno(errno, "open %s", path);
	r = smaps_parse(f, pm);
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)ppid);
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return crf_error_errno(errno, "open %s", path);
	return 0;
}

static int find_all(struct mem_cow *c, pid_t pid, const struct smaps *maps, const int *kinds,
		    const struct smaps *pm, int pfd)
{
	size_t ps = mem_page_size();
	_cleanup_close_ int fd = -1;
	char path[64];
	int r = 0;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return crf_error_errno(errno, "open %s", path);
	for (size_t i = 0; r >= 0 && i < maps->n; i++) {
		const struct smaps_vma *v = &maps->v[i];

		if (!mem_vma_cow_eligible(kinds[i], v->prot, v->vmflags) || !parent_has(pm, v))
			continue;
		r = compare(fd, pfd, v->start, v->end, ps, &c->shared[i]);
		if (r >= 0 && c->shared[i].n)
			c->parent = c->ppid;
	}
	return r;
}

int mem_cow_find(struct crf_ctx *ctx, pid_t pid, const struct smaps *maps, const int *kinds,
		 struct mem_cow *c)
{
	struct smaps pm = {0};
	char name[64];
	_cleanup_close_ int pfd = -1;
	int r;

	*c = (struct mem_cow){0};
	c->shared = calloc(maps->n ? maps->n : 1, sizeof(*c->shared));
	if (!c->shared)
		return crf_error_errno(ENOMEM, "shared pages of task %d", (int)pid);
	c->n = maps->n;
	c->ppid = parent_of(pid);
	/* A parent of the tree was dumped before: its mm image is there. */
	snprintf(name, sizeof(name), "mm-%d.img", (int)c->ppid);
	if (c->ppid <= 0 || faccessat(crf_imgdir_fd(crf_ctx_images(ctx)), name, F_OK, 0) < 0)
		return 0;
	r = read_parent(c->ppid, &pm, &pfd);
	if (r >= 0)
		r = find_all(c, pid, maps, kinds, &pm, pfd);
	smaps_free(&pm);
	return r;
}

void mem_cow_free(struct mem_cow *c)
{
	for (size_t i = 0; c->shared && i < c->n; i++)
		free(c->shared[i].v);
	free(c->shared);
	*c = (struct mem_cow){0};
}
