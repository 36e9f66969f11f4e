// SPDX-License-Identifier: GPL-2.0-only
/*
 * A child with known memory for the mem plugin's tests: heap, a 4 MiB region
 * of random bytes, guard pages and data behind PROT_NONE, private and shared
 * file mappings, touched zero pages, a MAP_GROWSDOWN stack, advice, shared
 * anonymous memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <crf/image.h>

#include "../../plugins/mem/mem.h"
#include "crf-private.h"
#include "helpers.h"
#include "test-mem-child.h"

/* ---- the child ------------------------------------------------------- */

static void *map(size_t len, int prot, int flags, int fd)
{
	void *p = mmap(NULL, len, prot, flags | (fd < 0 ? MAP_ANONYMOUS : 0), fd, 0);

	if (p == MAP_FAILED)
		_exit(100);
	return p;
}

static void fill_random(unsigned char *p, size_t len)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (unsigned char)(x >> 24) | 1;
	}
}

static void child_setup(struct fixture *fx, struct layout *l)
{
	volatile char *z, *hp;
	char *p;
	int fd;

	hp = sbrk(4 * PS);
	if (hp == (void *)-1)
		_exit(101);
	memset((char *)hp, 'H', 4 * PS);
	l->heap = (uintptr_t)hp;
	p = malloc(64 << 10);
	memset(p, 'M', 64 << 10);

	p = map(BIG_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE, -1);
	fill_random((unsigned char *)p, BIG_LEN);
	l->big = (uintptr_t)p;
	l->big_crc = crf_crc32c(0, p, BIG_LEN);

	l->hole = (uintptr_t)map(4 * PS, PROT_NONE, MAP_PRIVATE, -1);
	/* Data behind PROT_NONE: only /proc/PID/mem can read it. */
	p = map(2 * PS, PROT_READ | PROT_WRITE, MAP_PRIVATE, -1);
	memset(p, 'D', 2 * PS);
	mprotect(p, 2 * PS, PROT_NONE);
	l->dead = (uintptr_t)p;

	fd = open(fx->priv_path, O_RDONLY);
	z = map(FILE_PAGES * PS, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd);
	close(fd);
	(void)z[0];			   /* a file page, not saved */
	memset((char *)z + PS, 'W', 100);  /* copied on write: saved */
	memset((char *)z + 2 * PS, 0, PS); /* zero, but not the file's: saved */
	l->fpriv = (uintptr_t)z;

	fd = open(fx->shared_path, O_RDWR);
	p = map(2 * PS, PROT_READ | PROT_WRITE, MAP_SHARED, fd);
	close(fd);
	p[0] = 'S';
	l->fshared = (uintptr_t)p;

	/* Pages 0, 2, 5 hold data; 1 and 3 were written with zeros; 4 was only read. */
	z = map(8 * PS, PROT_READ | PROT_WRITE, MAP_PRIVATE, -1);
	madvise((void *)z, 8 * PS, MADV_DONTDUMP);
	z[0] = z[2 * PS] = z[5 * PS] = 7;
	z[PS] = z[3 * PS] = 0;
	(void)z[4 * PS];
	l->zero = (uintptr_t)z;

	p = map(4 * PS, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_GROWSDOWN, -1);
	p[4 * PS - 1] = 's';
	l->stack = (uintptr_t)p;

	p = map(2 * PS, PROT_READ | PROT_WRITE, MAP_PRIVATE, -1);
	madvise(p, 2 * PS, MADV_DONTFORK);
	p[0] = 'F';
	l->nofork = (uintptr_t)p;

	/*
	 * Shared anonymous: pages 0, 3, 5 and 7 hold data, page 5 no longer
	 * mapped by the page table (MADV_DONTNEED keeps shmem data); 1 was
	 * written with zeros, 4 only read; 6 and 7 made read-only (a VMA of its
	 * own, at an offset of its object).
	 */
	z = map(8 * PS, PROT_READ | PROT_WRITE, MAP_SHARED, -1);
	z[0] = 'A';
	z[3 * PS] = 'B';
	z[5 * PS] = 'C';
	z[7 * PS] = 'D';
	z[PS] = 0;
	(void)z[4 * PS];
	madvise((void *)(z + 5 * PS), PS, MADV_DONTNEED);
	mprotect((void *)(z + 6 * PS), 2 * PS, PROT_READ);
	l->shanon = (uintptr_t)z;
}

static void write_file_pages(const char *path, char c)
{
	char page[PS];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	for (int i = 0; i < FILE_PAGES; i++) {
		memset(page, c + i, sizeof(page));
		assert_int_equal(write(fd, page, sizeof(page)), sizeof(page));
	}
	close(fd);
}

/* Fork the child, wait until its memory is ready, and stop it with ptrace. */
int mem_child_setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	char *dir = tmpdir_make();
	int pfd[2], st;

	assert_non_null(fx);
	snprintf(fx->dir, sizeof(fx->dir), "%s", dir);
	free(dir);
	snprintf(fx->priv_path, sizeof(fx->priv_path), "%s/priv", fx->dir);
	snprintf(fx->shared_path, sizeof(fx->shared_path), "%s/shared", fx->dir);
	write_file_pages(fx->priv_path, 'a');
	write_file_pages(fx->shared_path, 'k');
	assert_int_equal(pipe(pfd), 0);
	fx->pid = fork();
	assert_true(fx->pid >= 0);
	if (fx->pid == 0) {
		struct layout l = {0};

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		child_setup(fx, &l);
		if (write(pfd[1], &l, sizeof(l)) != sizeof(l))
			_exit(102);
		for (;;)
			pause();
	}
	*state = fx;
	close(pfd[1]);
	assert_int_equal(read(pfd[0], &fx->l, sizeof(fx->l)), sizeof(fx->l));
	close(pfd[0]);
	assert_int_equal(ptrace(PTRACE_SEIZE, fx->pid, 0, PTRACE_O_EXITKILL), 0);
	assert_int_equal(ptrace(PTRACE_INTERRUPT, fx->pid, 0, 0), 0);
	assert_int_equal(waitpid(fx->pid, &st, __WALL), fx->pid);
	assert_true(WIFSTOPPED(st));
	return 0;
}

int mem_child_teardown(void **state)
{
	struct fixture *fx = *state;

	if (!fx)
		return 0;
	if (fx->pid > 0) {
		kill(fx->pid, SIGKILL);
		while (waitpid(fx->pid, NULL, __WALL) < 0 && errno == EINTR)
			;
	}
	tmpdir_remove(fx->dir);
	free(fx);
	return 0;
}

/* ---- dumping and reading the images back ----------------------------- */

int mem_child_dump(struct fixture *fx, const char *sub, const char *method)
{
	struct crf_kv kv = {.key = "read-method", .value = method};
	struct crf_plugin_state ps = {
		.name = "mem", .enabled = true, .config = &kv, .n_config = method ? 1 : 0};
	struct crf_ctx ctx = {.stage = CRF_STAGE_DUMP_TASK_DATA, .plugin = &ps, .pid = fx->pid};
	char path[PATH_MAX];
	int r;

	snprintf(path, sizeof(path), "%s/%s", fx->dir, sub);
	assert_int_equal(crf_imgdir_open(path, CRF_IMGDIR_WRITE, &ctx.images), 0);
	r = mem_dump_task_data(&ctx);
	crf_imgdir_close(ctx.images);
	return r;
}

void mem_dumped_load(struct fixture *fx, const char *sub, struct dumped *d)
{
	Crf__Mem__MmEntry *e;
	struct crf_img *img;
	char path[PATH_MAX], name[64];

	memset(d, 0, sizeof(*d));
	snprintf(path, sizeof(path), "%s/%s", fx->dir, sub);
	assert_int_equal(crf_imgdir_open(path, CRF_IMGDIR_READ, &d->dir), 0);
	snprintf(name, sizeof(name), "mm-%d.img", (int)fx->pid);
	assert_int_equal(crf_img_open(d->dir, name, &crf__mem__mm_entry__descriptor, &img), 0);
	assert_int_equal(crf_img_read(img, (ProtobufCMessage **)&d->head), 1);
	assert_int_equal(d->head->entry_case, CRF__MEM__MM_ENTRY__ENTRY_MM);
	while (crf_img_read(img, (ProtobufCMessage **)&e) == 1) {
		if (e->entry_case == CRF__MEM__MM_ENTRY__ENTRY_VMA) {
			assert_true(d->n_vma < 1024);
			d->vma[d->n_vma++] = e;
			continue;
		}
		assert_int_equal(e->entry_case, CRF__MEM__MM_ENTRY__ENTRY_PAGES);
		d->runs = realloc(d->runs, (d->n_runs + e->pages->n_runs) * sizeof(*d->runs));
		for (size_t i = 0; i < e->pages->n_runs; i++)
			d->runs[d->n_runs++] =
				(struct run){e->pages->runs[i]->vaddr, e->pages->runs[i]->len,
					     e->pages->runs[i]->off};
		protobuf_c_message_free_unpacked(&e->base, NULL);
	}
	crf_img_close(img);
	assert_int_equal(d->head->mm->n_vmas, d->n_vma);
	assert_int_equal(crf_blob_open(d->dir, d->head->mm->pages, &d->blob), 0);
}

void mem_dumped_free(struct dumped *d)
{
	for (size_t i = 0; i < d->n_vma; i++)
		protobuf_c_message_free_unpacked(&d->vma[i]->base, NULL);
	protobuf_c_message_free_unpacked(&d->head->base, NULL);
	free(d->runs);
	crf_img_close(d->blob);
	crf_imgdir_close(d->dir);
}

const Crf__Mem__Vma *mem_dumped_vma(const struct dumped *d, uint64_t addr)
{
	for (size_t i = 0; i < d->n_vma; i++)
		if (d->vma[i]->vma->start <= addr && addr < d->vma[i]->vma->end)
			return d->vma[i]->vma;
	fail_msg("no mapping at %#llx", (unsigned long long)addr);
	return NULL;
}

bool mem_dumped_saved(const struct dumped *d, uint64_t addr)
{
	for (size_t i = 0; i < d->n_runs; i++)
		if (d->runs[i].vaddr <= addr && addr < d->runs[i].vaddr + d->runs[i].len)
			return true;
	return false;
}

/* The child's memory, through /proc/PID/mem, which reads PROT_NONE pages too. */
