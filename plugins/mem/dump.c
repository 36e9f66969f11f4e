// SPDX-License-Identifier: GPL-2.0-only
/*
 * One task's mappings, mm fields and pages.  Only the current break needs
 * the parasite (dump-task); the rest is read from outside in
 * dump-task-data, after the parasite is out, so that a crf killed during
 * the long page copy leaves the task as it was (crf/plugin.h).
 *
 * Every mapping is classified before anything is written, so that a task
 * holding memory the plugin cannot restore is refused with one message that
 * names the mapping, before any image exists.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/image.h>
#include <crf/log.h>
#include <crf/parasite.h>
#include <crf/plugin.h>
#include <crf/restore.h>

#include "cow.h"
#include "live.h"
#include "mem.h"
#include "mmfields.h"
#include "pagemap.h"
#include "pages.h"
#include "shmem.h"
#include "sysv.h"
#include "smaps.h"

/* PageRun records are split so that a record stays small (about 20 bytes a run). */
#define RUNS_PER_RECORD 16384

struct dump {
	struct crf_ctx *ctx;
	pid_t pid;
	size_t page_size;
	struct smaps maps;
	int *kinds;		       /* enum mem_kind of each mapping, MEM_SKIP to leave out */
	struct crf_kind_owner *claims; /* of each mapping: who claims it (registry) */
	uint32_t n_vmas;	       /* mappings to save */
	uint32_t mlockall;	       /* MCL_FUTURE | MCL_ONFAULT of mappings made later */
	struct crf_rst_mm mm;
	Crf__Mem__FileRef *exe;
	struct crf_img *img, *blob;
	char blob_name[64];
	struct mem_pagemap pm;
	struct mem_pages pages;
	struct mem_cow cow; /* pages still shared with the parent */
	struct timespec t0;
	/*
	 * A live dump (live.c): the records from the first mapping on wait in
	 * @q, packed, until dump-live has copied the live mappings' pages.
	 */
	struct mem_live *live;
	bool deferring;
	struct rec *q;
	size_t n_q, cap_q;
};

/* A deferred record, or (@buf NULL) the runs of live mapping @live_idx. */
struct rec {
	uint8_t *buf;
	size_t len, live_idx;
};

static int push_rec(struct dump *d, struct rec r)
{
	if (d->n_q == d->cap_q) {
		size_t cap = d->cap_q ? 2 * d->cap_q : 64;
		struct rec *q = realloc(d->q, cap * sizeof(*q));

		if (!q) {
			free(r.buf);
			return crf_error_errno(ENOMEM, "records of task %d", (int)d->pid);
		}
		d->q = q;
		d->cap_q = cap;
	}
	d->q[d->n_q++] = r;
	return 0;
}

/* Write a record to mm-PID.img, or keep it for after the live copy. */
static int emit(struct dump *d, const ProtobufCMessage *m)
{
	struct rec r = {.len = protobuf_c_message_get_packed_size(m)};

	if (!d->deferring)
		return crf_img_write(d->img, m);
	r.buf = malloc(r.len ? r.len : 1);
	if (!r.buf)
		return crf_error_errno(ENOMEM, "records of task %d", (int)d->pid);
	protobuf_c_message_pack(m, r.buf);
	return push_rec(d, r);
}

static void describe_vma(char *buf, size_t len, const struct smaps_vma *v)
{
	snprintf(buf, len, "%llx-%llx %c%c%c%c %s", (unsigned long long)v->start,
		 (unsigned long long)v->end, v->prot & PROT_READ ? 'r' : '-',
		 v->prot & PROT_WRITE ? 'w' : '-', v->prot & PROT_EXEC ? 'x' : '-',
		 v->shared ? 's' : 'p', v->name);
}

static int read_maps(struct dump *d, struct smaps *kept)
{
	_cleanup_fclose_ FILE *f = NULL;
	char path[64];

	/* What dump-task read, the task frozen since (only its parasite gone: punched below). */
	if (kept && kept->n) {
		d->maps = *kept;
		*kept = (struct smaps){0};
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)d->pid);
	f = fopen(path, "re");
	if (!f)
		return crf_error_errno(errno, "open %s", path);
	return smaps_parse(f, &d->maps);
}

/*
 * The parasite's memory is crf's, not the task's: cut its whole range (code,
 * stack, arguments, scratch; several VMAs) out of the list, so that none of
 * it is saved or comes back at restore.  Without a parasite (unit tests)
 * there is nothing to cut.
 */
static int punch_parasite(struct dump *d)
{
	uint64_t start, len;
	int r;

	r = crf_parasite_mapping(d->ctx, &start, &len);
	if (r == -ENOTCONN)
		return 0;
	if (r < 0)
		return r;
	if (smaps_punch(&d->maps, start, start + len))
		return crf_error_errno(ENOMEM, "mappings of task %d", (int)d->pid);
	return 0;
}

/*
 * Whether mapping @i is another plugin's: the registry's answer for the
 * object the core dispatched for it (crf_vma_object), not mem's own
 * classification, decides.  1 (foreign, d->claims[i] says whose), 0 (mem's),
 * or -errno.
 */
static int claimed(struct dump *d, size_t i)
{
	const struct smaps_vma *v = &d->maps.v[i];
	struct crf_vma_info vi = {
		.size = sizeof(vi),
		.start = v->start,
		.end = v->end,
		.pgoff = v->pgoff,
		.prot = v->prot,
		.flags = v->shared ? MAP_SHARED : MAP_PRIVATE,
		.path = v->name,
		.dev_major = v->dev_major,
		.dev_minor = v->dev_minor,
		.inode = v->inode,
	};
	struct crf_object obj;
	char desc[4200];
	int r;

	crf_vma_object(&vi, d->pid, (int)i, desc, sizeof(desc), &obj);
	r = crf_kind_owner(d->ctx, &obj, &d->claims[i]);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	return strcmp(d->claims[i].plugin, crf_ctx_plugin(d->ctx)) != 0;
}

static int classify(struct dump *d)
{
	char desc[256];
	const char *why;
	int kind;

	d->kinds = calloc(d->maps.n ? d->maps.n : 1, sizeof(*d->kinds));
	d->claims = calloc(d->maps.n ? d->maps.n : 1, sizeof(*d->claims));
	if (!d->kinds || !d->claims)
		return crf_error_errno(ENOMEM, "mappings of task %d", (int)d->pid);
	for (size_t i = 0; i < d->maps.n; i++) {
		const struct smaps_vma *v = &d->maps.v[i];

		kind = claimed(d, i);
		if (kind < 0)
			return kind;
		/* Its handler saves it, and refuses what it cannot restore. */
		if (kind) {
			d->kinds[i] = MEM_FOREIGN;
			d->n_vmas++;
			continue;
		}
		if (!v->has_vmflags)
			return crf_error_errno(EINVAL, "smaps of task %d: no VmFlags for %llx",
					       (int)d->pid, (unsigned long long)v->start);
		describe_vma(desc, sizeof(desc), v);
		/* A flag this crf does not know is state it would lose. */
		if (v->unknown[0])
			return crf_error_errno(ENOTSUP,
					       "pid %d: cannot dump mapping %s: VmFlags '%s' is a "
					       "flag this crf does not know",
					       (int)d->pid, desc, v->unknown);
		/* The key's allocation and its access rights (PKRU) are not restored. */
		if (v->pkey)
			return crf_error_errno(ENOTSUP,
					       "pid %d: cannot dump mapping %s: it has memory "
					       "protection key %u (pkey_mprotect), which crf does "
					       "not restore",
					       (int)d->pid, desc, v->pkey);
		kind = mem_vma_kind(v, &why);
		if (kind < 0) {
			return crf_error_errno(ENOTSUP, "pid %d: cannot dump mapping %s: %s",
					       (int)d->pid, desc, why);
		}
		d->kinds[i] = kind;
		d->n_vmas += kind != MEM_SKIP;
	}
	return 0;
}

/*
 * The parasite's area was mmap()ed by the task just now, so its VmFlags
 * show what the task gives every new mapping: "lo" (and "lf") after
 * mlockall(MCL_FUTURE [| MCL_ONFAULT]), "mg" after prctl(PR_SET_MEMORY_MERGE).
 * Read while the parasite is in (dump-task).
 */
static int read_def_flags(struct crf_ctx *ctx, pid_t pid, uint32_t *mlockall, struct smaps *keep)
{
	struct smaps maps = {0};
	uint64_t start, len, f = 0;
	_cleanup_fclose_ FILE *file = NULL;
	char path[64];
	int r;

	r = crf_parasite_mapping(ctx, &start, &len);
	if (r < 0)
		return r == -ENOTCONN ? 0 : r;
	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	file = fopen(path, "re");
	if (!file)
		return crf_error_errno(errno, "open %s", path);
	r = smaps_parse(file, &maps);
	for (size_t i = 0; r >= 0 && i < maps.n; i++)
		if (maps.v[i].start < start + len && start < maps.v[i].end)
			f |= maps.v[i].vmflags;
	/* Kept for dump-task-data (--live: one walk of the page tables fewer while frozen). */
	if (r >= 0 && keep) {
		smaps_free(keep);
		*keep = maps;
	} else {
		smaps_free(&maps);
	}
	if (r < 0)
		return r;
	if (f & VMF_MG)
		return crf_error_errno(ENOTSUP,
				       "pid %d: KSM merging of every mapping "
				       "(prctl PR_SET_MEMORY_MERGE) is not restored",
				       (int)pid);
	*mlockall = f & VMF_LO ? MCL_FUTURE | (f & VMF_LF ? MCL_ONFAULT : 0) : 0;
	return 0;
}

/* What dump-task saw of the task, for its dump-task-data; and a live dump's state. */
struct mem_brk {
	pid_t pid;
	uint64_t brk;
	uint32_t mlockall;	/* MCL_* of mappings made later */
	struct mem_live *live;	/* --live: every task's userfaultfd and pages */
	struct dump **deferred; /* --live: tasks whose images dump-live completes */
	size_t n_deferred;
	struct smaps maps; /* --live: the mappings dump-task read, for dump-task-data */
};

/* brk(0) run by the task itself gives its current break; and the flags new mappings get. */
int mem_dump_task(struct crf_ctx *ctx)
{
	struct mem_brk *b = crf_ctx_priv(ctx);
	long args[6] = {0};
	long brk;

	uint32_t mlockall = 0;
	int r;

	if (!b) {
		b = calloc(1, sizeof(*b));
		if (!b)
			return crf_error_errno(ENOMEM, "task %d", (int)crf_ctx_pid(ctx));
		crf_ctx_set_priv(ctx, b);
	}
	brk = crf_parasite_syscall(ctx, __NR_brk, args);
	if (brk == -ENOTCONN)
		return 0;
	if (brk < 0)
		return crf_error_errno((int)-brk, "brk(0) in task %d", (int)crf_ctx_pid(ctx));
	r = read_def_flags(ctx, crf_ctx_pid(ctx), &mlockall,
			   mem_live_wanted(ctx) ? &b->maps : NULL);
	if (r < 0)
		return r;
	b->pid = crf_ctx_pid(ctx);
	b->brk = (uint64_t)brk;
	b->mlockall = mlockall;
	/* The userfaultfd must be the task's own: made by it, now. */
	if (mem_live_wanted(ctx))
		r = mem_live_task_open(ctx, &b->live);
	return r;
}

static int dump_end(struct dump *d, int r);

int mem_dump_cleanup(struct crf_ctx *ctx)
{
	struct mem_brk *b = crf_ctx_priv(ctx);

	/* A dump that failed before dump-live: drop its images' state, then the registrations. */
	for (size_t i = 0; b && i < b->n_deferred; i++) {
		dump_end(b->deferred[i], -ECANCELED);
		free(b->deferred[i]);
	}
	if (b) {
		free(b->deferred);
		mem_live_free(b->live);
		smaps_free(&b->maps);
	}
	free(b);
	crf_ctx_set_priv(ctx, NULL);
	return 0;
}

static int read_brk(struct dump *d)
{
	const struct mem_brk *b = crf_ctx_priv(d->ctx);

	if (b && b->pid == d->pid) {
		d->mm.brk = b->brk;
		d->mlockall = b->mlockall;
		return 0;
	}
	/* Only without a parasite (unit tests): the heap's end is page-rounded. */
	d->mm.brk = d->mm.start_brk;
	for (size_t i = 0; i < d->maps.n; i++)
		if (!strcmp(d->maps.v[i].name, "[heap]"))
			d->mm.brk = d->maps.v[i].end;
	crf_warn("no parasite to run brk(0) in task %d: brk taken from the end of [heap], %#llx",
		 (int)d->pid, (unsigned long long)d->mm.brk);
	return 0;
}

static int read_mm(struct dump *d)
{
	char link[64];
	int r;

	r = mem_read_mm(d->pid, &d->mm);
	if (r < 0)
		return r;
	r = read_brk(d);
	if (r < 0)
		return r;
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)d->pid);
	return mem_fileref_read(link, &d->exe);
}

static int write_header(struct dump *d)
{
	Crf__Mem__MmEntry e = CRF__MEM__MM_ENTRY__INIT;
	Crf__Mem__Mm mm = CRF__MEM__MM__INIT;
	Crf__Mem__MmFields f = CRF__MEM__MM_FIELDS__INIT;

#define COPY_FIELD(name) f.name = d->mm.name;
	CRF_MM_FIELDS(COPY_FIELD)
#undef COPY_FIELD
	f.n_auxv = d->mm.auxv_len;
	f.auxv = d->mm.auxv;
	f.exe = d->exe;
	mm.fields = &f;
	mm.n_vmas = d->n_vmas;
	mm.page_size = d->page_size;
	mm.pages = d->blob_name;
	mm.has_mlockall = d->mlockall != 0;
	mm.mlockall = d->mlockall;
	mm.has_cow_parent = d->cow.parent != 0;
	mm.cow_parent = d->cow.parent;
	e.entry_case = CRF__MEM__MM_ENTRY__ENTRY_MM;
	e.mm = &mm;
	return crf_img_write(d->img, &e.base);
}

static Crf__Mem__VmaKind proto_kind(enum mem_kind kind)
{
	switch (kind) {
	case MEM_FILE_PRIVATE:
		return CRF__MEM__VMA_KIND__FILE_PRIVATE;
	case MEM_FILE_SHARED:
		return CRF__MEM__VMA_KIND__FILE_SHARED;
	case MEM_VDSO:
		return CRF__MEM__VMA_KIND__VDSO;
	case MEM_VVAR:
		return CRF__MEM__VMA_KIND__VVAR;
	case MEM_VVAR_VCLOCK:
		return CRF__MEM__VMA_KIND__VVAR_VCLOCK;
	case MEM_ANON_SHARED:
		return CRF__MEM__VMA_KIND__ANON_SHARED;
	case MEM_MEMFD:
		return CRF__MEM__VMA_KIND__MEMFD;
	case MEM_SYSV:
		return CRF__MEM__VMA_KIND__SYSV_SHM;
	case MEM_FOREIGN:
		return CRF__MEM__VMA_KIND__FOREIGN;
	default:
		return CRF__MEM__VMA_KIND__ANON_PRIVATE;
	}
}

/* Save the pages of mapping @v, leaving its runs in d->pages. */
static int dump_pages(struct dump *d, const struct smaps_vma *v, enum mem_kind kind)
{
	int r;

	/* A fresh anonymous mapping reads as zero: zero pages stay out. */
	mem_pages_begin(&d->pages, kind == MEM_ANON_PRIVATE, v->prot & PROT_READ);
	if (kind == MEM_ANON_PRIVATE || kind == MEM_FILE_PRIVATE)
		r = mem_pagemap_walk(&d->pm, v->start, v->end, mem_pages_add, &d->pages);
	else
		return 0;
	if (r >= 0)
		r = mem_pages_flush(&d->pages);
	return r;
}

static int write_runs(struct dump *d)
{
	Crf__Mem__MmEntry e = CRF__MEM__MM_ENTRY__INIT;
	Crf__Mem__PageRuns pr = CRF__MEM__PAGE_RUNS__INIT;
	size_t total = d->pages.n_runs, max = total < RUNS_PER_RECORD ? total : RUNS_PER_RECORD;
	_cleanup_free_ Crf__Mem__PageRun *runs = NULL, **ptrs = NULL;
	int r = 0;

	if (!total)
		return 0;
	runs = calloc(max, sizeof(*runs));
	ptrs = calloc(max, sizeof(*ptrs));
	if (!runs || !ptrs)
		return crf_error_errno(ENOMEM, "page run records");
	e.entry_case = CRF__MEM__MM_ENTRY__ENTRY_PAGES;
	e.pages = &pr;
	pr.runs = ptrs;
	for (size_t done = 0; r >= 0 && done < total; done += pr.n_runs) {
		pr.n_runs = total - done < max ? total - done : max;
		for (size_t i = 0; i < pr.n_runs; i++) {
			const struct mem_run *m = &d->pages.runs[done + i];

			crf__mem__page_run__init(&runs[i]);
			runs[i].vaddr = m->vaddr;
			runs[i].len = m->len;
			runs[i].off = m->off;
			ptrs[i] = &runs[i];
		}
		r = emit(d, &e.base);
	}
	return r;
}

/* The pages of mapping @i still shared with the parent, after its page runs. */
static int write_shared(struct dump *d, size_t i)
{
	Crf__Mem__MmEntry e = CRF__MEM__MM_ENTRY__INIT;
	Crf__Mem__PageRuns pr = CRF__MEM__PAGE_RUNS__INIT;
	const struct mem_ranges *g = &d->cow.shared[i];
	size_t total = g->n / 2, max = total < RUNS_PER_RECORD ? total : RUNS_PER_RECORD;
	_cleanup_free_ Crf__Mem__PageRange *ranges = NULL, **ptrs = NULL;
	int r = 0;

	if (!total)
		return 0;
	ranges = calloc(max, sizeof(*ranges));
	ptrs = calloc(max, sizeof(*ptrs));
	if (!ranges || !ptrs)
		return crf_error_errno(ENOMEM, "shared page records");
	e.entry_case = CRF__MEM__MM_ENTRY__ENTRY_PAGES;
	e.pages = &pr;
	pr.shared = ptrs;
	for (size_t done = 0; r >= 0 && done < total; done += pr.n_shared) {
		pr.n_shared = total - done < max ? total - done : max;
		for (size_t k = 0; k < pr.n_shared; k++) {
			crf__mem__page_range__init(&ranges[k]);
			ranges[k].vaddr = g->v[2 * (done + k)];
			ranges[k].len = g->v[2 * (done + k) + 1] - ranges[k].vaddr;
			ptrs[k] = &ranges[k];
		}
		r = emit(d, &e.base);
	}
	return r;
}

/* A mapping another plugin claimed: its range and who, none of its pages. */
static int dump_foreign(struct dump *d, size_t i)
{
	const struct smaps_vma *v = &d->maps.v[i];
	const struct crf_kind_owner *c = &d->claims[i];
	Crf__Mem__MmEntry e = CRF__MEM__MM_ENTRY__INIT;
	Crf__Mem__Vma vma = CRF__MEM__VMA__INIT;

	vma.start = v->start;
	vma.end = v->end;
	vma.kind = CRF__MEM__VMA_KIND__FOREIGN;
	vma.prot = v->prot;
	vma.flags = v->shared ? MAP_SHARED : MAP_PRIVATE;
	vma.madv = 0;
	vma.has_pgoff = true;
	vma.pgoff = v->pgoff;
	vma.name = v->name[0] ? v->name : NULL;
	vma.vmflags = v->vmflags_text;
	vma.claim_kind = (char *)c->kind->name;
	vma.claim_plugin = (char *)c->plugin;
	vma.claim_version = (char *)c->version;
	e.entry_case = CRF__MEM__MM_ENTRY__ENTRY_VMA;
	e.vma = &vma;
	return emit(d, &e.base);
}

static int dump_vma(struct dump *d, size_t i)
{
	const struct smaps_vma *v = &d->maps.v[i];
	enum mem_kind kind = d->kinds[i];
	struct mem_ranges guards = {0};
	Crf__Mem__MmEntry e = CRF__MEM__MM_ENTRY__INIT;
	Crf__Mem__Vma vma = CRF__MEM__VMA__INIT;
	char link[96];
	size_t live_idx = 0;
	int r, live = 0;

	vma.start = v->start;
	vma.end = v->end;
	vma.kind = proto_kind(kind);
	vma.prot = v->prot;
	vma.flags = mem_vma_map_flags(kind, v->vmflags);
	vma.madv = mem_vma_madv(v->vmflags);
	vma.name = v->name[0] ? v->name : NULL;
	vma.vmflags = v->vmflags_text;
	if (kind == MEM_FILE_PRIVATE || kind == MEM_FILE_SHARED) {
		vma.has_pgoff = true;
		vma.pgoff = v->pgoff;
		snprintf(link, sizeof(link), "/proc/%d/map_files/%llx-%llx", (int)d->pid,
			 (unsigned long long)v->start, (unsigned long long)v->end);
		r = mem_fileref_read(link, &vma.file);
		if (r < 0)
			return r;
	}
	if (kind == MEM_ANON_SHARED || kind == MEM_MEMFD) {
		/* The pages are the object's, saved once for the tree. */
		vma.has_pgoff = vma.has_shm_dev = vma.has_shm_inode = true;
		vma.pgoff = v->pgoff;
		r = mem_shm_dump(d->ctx, d->pid, v, kind, &vma.shm_dev, &vma.shm_inode);
		if (r < 0)
			return r;
	}
	if (kind == MEM_SYSV) {
		/* The pages are the segment's, saved once for the tree. */
		vma.has_shmid = true;
		r = mem_sysv_dump(d->ctx, d->pid, v, &vma.shmid, &vma.shm_ipc_ns);
		vma.has_shm_ipc_ns = vma.shm_ipc_ns != 0;
		if (r < 0)
			return r;
	}
	/* "gu" stays once a guard was installed: there may be none left. */
	r = 0;
	if (v->vmflags & VMF_GU)
		r = mem_pagemap_walk_guards(&d->pm, v->start, v->end, mem_ranges_add, &guards);
	vma.n_guards = guards.n;
	vma.guards = guards.v;
	/* A live dump write-protects it now and copies it in dump-live. */
	if (r >= 0 && d->live && kind == MEM_ANON_PRIVATE)
		r = live = mem_live_vma(d->live, d->pid, v, &d->pm, &live_idx);
	if (r >= 0 && !live)
		r = dump_pages(d, v, kind);
	e.entry_case = CRF__MEM__MM_ENTRY__ENTRY_VMA;
	e.vma = &vma;
	if (r >= 0)
		r = emit(d, &e.base);
	mem_fileref_free(vma.file);
	free(guards.v);
	if (r >= 0 && live)
		r = push_rec(d, (struct rec){.live_idx = live_idx});
	else if (r >= 0)
		r = write_runs(d);
	if (r >= 0)
		r = write_shared(d, i);
	return r;
}

static int open_images(struct dump *d)
{
	struct crf_imgdir *dir = crf_ctx_images(d->ctx);
	char name[64];
	int r;

	snprintf(name, sizeof(name), "mm-%d.img", (int)d->pid);
	snprintf(d->blob_name, sizeof(d->blob_name), "pages-%d.img", (int)d->pid);
	r = crf_img_create(dir, name, &crf__mem__mm_entry__descriptor, &d->img);
	if (r < 0)
		return r;
	return crf_blob_create(dir, d->blob_name, &d->blob);
}

static int dump_all(struct dump *d)
{
	struct mem_brk *b = crf_ctx_priv(d->ctx);
	enum mem_read_method method;
	int r;

	r = mem_read_method_parse(crf_ctx_config(d->ctx, "read-method"), &method);
	if (r < 0)
		return r;
	r = read_maps(d, b && b->pid == d->pid ? &b->maps : NULL);
	if (r >= 0)
		r = punch_parasite(d);
	if (r >= 0)
		r = classify(d);
	if (r >= 0)
		r = read_mm(d);
	if (r >= 0)
		r = mem_cow_find(d->ctx, d->pid, &d->maps, d->kinds, &d->cow);
	if (r >= 0)
		r = open_images(d);
	if (r >= 0)
		r = write_header(d);
	if (r >= 0)
		r = mem_pagemap_open(&d->pm, d->pid, d->page_size);
	if (r >= 0)
		r = mem_pages_init(&d->pages, d->pid, method, d->blob, d->page_size);
	d->deferring = d->live != NULL;
	for (size_t i = 0; r >= 0 && i < d->maps.n; i++)
		if (d->kinds[i] == MEM_FOREIGN)
			r = dump_foreign(d, i);
		else if (d->kinds[i] != MEM_SKIP)
			r = dump_vma(d, i);
	return r;
}

static double elapsed(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) + (t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static int finish_images(struct dump *d, int r)
{
	int b = crf_img_finish(d->blob, r);

	r = crf_img_finish(d->img, r);
	return b < 0 ? b : r;
}

static void free_queue(struct dump *d)
{
	for (size_t i = 0; i < d->n_q; i++)
		free(d->q[i].buf);
	free(d->q);
	d->q = NULL;
	d->n_q = 0;
}

/* Close the images (failed if @r < 0), free @d's state; the totals on success. */
static int dump_end(struct dump *d, int r)
{
	double secs;
	int c;

	/* The blob is the page writer's until it has written everything. */
	c = mem_pages_finish(&d->pages);
	r = finish_images(d, r < 0 ? r : c);
	mem_pages_fini(&d->pages);
	mem_pagemap_close(&d->pm);
	mem_fileref_free(d->exe);
	mem_cow_free(&d->cow);
	free(d->kinds);
	free(d->claims);
	smaps_free(&d->maps);
	free_queue(d);
	if (r < 0)
		return r;
	secs = elapsed(&d->t0);
	crf_info("task %d: %u VMAs, %llu pages present, %llu zero pages skipped, %llu bytes "
		 "written in %.3f s (%.0f MiB/s)",
		 (int)d->pid, d->n_vmas, (unsigned long long)d->pages.present,
		 (unsigned long long)d->pages.zero, (unsigned long long)d->pages.bytes, secs,
		 secs > 0 ? d->pages.bytes / secs / (1 << 20) : 0.0);
	return 0;
}

int mem_dump_task_data(struct crf_ctx *ctx)
{
	struct mem_brk *b = crf_ctx_priv(ctx);
	struct dump *d = calloc(1, sizeof(*d)), **q;
	int r;

	if (!d)
		return crf_error_errno(ENOMEM, "task %d", (int)crf_ctx_pid(ctx));
	*d = (struct dump){
		.ctx = ctx,
		.pid = crf_ctx_pid(ctx),
		.page_size = mem_page_size(),
		.pm = {.fd = -1},
		.pages = {.mem_fd = -1},
		.live = b ? b->live : NULL,
	};
	clock_gettime(CLOCK_MONOTONIC, &d->t0);
	r = dump_all(d);
	/* Live: the images wait for dump-live, the tree having run meanwhile. */
	if (r >= 0 && d->deferring) {
		q = realloc(b->deferred, (b->n_deferred + 1) * sizeof(*q));
		if (q) {
			b->deferred = q;
			b->deferred[b->n_deferred++] = d;
			return 0;
		}
		r = crf_error_errno(ENOMEM, "task %d", (int)d->pid);
	}
	r = dump_end(d, r);
	free(d);
	return r;
}

/* The deferred records of @d in order, copying each live mapping where its runs go. */
static int replay(struct dump *d)
{
	Crf__Mem__MmEntry *e;
	int r = 0;

	d->deferring = false;
	for (size_t i = 0; r >= 0 && i < d->n_q; i++) {
		const struct rec *q = &d->q[i];

		if (!q->buf) {
			r = mem_live_copy(d->live, d->pid, q->live_idx, &d->pages);
			if (r >= 0)
				r = write_runs(d);
			continue;
		}
		e = crf__mem__mm_entry__unpack(NULL, q->len, q->buf);
		if (!e)
			return crf_error_errno(EINVAL, "a record of task %d", (int)d->pid);
		r = crf_img_write(d->img, &e->base);
		crf__mem__mm_entry__free_unpacked(e, NULL);
	}
	return r;
}

int mem_dump_live(struct crf_ctx *ctx)
{
	struct mem_brk *b = crf_ctx_priv(ctx);
	int r = 0, c;

	if (!b || !b->live)
		return 0;
	r = mem_live_classify(b->live);
	for (size_t i = 0; i < b->n_deferred; i++) {
		if (r >= 0)
			r = replay(b->deferred[i]);
		c = dump_end(b->deferred[i], r);
		if (r >= 0)
			r = c;
		free(b->deferred[i]);
	}
	b->n_deferred = 0;
	c = mem_live_end(b->live);
	if (r >= 0)
		r = c;
	/* Done: the program's memory is its own again. */
	mem_live_free(b->live);
	b->live = NULL;
	return r;
}
