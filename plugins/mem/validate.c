// SPDX-License-Identifier: GPL-2.0-only
/*
 * The mem plugin's images, checked before the tree is forked (validate.h).
 *
 * restore-task reads mm-PID.img in the forked task and hands each mapping
 * and page run to the restorer, which maps and reads exactly what it is
 * told (MAP_FIXED: a mapping over another replaces it).  So the records
 * must already be what the restorer can take: mappings in address order,
 * none overlapping the one before, page-aligned, in the user address
 * space; page runs inside their mapping and inside the pages image; the
 * objects they name present.  Found only in the forked task, a bad record
 * fails a restore that has started; found here, nothing is made.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/image.h>
#include <crf/log.h>
#include <crf/restore.h>

#include "mem.h"
#include "smaps.h"
#include "validate.h"

#define VMA_FLAGS                                                                                  \
	(MAP_PRIVATE | MAP_SHARED | MAP_DROPPABLE | MAP_ANONYMOUS | MAP_GROWSDOWN |                \
	 MAP_NORESERVE | MAP_LOCKED)
/* The mapping type of mmap() flags: MAP_SHARED, MAP_PRIVATE or MAP_DROPPABLE. */
#define MAP_TYPE_MASK 0x0f
/* The words of auxv the restorer takes. */
#define AUXV_MAX (sizeof(((struct crf_rst_mm *)NULL)->auxv) / sizeof(uint64_t))

#define bad(w, fmt, ...)                                                                           \
	crf_error_errno(EBADMSG, "%s/%s: record %zu: " fmt, crf_imgdir_path((w)->dir), (w)->name,  \
			(w)->rec, ##__VA_ARGS__)

static bool aligned(const struct mem_mm_walk *w, uint64_t v)
{
	return !(v & (w->page_size - 1));
}

static bool kind_is_anon(Crf__Mem__VmaKind kind)
{
	return kind == CRF__MEM__VMA_KIND__ANON_PRIVATE || kind == CRF__MEM__VMA_KIND__ANON_SHARED;
}

static bool kind_is_shared(Crf__Mem__VmaKind kind)
{
	return kind == CRF__MEM__VMA_KIND__FILE_SHARED || kind == CRF__MEM__VMA_KIND__ANON_SHARED ||
	       kind == CRF__MEM__VMA_KIND__MEMFD || kind == CRF__MEM__VMA_KIND__SYSV_SHM;
}

int mem_check_mm(struct mem_mm_walk *w, const Crf__Mem__Mm *mm)
{
	const Crf__Mem__MmFields *f = mm->fields;

	w->page_size = mm->page_size;
	if (mm->page_size != mem_page_size())
		return crf_error_errno(
			ENOTSUP, "%s/%s: pages of %" PRIu64 " bytes, this kernel's are %zu",
			crf_imgdir_path(w->dir), w->name, (uint64_t)mm->page_size, mem_page_size());
	if (!mm->pages[0] || strchr(mm->pages, '/'))
		return bad(w, "Mm.pages: bad pages image name '%.64s'", mm->pages);
	if (f->n_auxv < 2 || f->n_auxv % 2 || f->n_auxv > AUXV_MAX || f->auxv[f->n_auxv - 2] != 0)
		return bad(w, "Mm.fields.auxv: %zu words, not pairs ending with AT_NULL",
			   f->n_auxv);
	if (mm->mlockall & ~(uint32_t)(MCL_FUTURE | MCL_ONFAULT))
		return bad(w, "Mm.mlockall: %#x, not MCL_FUTURE and MCL_ONFAULT", mm->mlockall);
	return 0;
}

/* The guard regions lie inside the mapping, page-aligned, in order. */
static int check_guards(struct mem_mm_walk *w, const Crf__Mem__Vma *v)
{
	uint64_t last = v->start;

	if (v->n_guards % 2)
		return bad(w, "Vma.guards: %zu addresses, not pairs", v->n_guards);
	for (size_t i = 0; i < v->n_guards; i += 2) {
		uint64_t start = v->guards[i], end = v->guards[i + 1];

		if (start < last || start >= end || end > v->end || !aligned(w, start) ||
		    !aligned(w, end))
			return bad(w,
				   "Vma.guards[%zu]: %#" PRIx64 "-%#" PRIx64
				   " outside its mapping or out of order",
				   i, start, end);
		last = end;
	}
	return 0;
}

/* Where the mapping lies: in order, not over the one before, aligned, in user space. */
static int check_range(struct mem_mm_walk *w, const Crf__Mem__Vma *v)
{
	if (v->start >= v->end || !aligned(w, v->start) || !aligned(w, v->end) ||
	    v->end > MEM_USER_END)
		return bad(w,
			   "Vma.start, end: %#" PRIx64 "-%#" PRIx64
			   ": empty, unaligned or above user space",
			   v->start, v->end);
	if (v->start < w->last_end)
		return bad(w,
			   "Vma.start: %#" PRIx64 "-%#" PRIx64
			   " overlaps the mapping before it (ending at %#" PRIx64 ")",
			   v->start, v->end, w->last_end);
	return 0;
}

/* Does @dir hold the image of the object or segment @v maps? */
static bool have_object(struct mem_mm_walk *w, const Crf__Mem__Vma *v)
{
	char name[96];

	if (v->kind == CRF__MEM__VMA_KIND__SYSV_SHM)
		snprintf(name, sizeof(name), "shmem-sysv-%d.img", (int)v->shmid);
	else
		snprintf(name, sizeof(name), "shmem-%" PRIu64 "-%" PRIu64 ".img", v->shm_dev,
			 v->shm_inode);
	return faccessat(crf_imgdir_fd(w->dir), name, F_OK, 0) == 0;
}

/* What the kind of @v needs: flags of its kind, its object, its file. */
static int check_kind(struct mem_mm_walk *w, const Crf__Mem__Vma *v)
{
	bool shared = kind_is_shared(v->kind), anon = kind_is_anon(v->kind);
	int type = (int)(v->flags & MAP_TYPE_MASK);

	if (v->kind < CRF__MEM__VMA_KIND__ANON_PRIVATE || v->kind > CRF__MEM__VMA_KIND__SYSV_SHM)
		return bad(w, "Vma.kind: %d", (int)v->kind);
	/* MAP_DROPPABLE is private anonymous memory of a kind of its own. */
	if (v->prot & ~(PROT_READ | PROT_WRITE | PROT_EXEC) || v->flags & ~VMA_FLAGS ||
	    (shared ? type != MAP_SHARED
		    : type != MAP_PRIVATE && !(type == MAP_DROPPABLE &&
					       v->kind == CRF__MEM__VMA_KIND__ANON_PRIVATE)) ||
	    !(v->flags & MAP_ANONYMOUS) != !anon)
		return bad(w, "Vma.prot, flags: %#x, %#x: not a mapping of its kind", v->prot,
			   v->flags);
	if (!aligned(w, v->pgoff))
		return bad(w, "Vma.pgoff: %#" PRIx64 " is not page-aligned", v->pgoff);
	if ((v->kind == CRF__MEM__VMA_KIND__FILE_PRIVATE ||
	     v->kind == CRF__MEM__VMA_KIND__FILE_SHARED) &&
	    !v->file)
		return bad(w, "Vma.file: a file mapping without its file");
	if (v->kind == CRF__MEM__VMA_KIND__MEMFD && !(v->has_shm_dev && v->has_shm_inode))
		return bad(w, "Vma.shm_dev, shm_inode: a memfd mapping without its object");
	if (v->has_shm_dev && v->has_shm_inode &&
	    (v->kind == CRF__MEM__VMA_KIND__MEMFD || v->kind == CRF__MEM__VMA_KIND__ANON_SHARED) &&
	    !have_object(w, v))
		return bad(w, "Vma.shm_dev, shm_inode: no image of object %" PRIu64 "-%" PRIu64,
			   v->shm_dev, v->shm_inode);
	if ((v->kind == CRF__MEM__VMA_KIND__SYSV_SHM) != (v->has_shmid && v->shmid >= 0) ||
	    (v->kind == CRF__MEM__VMA_KIND__SYSV_SHM && (v->flags != MAP_SHARED || v->pgoff)))
		return bad(w, "Vma.shmid: a System V attachment without its segment, or not whole");
	if (v->kind == CRF__MEM__VMA_KIND__SYSV_SHM && !v->has_shm_ipc_ns && !have_object(w, v))
		return bad(w, "Vma.shmid: no image of System V segment %d", (int)v->shmid);
	return check_guards(w, v);
}

/* Another plugin's mapping: its range and its claim; the rest is its handler's. */
static int check_foreign(struct mem_mm_walk *w, const Crf__Mem__Vma *v)
{
	if (!v->claim_kind || !v->claim_plugin || !*v->claim_kind || !*v->claim_plugin ||
	    (v->flags != MAP_SHARED && v->flags != MAP_PRIVATE))
		return bad(w, "Vma.claim_kind, claim_plugin, flags: another plugin's mapping "
			      "without its claim");
	return 0;
}

int mem_check_vma(struct mem_mm_walk *w, const Crf__Mem__Vma *v)
{
	int r = check_range(w, v);

	if (r >= 0)
		r = v->kind == CRF__MEM__VMA_KIND__FOREIGN ? check_foreign(w, v) : check_kind(w, v);
	if (r < 0)
		return r;
	w->last_end = v->end;
	w->n_vmas++;
	w->cur = v;
	return 0;
}

int mem_check_pages(struct mem_mm_walk *w, const Crf__Mem__PageRuns *pr)
{
	const Crf__Mem__Vma *v = w->cur;

	/* A shared file mapping's pages are the file's: writing them would write it. */
	if (!v || (!kind_is_anon(v->kind) && v->kind != CRF__MEM__VMA_KIND__FILE_PRIVATE))
		return bad(w, "PageRuns: no anonymous or private mapping before it");
	for (size_t i = 0; i < pr->n_runs; i++) {
		const Crf__Mem__PageRun *run = pr->runs[i];

		if (!run->len || !aligned(w, run->vaddr) || !aligned(w, run->len) ||
		    run->vaddr < v->start || run->vaddr >= v->end || run->len > v->end - run->vaddr)
			return bad(w,
				   "PageRuns.runs[%zu]: %#" PRIx64 "+%#" PRIx64
				   " is not inside its mapping %#" PRIx64 "-%#" PRIx64,
				   i, run->vaddr, run->len, v->start, v->end);
		if (run->off > w->blob_size || run->len > w->blob_size - run->off)
			return bad(w,
				   "PageRuns.runs[%zu].off: %#" PRIx64 "+%#" PRIx64
				   " is past the %" PRIu64 " bytes of the pages image",
				   i, run->off, run->len, w->blob_size);
	}
	for (size_t i = 0; i < pr->n_shared; i++) {
		const Crf__Mem__PageRange *g = pr->shared[i];

		if (!g->len || !aligned(w, g->vaddr) || !aligned(w, g->len) ||
		    g->vaddr < v->start || g->vaddr >= v->end || g->len > v->end - g->vaddr)
			return bad(w,
				   "PageRuns.shared[%zu]: %#" PRIx64 "+%#" PRIx64
				   " is not inside its mapping",
				   i, g->vaddr, g->len);
	}
	return 0;
}

int mem_check_end(struct mem_mm_walk *w, const Crf__Mem__Mm *mm)
{
	if (w->n_vmas != mm->n_vmas)
		return crf_error_errno(EBADMSG, "%s/%s: Mm.n_vmas: %u mappings announced, %u found",
				       crf_imgdir_path(w->dir), w->name, mm->n_vmas, w->n_vmas);
	return 0;
}

/* Record 0: the Mm, and the size of the pages image it names. */
static int check_first(struct mem_mm_walk *w, const Crf__Mem__MmEntry *e, pid_t pid)
{
	_cleanup_img_ struct crf_img *blob = NULL;
	char what[96];
	int r;

	if (e->entry_case != CRF__MEM__MM_ENTRY__ENTRY_MM)
		return bad(w, "MmEntry: the first record is not the Mm");
	r = mem_check_mm(w, e->mm);
	if (r >= 0 && e->mm->has_cow_parent) {
		snprintf(what, sizeof(what), "%s: record 0: Mm.cow_parent", w->name);
		r = e->mm->cow_parent == pid ? bad(w, "Mm.cow_parent: the process itself")
					     : crf_img_check_task(w->dir, what, e->mm->cow_parent);
	}
	if (r >= 0)
		r = crf_blob_open(w->dir, e->mm->pages, &blob);
	if (r >= 0)
		w->blob_size = crf_blob_size(blob);
	return r;
}

static int check_mm_file(void *arg, const char *name, pid_t pid)
{
	struct crf_imgdir *dir = arg;
	_cleanup_img_ struct crf_img *img = NULL;
	struct mem_mm_walk w = {.dir = dir, .name = name};
	Crf__Mem__MmEntry *first = NULL, *vma = NULL, *e;
	int r = crf_img_check_task(dir, name, pid);

	if (r >= 0)
		r = crf_img_open(dir, name, &crf__mem__mm_entry__descriptor, &img);
	if (r >= 0 && (r = crf_img_read(img, (ProtobufCMessage **)&first)) == 0)
		r = crf_error_errno(EBADMSG, "%s/%s: no records", crf_imgdir_path(dir), name);
	if (r > 0)
		r = check_first(&w, first, pid);
	while (r >= 0 && (r = crf_img_read(img, (ProtobufCMessage **)&e)) > 0) {
		w.rec++;
		if (e->entry_case == CRF__MEM__MM_ENTRY__ENTRY_VMA)
			r = mem_check_vma(&w, e->vma);
		else if (e->entry_case == CRF__MEM__MM_ENTRY__ENTRY_PAGES)
			r = mem_check_pages(&w, e->pages);
		else
			r = bad(&w, "MmEntry: not a Vma or PageRuns");
		/* Page runs refer to their mapping: keep it until the next. */
		if (e->entry_case == CRF__MEM__MM_ENTRY__ENTRY_VMA) {
			if (vma)
				protobuf_c_message_free_unpacked(&vma->base, NULL);
			vma = e;
		} else {
			protobuf_c_message_free_unpacked(&e->base, NULL);
		}
	}
	if (r == 0)
		r = mem_check_end(&w, first->mm);
	if (vma)
		protobuf_c_message_free_unpacked(&vma->base, NULL);
	if (first)
		protobuf_c_message_free_unpacked(&first->base, NULL);
	return r;
}

/* A shared memory object: the object first, named as its file, then data inside it. */
static int check_shmem_file(struct crf_imgdir *dir, const char *name, bool sysv, uint64_t dev,
			    uint64_t inode)
{
	_cleanup_img_ struct crf_img *img = NULL;
	struct mem_mm_walk w = {.dir = dir, .name = name};
	Crf__Mem__ShmemEntry *e;
	uint64_t size = 0;
	int r = crf_img_open(dir, name, &crf__mem__shmem_entry__descriptor, &img);

	while (r >= 0 && (r = crf_img_read(img, (ProtobufCMessage **)&e)) > 0) {
		const Crf__Mem__ShmemObject *o = e->object;
		const Crf__Mem__ShmemData *d = e->data;

		if (!w.rec && e->entry_case != CRF__MEM__SHMEM_ENTRY__ENTRY_OBJECT)
			r = bad(&w, "ShmemEntry: the first record is not the object");
		else if (!w.rec && (o->dev != dev || o->inode != inode || !o->size ||
				    (o->kind == CRF__MEM__SHMEM_KIND__SHMEM_SYSV) != sysv ||
				    o->kind < CRF__MEM__SHMEM_KIND__SHMEM_ANON ||
				    o->kind > CRF__MEM__SHMEM_KIND__SHMEM_SYSV))
			r = bad(&w,
				"ShmemObject: kind %d, %" PRIu64 "-%" PRIu64 " of %" PRIu64
				" bytes: not the object the file is named for",
				(int)o->kind, o->dev, o->inode, o->size);
		else if (!w.rec && o->kind == CRF__MEM__SHMEM_KIND__SHMEM_MEMFD && !o->name)
			r = bad(&w, "ShmemObject.name: a memfd without a name");
		else if (!w.rec)
			size = o->size;
		else if (e->entry_case != CRF__MEM__SHMEM_ENTRY__ENTRY_DATA || d->off > size ||
			 d->data.len > size - d->off)
			r = bad(&w, "ShmemData.off: outside the object of %" PRIu64 " bytes", size);
		protobuf_c_message_free_unpacked(&e->base, NULL);
		w.rec++;
	}
	if (r == 0 && !w.rec)
		r = crf_error_errno(EBADMSG, "%s/%s: no records", crf_imgdir_path(dir), name);
	return r;
}

/* shmem-DEV-INODE.img and shmem-sysv-ID.img, the numbers as crf writes them. */
static int shmem_name(struct crf_imgdir *dir, const char *name)
{
	unsigned long long dev, inode;
	char again[96];
	int id;

	if (sscanf(name, "shmem-sysv-%d.img", &id) == 1 && id >= 0) {
		snprintf(again, sizeof(again), "shmem-sysv-%d.img", id);
		return strcmp(again, name) ? 0 : check_shmem_file(dir, name, true, 0, (uint64_t)id);
	}
	if (sscanf(name, "shmem-%llu-%llu.img", &dev, &inode) != 2)
		return 0;
	snprintf(again, sizeof(again), "shmem-%llu-%llu.img", dev, inode);
	return strcmp(again, name) ? 0 : check_shmem_file(dir, name, false, dev, inode);
}

static int each_shmem(struct crf_imgdir *dir)
{
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	int fd, r = 0;

	fd = openat(crf_imgdir_fd(dir), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		r = crf_error_errno(errno, "%s", crf_imgdir_path(dir));
		if (fd >= 0)
			close(fd);
		return r;
	}
	while (r >= 0 && (errno = 0, de = readdir(d)))
		r = shmem_name(dir, de->d_name);
	if (r >= 0 && errno)
		r = crf_error_errno(errno, "%s", crf_imgdir_path(dir));
	return r;
}

int mem_validate(struct crf_imgdir *dir)
{
	int r = crf_imgdir_each_task(dir, "mm", check_mm_file, dir);

	return r < 0 ? r : each_shmem(dir);
}
