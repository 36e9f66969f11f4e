// SPDX-License-Identifier: GPL-2.0-only
/*
 * A minimal memory dumper for the restorer test: enough of what the mem
 * plugin does to describe a stopped target to the restore builder.  Every
 * present page of every private mapping goes to one blob image (found with
 * PAGEMAP_SCAN, read from /proc/PID/mem); file mappings are mapped again
 * from their files, anonymous ones from nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rst-dump.h"
#include "util.h"

#ifndef PAGEMAP_SCAN
#define PAGEMAP_SCAN	_IOWR('f', 16, struct pm_scan_arg)
#define PAGE_IS_PRESENT (1 << 3)
#define PAGE_IS_SWAPPED (1 << 4)

struct page_region {
	uint64_t start, end, categories;
};

struct pm_scan_arg {
	uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
	uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};
#endif

#define MAX_VMAS 1024
#define MAX_RUNS 8192

struct dvma {
	uint64_t start, end, pgoff;
	int prot, flags;
	char path[256]; /* "" for anonymous, or a [name] */
};

struct run {
	uint64_t vaddr, len, off;
};

struct dump {
	pid_t pid;
	struct dvma v[MAX_VMAS];
	size_t n;
	struct run runs[MAX_RUNS];
	size_t n_runs;
	uint64_t bytes;
};

static int parse_header(const char *line, struct dvma *v)
{
	unsigned long start, end, off, inode;
	char perms[8];
	int pos = 0;

	if (sscanf(line, "%lx-%lx %7s %lx %*x:%*x %lu %n", &start, &end, perms, &off, &inode,
		   &pos) != 5)
		return 0;
	memset(v, 0, sizeof(*v));
	v->start = start;
	v->end = end;
	v->pgoff = off;
	v->prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
		  (perms[2] == 'x' ? PROT_EXEC : 0);
	v->flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
	snprintf(v->path, sizeof(v->path), "%s", line + pos);
	v->path[strcspn(v->path, "\n")] = '\0';
	if (!inode || v->path[0] != '/')
		v->flags |= MAP_ANONYMOUS;
	return 1;
}

static int read_smaps(struct dump *d)
{
	char path[64], line[1024];
	_cleanup_fclose_ FILE *f = NULL;

	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)d->pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		struct dvma *cur = d->n ? &d->v[d->n - 1] : NULL;

		if (!strncmp(line, "VmFlags:", 8) && cur) {
			if (strstr(line, " nr"))
				cur->flags |= MAP_NORESERVE;
			if (strstr(line, " gd"))
				cur->flags |= MAP_GROWSDOWN;
		} else if (d->n < MAX_VMAS && parse_header(line, &d->v[d->n])) {
			d->n++;
		}
	}
	return 0;
}

static bool special(const struct dvma *v)
{
	return !strcmp(v->path, "[vsyscall]") || !strncmp(v->path, "[vvar", 5) ||
	       !strcmp(v->path, "[vdso]");
}

/* Copy [start, end) of the target into the blob; one run. */
static int copy_range(struct dump *d, int mem, struct crf_img *w, uint64_t start, uint64_t end)
{
	_cleanup_free_ char *buf = malloc(end - start);
	int r;

	if (!buf || d->n_runs == MAX_RUNS)
		return -ENOMEM;
	if (pread(mem, buf, end - start, start) != (ssize_t)(end - start))
		return -EIO;
	r = crf_blob_write(w, buf, end - start);
	if (r < 0)
		return r;
	d->runs[d->n_runs++] = (struct run){start, end - start, d->bytes};
	d->bytes += end - start;
	return 0;
}

/* Dump the present (or swapped) pages of @v, found with PAGEMAP_SCAN. */
static int dump_vma(struct dump *d, int pagemap, int mem, struct crf_img *w, const struct dvma *v)
{
	struct page_region reg[64];
	struct pm_scan_arg arg = {
		.size = sizeof(arg),
		.start = v->start,
		.end = v->end,
		.vec = (uintptr_t)reg,
		.vec_len = 64,
		.category_anyof_mask = PAGE_IS_PRESENT | PAGE_IS_SWAPPED,
		.return_mask = PAGE_IS_PRESENT | PAGE_IS_SWAPPED,
	};

	while (arg.start < arg.end) {
		long n = ioctl(pagemap, PAGEMAP_SCAN, &arg);

		if (n < 0)
			return -errno;
		for (long i = 0; i < n; i++) {
			int r = copy_range(d, mem, w, reg[i].start, reg[i].end);

			if (r < 0)
				return r;
		}
		arg.start = arg.walk_end;
	}
	return 0;
}

static int dump_pages(struct dump *d, struct crf_imgdir *dir)
{
	_cleanup_close_ int pagemap = -1, mem = -1;
	struct crf_img *w;
	char path[64];
	int r;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)d->pid);
	pagemap = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)d->pid);
	mem = open(path, O_RDONLY | O_CLOEXEC);
	if (pagemap < 0 || mem < 0)
		return -errno;
	r = crf_blob_create(dir, "pages.img", &w);
	if (r < 0)
		return r;
	for (size_t i = 0; i < d->n && r == 0; i++)
		if (!special(&d->v[i]) && (d->v[i].flags & MAP_PRIVATE) && d->v[i].prot)
			r = dump_vma(d, pagemap, mem, w, &d->v[i]);
	if (r < 0) {
		crf_img_abort(w);
		return r;
	}
	return crf_img_close(w);
}

static int add_vmas(struct dump *d, struct crf_rst_task *t)
{
	for (size_t i = 0; i < d->n; i++) {
		const struct dvma *v = &d->v[i];
		struct crf_rst_vma rv = {
			.start = v->start,
			.end = v->end,
			.prot = v->prot,
			.flags = v->flags,
			.fd = -1,
			.pgoff = v->pgoff,
		};
		int r = 0;

		if (!strcmp(v->path, "[vdso]"))
			r = rst_task_set_vdso(t, v->start);
		if (r < 0)
			return r;
		if (special(v))
			continue;
		if (!(v->flags & MAP_ANONYMOUS)) {
			rv.fd = open(v->path, O_RDONLY | O_CLOEXEC);
			if (rv.fd < 0)
				return -errno;
		}
		r = rst_task_add_vma(t, &rv);
		if (r < 0)
			return r;
	}
	return 0;
}

static int add_pages(struct dump *d, struct crf_imgdir *dir, struct crf_rst_task *t)
{
	struct crf_img *rd;
	int r;

	if (!d->n_runs)
		return 0;
	r = crf_blob_open(dir, "pages.img", &rd);
	if (r < 0)
		return r;
	for (size_t i = 0; i < d->n_runs && r == 0; i++)
		r = rst_task_add_pages(t, rd, d->runs[i].vaddr, d->runs[i].len, d->runs[i].off);
	return r;
}

/* /proc/PID/stat fields 26-28 and 45-51, the [heap] end, auxv and exe. */
static int read_mm(struct dump *d, struct crf_rst_mm *mm)
{
	char path[64], buf[2048];
	unsigned long long f[52] = {0};
	_cleanup_close_ int fd = -1;
	char *p;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)d->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	p = strrchr(buf, ')') + 2;
	/* Field 3 (the state) is a letter; count the numbers from field 4 on. */
	p = strchr(p, ' ');
	for (int i = 4; i <= 51 && p; i++) {
		f[i] = strtoull(p, &p, 10);
		if (*p != ' ' && *p != '\n')
			return -EIO;
	}
	mm->start_code = f[26], mm->end_code = f[27], mm->start_stack = f[28];
	mm->start_data = f[45], mm->end_data = f[46], mm->start_brk = f[47];
	mm->arg_start = f[48], mm->arg_end = f[49], mm->env_start = f[50], mm->env_end = f[51];
	mm->brk = mm->start_brk;
	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->v[i].path, "[heap]"))
			mm->brk = d->v[i].end;
	close(fd);
	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)d->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, mm->auxv, sizeof(mm->auxv));
	if (n <= 0 || n % 16)
		return -EIO;
	mm->auxv_len = n / 8;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)d->pid);
	mm->exe_fd = open(path, O_RDONLY | O_CLOEXEC);
	return mm->exe_fd < 0 ? -errno : 0;
}

int dump_target(pid_t pid, struct crf_imgdir *dir, struct crf_rst_task *t)
{
	_cleanup_free_ struct dump *d = calloc(1, sizeof(*d));
	struct crf_rst_mm mm = {0};
	int r;

	if (!d)
		return -ENOMEM;
	d->pid = pid;
	r = read_smaps(d);
	if (r == 0)
		r = dump_pages(d, dir);
	if (r == 0)
		r = add_vmas(d, t);
	if (r == 0)
		r = add_pages(d, dir, t);
	if (r == 0)
		r = read_mm(d, &mm);
	if (r == 0)
		r = rst_task_set_mm(t, &mm);
	return r;
}
