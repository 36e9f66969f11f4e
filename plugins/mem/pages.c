// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copying pages: ranges from the pagemap walk are gathered into a batch of
 * up to BATCH bytes and read from the task into a buffer of the page writer
 * (writer.c), which writes them to the blob, minus the pages that need not
 * be saved, while the next batch is read.
 *
 * An all-zero page of anonymous memory is not saved: the restorer's fresh
 * anonymous mapping reads as zero there already.  In a private file mapping
 * a zero page differs from the file below it, so it is kept.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/image.h>
#include <crf/log.h>

#include "mem.h"
#include "pages.h"

#define BATCH	  (1u << 20)
#define BATCH_IOV 1024 /* IOV_MAX */
/* One batch being read, one being written, two ready to go: reading may run ahead. */
#define BATCH_BUFS 4

/*
 * /proc/PID/mem is the default although process_vm_readv() copies private
 * pages faster: process_vm_readv() pins the pages it reads, and pinning an
 * anonymous page still shared after fork() makes the kernel give the task
 * its own copy.  Measured on 1 GiB shared with the parent: the first read
 * ran at ~300 MiB/s and left the task 1 GiB larger.
 */
int mem_read_method_parse(const char *value, enum mem_read_method *m)
{
	if (!value || !strcmp(value, "proc-mem"))
		*m = MEM_READ_PROC_MEM;
	else if (!strcmp(value, "process_vm_readv"))
		*m = MEM_READ_VM_READV;
	else
		return crf_error_errno(EINVAL,
				       "read-method = %s: expected process_vm_readv or "
				       "proc-mem",
				       value);
	return 0;
}

/* Resident memory from /proc/PID/statm (0 if unknown): only for progress. */
static uint64_t resident_bytes(pid_t pid, size_t page_size)
{
	unsigned long long size = 0, rss = 0;
	_cleanup_fclose_ FILE *f = NULL;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/statm", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &size, &rss) != 2)
		rss = 0;
	return rss * page_size;
}

int mem_pages_init(struct mem_pages *p, pid_t pid, enum mem_read_method method,
		   struct crf_img *blob, size_t page_size)
{
	*p = (struct mem_pages){
		.pid = pid,
		.method = method,
		.mem_fd = -1,
		.page_size = page_size,
	};
	p->batch = calloc(BATCH_IOV, sizeof(*p->batch));
	if (!p->batch)
		return crf_error_errno(ENOMEM, "page batch");
	p->resident = resident_bytes(pid, page_size);
	snprintf(p->progress_what, sizeof(p->progress_what), "pid %d", (int)pid);
	return mem_writer_start(&p->writer, blob, BATCH, BATCH_BUFS);
}

int mem_pages_finish(struct mem_pages *p)
{
	crf_progress_end();
	return mem_writer_stop(&p->writer);
}

void mem_pages_fini(struct mem_pages *p)
{
	if (p->mem_fd >= 0)
		close(p->mem_fd);
	mem_writer_free(&p->writer);
	free(p->batch);
	free(p->runs);
	p->mem_fd = -1;
	p->batch = NULL;
	p->runs = NULL;
}

void mem_pages_begin(struct mem_pages *p, bool skip_zero, bool readable)
{
	p->skip_zero = skip_zero;
	p->readable = readable;
	p->n_runs = 0;
}

static int add_run(struct mem_pages *p, uint64_t vaddr, uint64_t len)
{
	struct mem_run *last = p->n_runs ? &p->runs[p->n_runs - 1] : NULL;

	if (last && last->vaddr + last->len == vaddr && last->off + last->len == p->blob_off) {
		last->len += len;
		return 0;
	}
	if (p->n_runs == p->cap_runs) {
		size_t cap = p->cap_runs ? 2 * p->cap_runs : 64;
		struct mem_run *r = realloc(p->runs, cap * sizeof(*r));

		if (!r)
			return crf_error_errno(ENOMEM, "page runs");
		p->runs = r;
		p->cap_runs = cap;
	}
	p->runs[p->n_runs++] = (struct mem_run){.vaddr = vaddr, .len = len, .off = p->blob_off};
	return 0;
}

/*
 * Save @len bytes at @from in p->buf, the memory at @vaddr: move them down
 * to the batch's output at *@out (zero pages left gaps) and note the run.
 */
static int save(struct mem_pages *p, size_t from, size_t *out, uint64_t vaddr, size_t len)
{
	int r;

	if (!len)
		return 0;
	r = add_run(p, vaddr, len);
	if (r < 0)
		return r;
	if (*out != from)
		memmove(p->buf + *out, p->buf + from, len);
	*out += len;
	p->blob_off += len;
	p->bytes += len;
	return 0;
}

/*
 * Pack the pages of the batch, read into p->buf, to its start, leaving out
 * zero pages; *@out is the bytes kept.
 */
static int save_batch(struct mem_pages *p, size_t *out)
{
	size_t at = 0;
	int r;

	*out = 0;
	for (size_t i = 0; i < p->n_batch; i++) {
		uint64_t addr = (uintptr_t)p->batch[i].iov_base;
		size_t len = p->batch[i].iov_len, keep = 0, done;

		for (done = 0; done < len; done += p->page_size) {
			if (!p->skip_zero || !mem_is_zero(p->buf + at + done, p->page_size)) {
				keep += p->page_size;
				continue;
			}
			p->zero++;
			r = save(p, at + done - keep, out, addr + done - keep, keep);
			if (r < 0)
				return r;
			keep = 0;
		}
		r = save(p, at + done - keep, out, addr + done - keep, keep);
		if (r < 0)
			return r;
		at += len;
	}
	return 0;
}

static int read_vm_readv(struct mem_pages *p)
{
	struct iovec local = {.iov_base = p->buf, .iov_len = p->batch_len};
	struct iovec rest[BATCH_IOV], *remote = p->batch;
	size_t n_remote = p->n_batch, got = 0;
	bool copied = false;
	ssize_t n;

	/*
	 * A short read stops at an iovec boundary or inside one, at a page the
	 * task cannot read; carry on from there once, so that the address of a
	 * real failure is the one reported.
	 */
	while (got < p->batch_len) {
		n = process_vm_readv(p->pid, &local, 1, remote, n_remote, 0);
		if (n <= 0)
			return crf_error_errno(n < 0 ? errno : EFAULT,
					       "process_vm_readv of task %d at %p", (int)p->pid,
					       remote->iov_base);
		got += n;
		local.iov_base = (char *)local.iov_base + n;
		local.iov_len -= n;
		while (n_remote && (size_t)n >= remote->iov_len) {
			n -= remote->iov_len;
			remote++;
			n_remote--;
		}
		if (n_remote && n) {
			/* save_batch() reads the batch's ranges: advance a copy of them. */
			if (!copied) {
				memcpy(rest, remote, n_remote * sizeof(*rest));
				remote = rest;
				copied = true;
			}
			remote->iov_base = (char *)remote->iov_base + n;
			remote->iov_len -= n;
		}
	}
	return 0;
}

static int open_mem(struct mem_pages *p)
{
	char path[64];

	if (p->mem_fd >= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)p->pid);
	p->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (p->mem_fd < 0)
		return crf_error_errno(errno, "open %s", path);
	return 0;
}

static int read_proc_mem(struct mem_pages *p)
{
	char *buf = p->buf;
	ssize_t n;
	int r;

	r = open_mem(p);
	if (r < 0)
		return r;
	for (size_t i = 0; i < p->n_batch; i++) {
		uint64_t addr = (uintptr_t)p->batch[i].iov_base;
		size_t len = p->batch[i].iov_len, done = 0;

		while (done < len) {
			n = pread(p->mem_fd, buf + done, len - done, (off_t)(addr + done));
			if (n <= 0)
				return crf_error_errno(n < 0 ? errno : EFAULT,
						       "read /proc/%d/mem at %#llx", (int)p->pid,
						       (unsigned long long)(addr + done));
			done += n;
		}
		buf += len;
	}
	return 0;
}

int mem_pages_flush(struct mem_pages *p)
{
	size_t out = 0;
	int r;

	if (!p->n_batch)
		return 0;
	p->buf = mem_writer_get(&p->writer, &r);
	if (!p->buf)
		return r;
	/* The kernel reads what the task could; /proc/PID/mem also reads PROT_NONE pages. */
	if (p->read_hook)
		r = p->read_hook(p->read_arg, p);
	else if (p->method == MEM_READ_VM_READV && p->readable)
		r = read_vm_readv(p);
	else
		r = read_proc_mem(p);
	if (r >= 0)
		r = save_batch(p, &out);
	if (r >= 0) {
		mem_writer_put(&p->writer, out);
		crf_progress(p->progress_what, p->bytes, p->resident);
		/* crf was asked to stop: give up between two batches. */
		if (crf_stop_requested())
			r = -EINTR;
	}
	p->buf = NULL;
	p->n_batch = 0;
	p->batch_len = 0;
	return r;
}

int mem_pages_add(void *arg, uint64_t start, uint64_t end, bool zero)
{
	struct mem_pages *p = arg;
	struct iovec *last;
	size_t len;
	int r;

	p->present += (end - start) / p->page_size;
	/* The shared zero page: read but never written, so nothing to read. */
	if (zero && p->skip_zero) {
		p->zero += (end - start) / p->page_size;
		return 0;
	}
	while (start < end) {
		if (p->batch_len == BATCH || p->n_batch == BATCH_IOV) {
			r = mem_pages_flush(p);
			if (r < 0)
				return r;
		}
		len = end - start;
		if (len > BATCH - p->batch_len)
			len = BATCH - p->batch_len;
		last = p->n_batch ? &p->batch[p->n_batch - 1] : NULL;
		if (last && (uintptr_t)last->iov_base + last->iov_len == start)
			last->iov_len += len;
		else
			p->batch[p->n_batch++] = (struct iovec){
				.iov_base = (void *)(uintptr_t)start, .iov_len = len};
		p->batch_len += len;
		start += len;
	}
	return 0;
}
