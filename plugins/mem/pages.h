/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pages.h - copying a task's pages into the pages blob, in batches.
 */
#ifndef CRF_PLUGIN_MEM_PAGES_H
#define CRF_PLUGIN_MEM_PAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "writer.h"

struct crf_img;

enum mem_read_method {
	MEM_READ_VM_READV, /* process_vm_readv() */
	MEM_READ_PROC_MEM, /* pread() of /proc/PID/mem */
};

/* Parse the read-method key (NULL: the default); 0 or -EINVAL (logged). */
int mem_read_method_parse(const char *value, enum mem_read_method *m);

/* Bytes [off, off + len) of the blob hold the memory at [vaddr, vaddr + len). */
struct mem_run {
	uint64_t vaddr, len, off;
};

struct mem_pages {
	pid_t pid;
	enum mem_read_method method;
	int mem_fd; /* /proc/PID/mem, opened when first needed */
	size_t page_size;
	struct mem_writer writer; /* owns the blob */
	uint64_t blob_off;	  /* bytes handed to @writer */

	char *buf;	     /* while a batch is read: the writer's buffer for it */
	struct iovec *batch; /* ranges of the task the batch holds */
	size_t n_batch, batch_len;

	/*
	 * When set, reads a batch (@batch into @buf) instead of the read
	 * method: a live dump's mappings (live.c).  0 or -errno (logged).
	 */
	int (*read_hook)(void *arg, struct mem_pages *p);
	void *read_arg;

	bool skip_zero; /* of the mapping being dumped */
	bool readable;

	struct mem_run *runs; /* of the mapping being dumped */
	size_t n_runs, cap_runs;

	uint64_t present, zero, bytes; /* pages found, zero pages skipped, bytes saved */

	/* For the progress line: the task's resident memory, an estimate of
	 * what is to be saved, and what to call the work. */
	uint64_t resident;
	char progress_what[32];
};

/*
 * Start the page writer on @blob, which belongs to it until
 * mem_pages_finish().  0 or -errno (logged).
 */
int mem_pages_init(struct mem_pages *p, pid_t pid, enum mem_read_method method,
		   struct crf_img *blob, size_t page_size);
/* Wait until every saved page is in the blob; 0 or the write's -errno (logged). */
int mem_pages_finish(struct mem_pages *p);
/* Free everything; stops the writer first if mem_pages_finish() was not called. */
void mem_pages_fini(struct mem_pages *p);

/*
 * Start a mapping: @skip_zero when an all-zero page need not be saved (it
 * reads back as zero from fresh anonymous memory), @readable when the task
 * may read it (else /proc/PID/mem is used, which may).  Empties the runs.
 */
void mem_pages_begin(struct mem_pages *p, bool skip_zero, bool readable);

/* A mem_range_fn: add [@start, @end) of the mapping, flushing full batches. */
int mem_pages_add(void *arg, uint64_t start, uint64_t end, bool zero);

/* Read and save the pending batch; 0 or -errno (logged). */
int mem_pages_flush(struct mem_pages *p);

#endif
