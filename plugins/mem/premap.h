/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * premap.h - keeping the pages a child shares copy-on-write with its parent
 * shared across a restore.
 *
 * Each restored process forks its children while it still runs crf's code,
 * so it can only hand them its memory if that memory exists then: before it
 * forks them (the restore-premap stage) it maps the mappings its children
 * share pages of at free addresses of a zone reserved by restore-prepare,
 * with its pages, and each child takes its parent's copy, writes only the
 * pages it does not share and drops those it did not have.  The restorer
 * then moves every such mapping into place with mremap(), page tables and
 * all (crf_rst_vma.premap).
 */
#ifndef CRF_PLUGIN_MEM_PREMAP_H
#define CRF_PLUGIN_MEM_PREMAP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <crf/plugin.h>

/* One mapping of one task made before the fork. */
struct mem_premap_ent {
	pid_t pid;
	uint64_t start, end; /* its saved range */
	uint64_t slot;	     /* where it is made */
	pid_t from;	     /* the parent whose copy it takes (the same slot), or 0 */
	bool needed;	     /* children of pid take it */
	bool dirty;	     /* this process's copy of the slot is not pid's any more */
};

struct mem_premap {
	struct mem_premap_ent *v;
	size_t n, cap;
	uint64_t zone, zone_len; /* reserved in crf's top process, inherited */
};

/*
 * restore-prepare: read which tasks share pages with their parent (their
 * mm images), plan every mapping to make before a fork and reserve the
 * zone for them.  *@out stays NULL when nothing is shared.  0 or -errno
 * (logged).
 */
int mem_premap_plan(struct crf_ctx *ctx, struct mem_premap **out);

/* restore-premap: make this task's mappings of the plan (its own or its parent's copy). */
int mem_premap_task(struct crf_ctx *ctx, struct mem_premap *p);

/* The entry of mapping [@start, @end) of task @pid, or NULL. */
struct mem_premap_ent *mem_premap_find(struct mem_premap *p, pid_t pid, uint64_t start,
				       uint64_t end);

/* Where mapping [@start, @end) of task @pid was made before the fork, or 0. */
uint64_t mem_premap_slot(const struct mem_premap *p, pid_t pid, uint64_t start, uint64_t end);

/* Unmap the zone (crf's top process) and free @p. */
void mem_premap_free(struct mem_premap *p);

#endif
