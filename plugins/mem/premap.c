// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pages shared copy-on-write between a parent and its child, kept shared
 * across a restore (premap.h says how).
 *
 * The plan, made once before the tree is forked: every mapping of a child
 * with pages shared with its parent (PageRuns.shared, Mm.cow_parent) takes
 * its parent's copy, which the parent makes before its own children are
 * forked; a mapping taken that way by a child that has children sharing it
 * in turn is handed on in the same slot.  The slots lie in one zone free in
 * crf and in the saved address space of every task that uses one (a move
 * into place must not land on a slot not moved yet), reserved as PROT_NONE
 * so that nothing of crf lands there meanwhile.
 *
 * A child takes its parent's copy only when the copy in its own address
 * space is still the parent's: a process forked by a sibling (CLONE_PARENT,
 * for its session) inherits the sibling's memory, where the sibling may have
 * written its own pages over the parent's.  Then it makes the mapping afresh
 * from its own image, which holds every page: shared ones are saved too.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/image.h>
#include <crf/log.h>

#include "mem.h"
#include "mm.pb-c.h"
#include "pagemap.h"
#include "premap.h"
#include "smaps.h"

#define ZONE_FLOOR (UINT64_C(1) << 32)
#define ZONE_GUARD (UINT64_C(1) << 21)
#define TASK_END   UINT64_C(0x7ffffffff000)

/* ---- the table ---------------------------------------------------------- */

struct mem_premap_ent *mem_premap_find(struct mem_premap *p, pid_t pid, uint64_t start,
				       uint64_t end)
{
	for (size_t i = 0; p && i < p->n; i++)
		if (p->v[i].pid == pid && p->v[i].start == start && p->v[i].end == end)
			return &p->v[i];
	return NULL;
}

static struct mem_premap_ent *add(struct mem_premap *p, pid_t pid, uint64_t start, uint64_t end)
{
	struct mem_premap_ent *e = mem_premap_find(p, pid, start, end);

	if (e)
		return e;
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 16;

		e = reallocarray(p->v, cap, sizeof(*e));
		if (!e)
			return NULL;
		p->v = e;
		p->cap = cap;
	}
	e = &p->v[p->n++];
	*e = (struct mem_premap_ent){.pid = pid, .start = start, .end = end};
	return e;
}

uint64_t mem_premap_slot(const struct mem_premap *p, pid_t pid, uint64_t start, uint64_t end)
{
	const struct mem_premap_ent *e = mem_premap_find((struct mem_premap *)p, pid, start, end);

	return e ? e->slot : 0;
}

void mem_premap_free(struct mem_premap *p)
{
	if (!p)
		return;
	if (p->zone_len)
		munmap((void *)(uintptr_t)p->zone, p->zone_len);
	free(p->v);
	free(p);
}

/* ---- reading mm images -------------------------------------------------- */

/* A saved mapping that may be made before the fork (cow.c decided the same at dump). */
static bool eligible(const Crf__Mem__Vma *v)
{
	return v->kind == CRF__MEM__VMA_KIND__ANON_PRIVATE && v->vmflags &&
	       (v->flags & 0x0f) == MAP_PRIVATE &&
	       mem_vma_cow_eligible(MEM_ANON_PRIVATE, (int)v->prot,
				    smaps_vmflags(v->vmflags, NULL));
}

static int open_mm(struct crf_ctx *ctx, pid_t pid, struct crf_img **img, Crf__Mem__MmEntry **hdr)
{
	char name[64];
	int r;

	snprintf(name, sizeof(name), "mm-%d.img", (int)pid);
	r = crf_img_open(crf_ctx_images(ctx), name, &crf__mem__mm_entry__descriptor, img);
	if (r < 0)
		return r;
	r = crf_img_read(*img, (ProtobufCMessage **)hdr);
	if (r > 0 && (*hdr)->entry_case == CRF__MEM__MM_ENTRY__ENTRY_MM)
		return 0;
	if (r > 0)
		protobuf_c_message_free_unpacked(&(*hdr)->base, NULL);
	crf_img_close(*img);
	return r < 0 ? r : crf_error_errno(EBADMSG, "%s: no mm record first", name);
}

/* What the plan reads: the tasks' mappings to keep the zone off. */
struct plan {
	struct crf_ctx *ctx;
	struct mem_premap *p;
	struct mem_ranges avoid;
};

/*
 * Task @pid shares pages with @parent: each eligible mapping with shared
 * pages takes its parent's copy, which the parent must make.
 */
static int scan_sharer(struct plan *pl, struct crf_img *img, pid_t pid, pid_t parent)
{
	Crf__Mem__MmEntry *e, *vrec = NULL;
	bool marked = false;
	int r;

	while ((r = crf_img_read(img, (ProtobufCMessage **)&e)) > 0) {
		if (e->entry_case == CRF__MEM__MM_ENTRY__ENTRY_VMA) {
			if (vrec)
				protobuf_c_message_free_unpacked(&vrec->base, NULL);
			vrec = e;
			marked = false;
			r = mem_ranges_add(&pl->avoid, e->vma->start, e->vma->end, false);
			if (r < 0)
				break;
			continue;
		}
		if (e->entry_case == CRF__MEM__MM_ENTRY__ENTRY_PAGES && e->pages->n_shared &&
		    vrec && !marked && eligible(vrec->vma)) {
			const Crf__Mem__Vma *v = vrec->vma;

			/* Each add may move the table: look both up once both are in. */
			if (!add(pl->p, pid, v->start, v->end) ||
			    !add(pl->p, parent, v->start, v->end)) {
				r = crf_error_errno(ENOMEM, "premap plan");
			} else {
				mem_premap_find(pl->p, pid, v->start, v->end)->from = parent;
				mem_premap_find(pl->p, parent, v->start, v->end)->needed = true;
				marked = true;
			}
		}
		protobuf_c_message_free_unpacked(&e->base, NULL);
		if (r < 0)
			break;
	}
	if (vrec)
		protobuf_c_message_free_unpacked(&vrec->base, NULL);
	return r;
}

/* Every task sharing pages with its parent, from its mm image. */
static int scan_sharers(struct plan *pl, DIR *d)
{
	Crf__Mem__MmEntry *hdr;
	struct crf_img *img;
	struct dirent *de;
	char name[64];
	int pid, r = 0;

	while (r >= 0 && (errno = 0, de = readdir(d))) {
		if (sscanf(de->d_name, "mm-%d.img", &pid) != 1)
			continue;
		snprintf(name, sizeof(name), "mm-%d.img", pid);
		if (strcmp(name, de->d_name) || (r = open_mm(pl->ctx, pid, &img, &hdr)) < 0)
			continue;
		if (hdr->mm->has_cow_parent && hdr->mm->cow_parent > 0)
			r = scan_sharer(pl, img, pid, hdr->mm->cow_parent);
		protobuf_c_message_free_unpacked(&hdr->base, NULL);
		crf_img_close(img);
	}
	if (r >= 0 && errno)
		r = crf_error_errno(errno, "read the image directory");
	return r;
}

/* A parent's mappings: the zone keeps off them, and each one planned must be there. */
static int scan_parent(struct plan *pl, pid_t pid)
{
	Crf__Mem__MmEntry *hdr, *e;
	struct crf_img *img;
	int r, found = 0, want = 0;

	for (size_t i = 0; i < pl->p->n; i++)
		want += pl->p->v[i].pid == pid && pl->p->v[i].needed;
	r = open_mm(pl->ctx, pid, &img, &hdr);
	if (r < 0)
		return r;
	protobuf_c_message_free_unpacked(&hdr->base, NULL);
	while ((r = crf_img_read(img, (ProtobufCMessage **)&e)) > 0) {
		if (e->entry_case == CRF__MEM__MM_ENTRY__ENTRY_VMA) {
			const struct mem_premap_ent *n =
				mem_premap_find(pl->p, pid, e->vma->start, e->vma->end);

			found += n && n->needed && eligible(e->vma);
			r = mem_ranges_add(&pl->avoid, e->vma->start, e->vma->end, false);
		}
		protobuf_c_message_free_unpacked(&e->base, NULL);
		if (r < 0)
			break;
	}
	crf_img_close(img);
	if (r == 0 && found != want)
		r = crf_error_errno(EBADMSG,
				    "mm-%d.img: %d mappings its children share pages of are not "
				    "among its own",
				    (int)pid, want - found);
	return r;
}

/* ---- the zone ----------------------------------------------------------- */

static int cmp_u64_pair(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* crf's own mappings now, into @avoid. */
static int add_own_maps(struct mem_ranges *avoid)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/maps", "re");
	unsigned long start, end;
	char line[512];
	int r = 0;

	if (!f)
		return crf_error_errno(errno, "open /proc/self/maps");
	while (r >= 0 && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &start, &end) == 2)
			r = mem_ranges_add(avoid, start, end, false);
	return r;
}

/* The lowest address from ZONE_FLOOR with @len bytes and guards free around them. */
static int find_zone(struct mem_ranges *avoid, uint64_t len, uint64_t *out)
{
	uint64_t cand = ZONE_FLOOR;

	qsort(avoid->v, avoid->n / 2, 2 * sizeof(uint64_t), cmp_u64_pair);
	for (size_t i = 0; i < avoid->n; i += 2) {
		if (avoid->v[i] >= cand + len + ZONE_GUARD)
			break;
		if (avoid->v[i + 1] + ZONE_GUARD > cand)
			cand = (avoid->v[i + 1] + 2 * ZONE_GUARD - 1) & ~(ZONE_GUARD - 1);
	}
	if (cand + len > TASK_END)
		return crf_error_errno(ENOMEM, "no room of %" PRIu64 " MiB for shared memory",
				       len >> 20);
	*out = cand;
	return 0;
}

/* Slots for the mappings made afresh, then each taken one gets its parent's. */
static int place(struct mem_premap *p)
{
	uint64_t off = 0;

	for (size_t i = 0; i < p->n; i++) {
		struct mem_premap_ent *e = &p->v[i];

		if (e->from)
			continue;
		e->slot = p->zone + off;
		off += e->end - e->start + mem_page_size();
	}
	for (size_t i = 0; i < p->n; i++) {
		const struct mem_premap_ent *f = &p->v[i];

		for (size_t depth = 0; f && f->from && depth < p->n; depth++)
			f = mem_premap_find(p, f->from, f->start, f->end);
		if (!f || f->from)
			return crf_error_errno(EBADMSG,
					       "mm-%d.img: shared pages of a parent's "
					       "mapping the parent does not have",
					       (int)p->v[i].pid);
		p->v[i].slot = f->slot;
	}
	return 0;
}

static uint64_t zone_size(const struct mem_premap *p)
{
	uint64_t len = 0;

	for (size_t i = 0; i < p->n; i++)
		if (!p->v[i].from)
			len += p->v[i].end - p->v[i].start + mem_page_size();
	return len;
}

static int reserve(struct plan *pl)
{
	struct mem_premap *p = pl->p;
	void *m;
	int r;

	p->zone_len = zone_size(p);
	r = add_own_maps(&pl->avoid);
	if (r >= 0)
		r = find_zone(&pl->avoid, p->zone_len, &p->zone);
	if (r < 0)
		return r;
	m = mmap((void *)(uintptr_t)p->zone, p->zone_len, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
	if (m == MAP_FAILED) {
		p->zone_len = 0;
		return crf_error_errno(errno, "reserve %#" PRIx64 " for shared memory", p->zone);
	}
	return place(p);
}

static int plan_all(struct plan *pl, DIR *d)
{
	int r = scan_sharers(pl, d);

	for (size_t i = 0; r >= 0 && i < pl->p->n; i++) {
		bool first = true;

		if (!pl->p->v[i].needed)
			continue;
		for (size_t k = 0; k < i; k++)
			first = first &&
				!(pl->p->v[k].needed && pl->p->v[k].pid == pl->p->v[i].pid);
		if (first)
			r = scan_parent(pl, pl->p->v[i].pid);
	}
	if (r >= 0 && pl->p->n)
		r = reserve(pl);
	return r;
}

int mem_premap_plan(struct crf_ctx *ctx, struct mem_premap **out)
{
	struct plan pl = {.ctx = ctx};
	DIR *d;
	int fd, r;

	*out = NULL;
	pl.p = calloc(1, sizeof(*pl.p));
	fd = openat(crf_imgdir_fd(crf_ctx_images(ctx)), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!pl.p || !d) {
		r = crf_error_errno(pl.p ? errno : ENOMEM, "open the image directory");
		if (fd >= 0 && !d)
			close(fd);
		if (d)
			closedir(d);
		free(pl.p);
		return r;
	}
	r = plan_all(&pl, d);
	closedir(d);
	free(pl.avoid.v);
	if (r < 0 || !pl.p->n) {
		mem_premap_free(pl.p);
		return r < 0 ? r : 0;
	}
	crf_debug("%zu mappings made before forks for pages shared with a parent, zone %#" PRIx64
		  " (%" PRIu64 " KiB)",
		  pl.p->n, pl.p->zone, pl.p->zone_len >> 10);
	*out = pl.p;
	return 0;
}
