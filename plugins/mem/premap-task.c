// SPDX-License-Identifier: GPL-2.0-only
/*
 * restore-premap: in each restored process, before it forks its children,
 * the mappings of the plan (premap.c) that are its own: taken from the copy
 * of its parent's it inherited (only its pages not shared with the parent
 * written into it, those it did not have dropped) or made afresh from its
 * image.  Writing a page of the parent's copy gives this process a private
 * one; the pages left alone stay one page frame for both.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <crf/image.h>
#include <crf/log.h>

#include "mem.h"
#include "mm.pb-c.h"
#include "premap.h"

/* The page runs and shared ranges of one mapping, in address order. */
struct vma_pages {
	const Crf__Mem__Vma *v;
	struct mem_premap_ent *e; /* its entry of the plan, or NULL */
	Crf__Mem__PageRun *runs;
	size_t n_runs, cap_runs;
	Crf__Mem__PageRange *shared;
	size_t n_shared, cap_shared;
};

struct premap_task {
	struct crf_ctx *ctx;
	struct mem_premap *p;
	pid_t pid;
	char name[64];
	struct crf_img *blob;
	struct vma_pages cur;
};

static int corrupt(const struct premap_task *t, const char *what, uint64_t addr)
{
	return crf_error_errno(EBADMSG, "%s: %s at %#" PRIx64, t->name, what, addr);
}

/* Write bytes [@from, @to) of run @run into the mapping's slot. */
static int put(struct premap_task *t, const Crf__Mem__PageRun *run, uint64_t from, uint64_t to)
{
	const struct vma_pages *c = &t->cur;
	char *dst = (char *)(uintptr_t)(c->e->slot + (from - c->v->start));

	return crf_blob_pread(t->blob, dst, to - from, run->off + (from - run->vaddr));
}

/* Run @run, except the pages in @c's shared ranges when @skip_shared. */
static int put_run(struct premap_task *t, const Crf__Mem__PageRun *run, bool skip_shared)
{
	const struct vma_pages *c = &t->cur;
	uint64_t at = run->vaddr, end = run->vaddr + run->len;
	int r = 0;

	for (size_t i = 0; skip_shared && r >= 0 && i < c->n_shared && at < end; i++) {
		uint64_t s = c->shared[i].vaddr, e = s + c->shared[i].len;

		if (e <= at || s >= end)
			continue;
		if (s > at)
			r = put(t, run, at, s);
		at = e < end ? e : end;
	}
	return r < 0 || at >= end ? r : put(t, run, at, end);
}

static int drop(const struct vma_pages *c, uint64_t from, uint64_t to)
{
	void *p = (void *)(uintptr_t)(c->e->slot + (from - c->v->start));

	if (to > from && madvise(p, to - from, MADV_DONTNEED) < 0)
		return crf_error_errno(errno, "drop pages %#" PRIx64 "-%#" PRIx64, from, to);
	return 0;
}

/* The pages of the parent's copy this task had neither saved nor shared read as zero. */
static int drop_missing(const struct vma_pages *c)
{
	uint64_t at = c->v->start;
	size_t i = 0, k = 0;
	int r = 0;

	while (r >= 0 && (i < c->n_runs || k < c->n_shared)) {
		bool run = k >= c->n_shared ||
			   (i < c->n_runs && c->runs[i].vaddr < c->shared[k].vaddr);
		uint64_t s = run ? c->runs[i].vaddr : c->shared[k].vaddr;
		uint64_t e = s + (run ? c->runs[i].len : c->shared[k].len);

		r = drop(c, at, s > at ? s : at);
		if (e > at)
			at = e;
		i += run;
		k += !run;
	}
	return r < 0 ? r : drop(c, at, c->v->end);
}

/* Make the mapping of @t->cur in its slot, from the parent's copy or afresh. */
static int make(struct premap_task *t)
{
	struct vma_pages *c = &t->cur;
	const Crf__Mem__Vma *v = c->v;
	struct mem_premap_ent *f =
		c->e->from ? mem_premap_find(t->p, c->e->from, v->start, v->end) : NULL;
	bool take = f && !f->dirty;
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | ((int)v->flags & MAP_NORESERVE);
	int r = 0;

	if (!take && mmap((void *)(uintptr_t)c->e->slot, v->end - v->start, (int)v->prot, flags, -1,
			  0) == MAP_FAILED)
		return crf_error_errno(errno, "map %#" PRIx64 "-%#" PRIx64 " at %#" PRIx64,
				       v->start, v->end, c->e->slot);
	for (size_t i = 0; r >= 0 && i < c->n_runs; i++)
		r = put_run(t, &c->runs[i], take);
	if (r >= 0 && take)
		r = drop_missing(c);
	/* This process's copy of that slot is its own now, no more the parent's. */
	if (f)
		f->dirty = true;
	crf_debug("pid %d: mapping %#" PRIx64 "-%#" PRIx64 " %s at %#" PRIx64, (int)t->pid,
		  v->start, v->end, take ? "taken from its parent's copy" : "made", c->e->slot);
	return r;
}

static int grow(void *v, size_t n, size_t *cap, size_t size)
{
	void **p = v;
	size_t ncap = *cap ? 2 * *cap : 64;
	void *q;

	if (n < *cap)
		return 0;
	q = reallocarray(*p, ncap, size);
	if (!q)
		return crf_error_errno(ENOMEM, "page runs");
	*p = q;
	*cap = ncap;
	return 0;
}

/* Keep the runs and shared ranges of a mapping of the plan (copied: the record goes). */
static int collect(struct premap_task *t, const Crf__Mem__PageRuns *pr)
{
	struct vma_pages *c = &t->cur;
	int r = 0;

	for (size_t i = 0; r >= 0 && i < pr->n_runs; i++) {
		const Crf__Mem__PageRun *run = pr->runs[i];

		if (run->vaddr < c->v->start || run->vaddr >= c->v->end ||
		    run->len > c->v->end - run->vaddr)
			return corrupt(t, "page run outside its mapping", run->vaddr);
		r = grow(&c->runs, c->n_runs, &c->cap_runs, sizeof(*c->runs));
		if (r >= 0)
			c->runs[c->n_runs++] = *run;
	}
	for (size_t i = 0; r >= 0 && i < pr->n_shared; i++) {
		const Crf__Mem__PageRange *g = pr->shared[i];

		if (g->vaddr < c->v->start || g->vaddr >= c->v->end ||
		    g->len > c->v->end - g->vaddr)
			return corrupt(t, "shared pages outside their mapping", g->vaddr);
		r = grow(&c->shared, c->n_shared, &c->cap_shared, sizeof(*c->shared));
		if (r >= 0)
			c->shared[c->n_shared++] = *g;
	}
	return r;
}

/* The mapping collected so far is complete: make it if it is one of the plan. */
static int finish(struct premap_task *t)
{
	int r = t->cur.e ? make(t) : 0;

	t->cur.e = NULL;
	t->cur.n_runs = t->cur.n_shared = 0;
	return r;
}

static int walk(struct premap_task *t, struct crf_img *img)
{
	Crf__Mem__MmEntry *e, *vrec = NULL;
	int r;

	while ((r = crf_img_read(img, (ProtobufCMessage **)&e)) > 0) {
		if (e->entry_case == CRF__MEM__MM_ENTRY__ENTRY_VMA) {
			r = finish(t);
			if (vrec)
				protobuf_c_message_free_unpacked(&vrec->base, NULL);
			vrec = e;
			t->cur.v = e->vma;
			t->cur.e = mem_premap_find(t->p, t->pid, e->vma->start, e->vma->end);
			if (r < 0)
				break;
			continue;
		}
		if (e->entry_case == CRF__MEM__MM_ENTRY__ENTRY_PAGES && t->cur.e)
			r = collect(t, e->pages);
		protobuf_c_message_free_unpacked(&e->base, NULL);
		if (r < 0)
			break;
	}
	if (r == 0)
		r = finish(t);
	if (vrec)
		protobuf_c_message_free_unpacked(&vrec->base, NULL);
	return r;
}

static int open_images(struct premap_task *t, struct crf_img **img)
{
	Crf__Mem__MmEntry *hdr = NULL;
	int r;

	r = crf_img_open(crf_ctx_images(t->ctx), t->name, &crf__mem__mm_entry__descriptor, img);
	if (r < 0)
		return r;
	r = crf_img_read(*img, (ProtobufCMessage **)&hdr);
	if (r == 0)
		return crf_error_errno(ENODATA, "%s: no records", t->name);
	if (r < 0)
		return r;
	if (hdr->entry_case != CRF__MEM__MM_ENTRY__ENTRY_MM || !hdr->mm->pages[0] ||
	    strchr(hdr->mm->pages, '/'))
		r = crf_error_errno(EBADMSG, "%s: no mm record first", t->name);
	else
		r = crf_blob_open(crf_ctx_images(t->ctx), hdr->mm->pages, &t->blob);
	protobuf_c_message_free_unpacked(&hdr->base, NULL);
	return r;
}

int mem_premap_task(struct crf_ctx *ctx, struct mem_premap *p)
{
	struct premap_task t = {.ctx = ctx, .p = p, .pid = crf_ctx_pid(ctx)};
	struct crf_img *img = NULL;
	bool any = false;
	int r;

	for (size_t i = 0; p && i < p->n; i++)
		any = any || p->v[i].pid == t.pid;
	if (!any)
		return 0;
	snprintf(t.name, sizeof(t.name), "mm-%d.img", (int)t.pid);
	r = open_images(&t, &img);
	if (r >= 0)
		r = walk(&t, img);
	free(t.cur.runs);
	free(t.cur.shared);
	if (t.blob)
		crf_img_close(t.blob);
	if (img)
		crf_img_close(img);
	return r;
}
