/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * live.h - a live dump's private memory (docs/live.md): write-protected
 * with userfaultfd while the tree is frozen, copied while it runs, a page
 * the program writes first saved before its write goes through.
 */
#ifndef CRF_PLUGIN_MEM_LIVE_H
#define CRF_PLUGIN_MEM_LIVE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct crf_ctx;
struct mem_pagemap;
struct mem_pages;
struct smaps_vma;

/* Every task of a live dump: one for the plugin, in its private state. */
struct mem_live;

/* Whether the dump is live (the mem key live = yes, set by crf dump --live). */
bool mem_live_wanted(struct crf_ctx *ctx);

/*
 * dump-task, parasite in: refuse a task that holds a userfaultfd of its
 * own, then make the task create one for its mm (so that kernel-mode writes
 * fault too), take it into crf and close the task's fd again.  *@L is made
 * on first use.  0 or -errno (logged).
 */
int mem_live_task_open(struct crf_ctx *ctx, struct mem_live **L);

/*
 * dump-task-data, frozen: whether mapping @v of task @pid is copied live
 * (private anonymous, not locked, DONTFORK or WIPEONFORK, and the kernel
 * lets it be registered); if so it is registered, its pages present at the
 * freeze recorded (@pm; for a big mapping mem_live_classify() does it after
 * the thaw) and write-protected, and *@idx says which it is.
 * 1 live, 0 copied now, -errno (logged).
 */
int mem_live_vma(struct mem_live *L, pid_t pid, const struct smaps_vma *v, struct mem_pagemap *pm,
		 size_t *idx);

/*
 * dump-live, first: find which pages of the big live mappings existed at
 * the freeze (their uffd-wp bit), serving faults meanwhile.  0 or -errno.
 */
int mem_live_classify(struct mem_live *L);

/*
 * dump-live: copy live mapping @idx of @pid through @p (its runs left in
 * @p as by a copy while frozen), serving every task's faults between
 * batches.  0 or -errno (logged).
 */
int mem_live_copy(struct mem_live *L, pid_t pid, size_t idx, struct mem_pages *p);

/* dump-live, once every task is copied: serve what is left, log the totals. */
int mem_live_end(struct mem_live *L);

/* Close every userfaultfd (the kernel drops the registrations) and free @L. */
void mem_live_free(struct mem_live *L);

#endif
