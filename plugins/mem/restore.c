// SPDX-License-Identifier: GPL-2.0-only
/*
 * restore-task: describe the saved address space to the core, which hands it
 * to the restorer.  Runs inside the freshly forked task.
 *
 * Nothing read from the image is trusted: mappings must be page-aligned and
 * in increasing order, page runs must lie inside the mapping they follow and
 * inside the pages blob, and every file must be the one of the dump.
 *
 * Ownership: an fd passed in crf_rst_add_vma() or crf_rst_set_mm(), and
 * the pages blob passed in crf_rst_add_pages(), belong to the core from the
 * call on, whether it succeeds or not.  The core's services log their own
 * failures.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <crf/image.h>
#include <crf/log.h>
#include <crf/plugin.h>
#include <crf/restore.h>

#include "mem.h"
#include "mm.pb-c.h"
#include "mmfields.h"
#include "shmem.h"
#include "smaps.h"
#include "validate.h"
#include "vdso.h"

struct restore {
	struct crf_ctx *ctx;
	char name[64]; /* of the mm image, for messages */
	struct crf_img *img, *blob;
	bool blob_handed;
	Crf__Mem__Mm *mm; /* the header record */
	/* Where the records are, checked as restore-prepare checked them (validate.h). */
	struct mem_mm_walk w;
	bool cur_premapped; /* made before the fork, pages in (premap.h) */
	Crf__Mem__MmEntry *cur_rec;
	struct mem_vdso_layout vdso;
};

static int read_header(struct restore *s)
{
	Crf__Mem__MmEntry *e = NULL;
	int r;

	r = crf_img_read(s->img, (ProtobufCMessage **)&e);
	if (r == 0)
		return crf_error_errno(ENODATA, "%s: no records", s->name);
	if (r < 0)
		return r;
	if (e->entry_case != CRF__MEM__MM_ENTRY__ENTRY_MM) {
		protobuf_c_message_free_unpacked(&e->base, NULL);
		return crf_error_errno(EBADMSG, "%s: the first record is not the mm", s->name);
	}
	s->mm = e->mm;
	e->mm = NULL;
	e->entry_case = CRF__MEM__MM_ENTRY__ENTRY__NOT_SET;
	protobuf_c_message_free_unpacked(&e->base, NULL);
	r = mem_check_mm(&s->w, s->mm);
	if (r >= 0)
		r = crf_blob_open(crf_ctx_images(s->ctx), s->mm->pages, &s->blob);
	if (r < 0)
		return r;
	s->w.blob_size = crf_blob_size(s->blob);
	return 0;
}

/* Open the file of a file-backed mapping; the fd or -errno (logged). */
static int open_vma_file(const Crf__Mem__Vma *v)
{
	bool may_write;

	if (!v->file)
		return crf_error_errno(EBADMSG, "mapping at %#llx: no file recorded",
				       (unsigned long long)v->start);
	/* A shared mapping that may become writable needs a writable file. */
	may_write = v->vmflags ? smaps_vmflags(v->vmflags, NULL) & VMF_MW : v->prot & PROT_WRITE;
	if (v->kind == CRF__MEM__VMA_KIND__FILE_SHARED && may_write)
		return mem_fileref_open(v->file, O_RDWR);
	return mem_fileref_open(v->file, O_RDONLY);
}

static bool kind_is_anon(Crf__Mem__VmaKind kind)
{
	return kind == CRF__MEM__VMA_KIND__ANON_PRIVATE || kind == CRF__MEM__VMA_KIND__ANON_SHARED;
}

/* "[anon:NAME]" -> "NAME": the name prctl(PR_SET_VMA_ANON_NAME) gave it. */
static const char *anon_name(const Crf__Mem__Vma *v, char *buf, size_t len)
{
	static const char prefix[] = "[anon:", shprefix[] = "[anon_shmem:";
	const char *n = v->name;
	size_t k;

	if (!n || !kind_is_anon(v->kind))
		return NULL;
	if (!strncmp(n, prefix, sizeof(prefix) - 1))
		n += sizeof(prefix) - 1;
	else if (!strncmp(n, shprefix, sizeof(shprefix) - 1))
		n += sizeof(shprefix) - 1;
	else
		return NULL;
	k = strlen(n);
	if (!k || n[k - 1] != ']' || k >= len)
		return NULL;
	memcpy(buf, n, k - 1);
	buf[k - 1] = '\0';
	return buf;
}

/* Where the restore-premap stage made mapping @v, or 0. */
static uint64_t premap_slot(const struct restore *s, const Crf__Mem__Vma *v)
{
	const struct mem_shm *m = crf_ctx_priv(s->ctx);

	return m ? mem_premap_slot(m->premap, crf_ctx_pid(s->ctx), v->start, v->end) : 0;
}

static int add_vma(struct restore *s, const Crf__Mem__Vma *v)
{
	char name[96];
	struct crf_rst_vma rv = {
		.start = v->start,
		.end = v->end,
		.prot = v->prot,
		.flags = v->flags,
		.fd = -1,
		.pgoff = v->pgoff,
		.madv = v->madv,
		/* Images before the flags were saved get what they always got. */
		.vm = v->vmflags ? mem_vma_rst_vm(smaps_vmflags(v->vmflags, NULL)) : 0,
		.anon_name = anon_name(v, name, sizeof(name)),
		.guards = v->guards,
		.n_guards = (uint32_t)v->n_guards / 2,
		.premap = s->cur_premapped ? premap_slot(s, v) : 0,
	};

	/*
	 * Shared memory objects were made once for the tree (restore-prepare):
	 * every task maps the same one.  Shared anonymous memory of an image
	 * without its object comes back as a new object of the task's own.
	 */
	/* Attached again by the restorer; restore-prepare made the segment. */
	if (v->kind == CRF__MEM__VMA_KIND__SYSV_SHM) {
		rv.sysv = 1;
		rv.shmid = v->shmid;
	} else if (v->has_shm_dev && v->has_shm_inode) {
		rv.flags &= ~MAP_ANONYMOUS;
		rv.fd = mem_shm_restore_fd(s->ctx, v->shm_dev, v->shm_inode);
		if (rv.fd < 0)
			return rv.fd;
	} else if (!kind_is_anon(v->kind)) {
		rv.fd = open_vma_file(v);
		if (rv.fd < 0)
			return rv.fd;
	}
	return crf_rst_add_vma(s->ctx, &rv);
}

/*
 * A mapping another plugin claimed at the dump: its handler (by the name
 * recorded, of the plugin recorded) describes it with crf_rst_add_vma() and
 * crf_rst_add_pages(), here, in mem's restore-task, in address order with
 * mem's own mappings.
 */
static int restore_foreign(struct restore *s, const Crf__Mem__Vma *v)
{
	struct crf_vma_info vi = {
		.size = sizeof(vi),
		.start = v->start,
		.end = v->end,
		.pgoff = v->pgoff,
		.prot = (int)v->prot,
		.flags = (int)v->flags,
		.path = v->name ? v->name : "",
	};
	struct crf_object obj;
	char desc[4200];

	crf_vma_object(&vi, crf_ctx_pid(s->ctx), (int)s->w.n_vmas - 1, desc, sizeof(desc), &obj);
	obj.kind = v->claim_kind;
	return crf_kind_restore(s->ctx, &obj, v->claim_plugin);
}

static int on_vma(struct restore *s, const Crf__Mem__Vma *v)
{
	int r = mem_check_vma(&s->w, v);

	if (r < 0)
		return r;
	if (v->kind == CRF__MEM__VMA_KIND__FOREIGN) {
		s->cur_premapped = false;
		return restore_foreign(s, v);
	}
	s->cur_premapped = premap_slot(s, v) != 0;
	switch (v->kind) {
	case CRF__MEM__VMA_KIND__VDSO:
		mem_vdso_layout_add(&s->vdso, MEM_VDSO, v->start, v->end);
		return 0;
	case CRF__MEM__VMA_KIND__VVAR:
		mem_vdso_layout_add(&s->vdso, MEM_VVAR, v->start, v->end);
		return 0;
	case CRF__MEM__VMA_KIND__VVAR_VCLOCK:
		mem_vdso_layout_add(&s->vdso, MEM_VVAR_VCLOCK, v->start, v->end);
		return 0;
	default:
		return add_vma(s, v);
	}
}

static int on_pages(struct restore *s, const Crf__Mem__PageRuns *pr)
{
	int r = mem_check_pages(&s->w, pr);

	/* Its pages are in already: the restore-premap stage read them. */
	if (r < 0 || s->cur_premapped)
		return r;
	for (size_t i = 0; i < pr->n_runs; i++) {
		const Crf__Mem__PageRun *run = pr->runs[i];

		s->blob_handed = true;
		r = crf_rst_add_pages(s->ctx, s->blob, run->vaddr, run->len, run->off);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The records after the header; 0 at the end marker or -errno. */
static int read_records(struct restore *s)
{
	Crf__Mem__MmEntry *e;
	int r;

	while ((r = crf_img_read(s->img, (ProtobufCMessage **)&e)) > 0) {
		s->w.rec++;
		if (e->entry_case == CRF__MEM__MM_ENTRY__ENTRY_VMA) {
			/* Page runs refer to their mapping: keep it until the next. */
			if (s->cur_rec)
				protobuf_c_message_free_unpacked(&s->cur_rec->base, NULL);
			s->cur_rec = e;
			r = on_vma(s, e->vma);
			if (r < 0)
				return r;
			continue;
		}
		if (e->entry_case == CRF__MEM__MM_ENTRY__ENTRY_PAGES)
			r = on_pages(s, e->pages);
		else
			r = crf_error_errno(EBADMSG, "%s: record %zu: a second Mm", s->name,
					    s->w.rec);
		protobuf_c_message_free_unpacked(&e->base, NULL);
		if (r < 0)
			return r;
	}
	return r == 0 ? mem_check_end(&s->w, s->mm) : r;
}

static int set_mm(struct restore *s)
{
	const Crf__Mem__MmFields *f = s->mm->fields;
	struct crf_rst_mm mm = {
#define COPY_FIELD(name) .name = f->name,
		CRF_MM_FIELDS(COPY_FIELD)
#undef COPY_FIELD
			.exe_fd = -1,
		.mlockall = (int)s->mm->mlockall,
	};

	/* auxv and mlockall: checked by mem_check_mm(). */
	memcpy(mm.auxv, f->auxv, f->n_auxv * sizeof(mm.auxv[0]));
	mm.auxv_len = f->n_auxv;
	if (f->exe) {
		mm.exe_fd = mem_fileref_open(f->exe, O_RDONLY);
		if (mm.exe_fd < 0)
			return mm.exe_fd;
	}
	return crf_rst_set_mm(s->ctx, &mm);
}

static int set_vdso(struct restore *s)
{
	struct mem_vdso_layout here;
	char why[160];
	int r;

	if (!s->vdso.a[VDSO_VDSO].end)
		return 0;
	r = mem_vdso_layout_self(&here);
	if (r < 0)
		return r;
	if (mem_vdso_layout_check(&s->vdso, &here, why, sizeof(why)) < 0)
		return crf_error_errno(ENOTSUP, "cannot restore the vDSO: %s", why);
	return crf_rst_set_vdso(s->ctx, s->vdso.a[VDSO_VDSO].start);
}

int mem_restore_task(struct crf_ctx *ctx)
{
	struct restore s = {.ctx = ctx};
	int r;

	snprintf(s.name, sizeof(s.name), "mm-%d.img", (int)crf_ctx_pid(ctx));
	s.w = (struct mem_mm_walk){.dir = crf_ctx_images(ctx), .name = s.name};
	r = crf_img_open(crf_ctx_images(ctx), s.name, &crf__mem__mm_entry__descriptor, &s.img);
	if (r < 0)
		return r;
	r = read_header(&s);
	if (r >= 0)
		r = read_records(&s);
	if (r >= 0)
		r = set_mm(&s);
	if (r >= 0)
		r = set_vdso(&s);
	if (s.cur_rec)
		protobuf_c_message_free_unpacked(&s.cur_rec->base, NULL);
	if (s.mm)
		crf__mem__mm__free_unpacked(s.mm, NULL);
	if (s.blob && !s.blob_handed)
		crf_img_close(s.blob);
	crf_img_close(s.img);
	return r;
}
