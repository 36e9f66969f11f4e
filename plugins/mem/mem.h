/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mem.h - what the files of the mem plugin share.
 */
#ifndef CRF_PLUGIN_MEM_H
#define CRF_PLUGIN_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include <crf/plugin.h>

/* The size of a page (a task's and the images'). */
static inline size_t mem_page_size(void)
{
	long ps = sysconf(_SC_PAGESIZE);

	return ps > 0 ? (size_t)ps : 4096;
}

/* Whether the @len (> 0) bytes at @p are all zero. */
static inline bool mem_is_zero(const char *p, size_t len)
{
	/* Equal to itself shifted by one byte, and the first byte zero: all zero. */
	return !p[0] && !memcmp(p, p + 1, len - 1);
}

/* Memory of our own that the probes look at. */
struct mem_scratch {
	volatile char *base; /* two pages: the first touched, the second never */
	size_t page_size;
	int pagemap; /* /proc/self/pagemap, or -1 */
	bool scan;   /* PAGEMAP_SCAN answered correctly */
};

/* The probe hook: every kernel interface the plugin reads and rebuilds memory with. */
int mem_probe(struct crf_ctx *ctx);

/* PAGEMAP_SCAN on @s's pages; sets @s->scan. */
void mem_probe_scan(struct crf_ctx *ctx, struct mem_scratch *s);

/* userfaultfd write-protection in async mode, and the written-page tracking it gives. */
void mem_probe_uffd(struct crf_ctx *ctx, struct mem_scratch *s);

/* The vDSO and vvar areas, and remapping them with arch_prctl(). */
void mem_probe_vdso(struct crf_ctx *ctx);

/*
 * dump-task, with the parasite in: what only the task can say (its current
 * break, brk(0)), kept for dump-task-data.
 */
int mem_dump_task(struct crf_ctx *ctx);

/*
 * dump-task-data, the parasite out again: save the task's mappings and mm
 * fields to mm-PID.img and its pages to pages-PID.img.  INI key
 * read-method = process_vm_readv | proc-mem.
 */
int mem_dump_task_data(struct crf_ctx *ctx);

/*
 * dump-live (ABI 1.6): with INI key live = yes (crf dump --live), copy the
 * pages write-protected while the tree was frozen and complete the images
 * (live.c, docs/live.md).
 */
int mem_dump_live(struct crf_ctx *ctx);

/* dump-cleanup: drop what dump-task kept (and a live dump's userfaultfds). */
int mem_dump_cleanup(struct crf_ctx *ctx);

/* restore-task: describe the saved address space with crf/restore.h. */
int mem_restore_task(struct crf_ctx *ctx);

#endif
