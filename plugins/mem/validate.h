/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * validate.h - the mem plugin's images checked before the tree is forked.
 *
 * mem_validate() reads every mm-PID.img and shmem-*.img of a dump and
 * checks each record as restore-task and restore-prepare will use it; it
 * is the first thing mem's restore-prepare does, and what the fuzzer runs.
 * The checks of one mm record are the functions below, which restore-task
 * (restore.c) calls again on the records it acts on.
 */
#ifndef CRF_PLUGIN_MEM_VALIDATE_H
#define CRF_PLUGIN_MEM_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mm.pb-c.h"

struct crf_imgdir;

/* Where a walk over one mm-PID.img is. */
struct mem_mm_walk {
	struct crf_imgdir *dir;
	const char *name;	  /* "mm-PID.img", for messages */
	size_t rec;		  /* the index of the record being checked */
	uint64_t page_size;	  /* of the image (checked: this kernel's) */
	uint64_t blob_size;	  /* bytes of the pages image */
	uint64_t last_end;	  /* of the mapping before */
	uint32_t n_vmas;	  /* mappings seen */
	const Crf__Mem__Vma *cur; /* the mapping page runs belong to; NULL before the first */
};

/* The highest address a mapping may end at (5-level paging's task size). */
#define MEM_USER_END UINT64_C(0x00fffffffffff000)

/*
 * Record 0, the Mm: this kernel's page size, a pages image name, the mm
 * fields (auxv pairs ending with AT_NULL, mlockall flags).  0 or -errno
 * (logged: file, record, field).
 */
int mem_check_mm(struct mem_mm_walk *w, const Crf__Mem__Mm *mm);

/*
 * A Vma: after the one before and not overlapping it, page-aligned, below
 * MEM_USER_END, protection and flags its kind allows, its object (memfd,
 * System V) named, guard regions inside it in order, a FOREIGN one's claim.
 * Makes it the current mapping.  0 or -EBADMSG (logged).
 */
int mem_check_vma(struct mem_mm_walk *w, const Crf__Mem__Vma *v);

/*
 * PageRuns: after an anonymous or private file mapping; each run non-empty,
 * page-aligned, inside that mapping and inside the pages image; each shared
 * range inside the mapping.  0 or -EBADMSG (logged).
 */
int mem_check_pages(struct mem_mm_walk *w, const Crf__Mem__PageRuns *pr);

/* At the end marker: as many mappings as the Mm announced.  0 or -EBADMSG (logged). */
int mem_check_end(struct mem_mm_walk *w, const Crf__Mem__Mm *mm);

/*
 * Every mm-PID.img (a live process of the dump, the records as above, its
 * cow_parent a live process too) and every shmem-*.img (the object first,
 * of its file's name, non-empty; its data inside it) of @dir.  Reads @dir
 * only.  0 or -errno (logged).
 */
int mem_validate(struct crf_imgdir *dir);

#endif
