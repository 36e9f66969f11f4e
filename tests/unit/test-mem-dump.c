// SPDX-License-Identifier: GPL-2.0-only
/*
 * The mem plugin's dump-task on a real child: the images must hold every
 * mapping with its kind, flags and advice, and exactly the pages that need
 * saving, byte for byte as the child has them.
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
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <crf/image.h>
#include <crf/restore.h>

#include "../../plugins/mem/mem.h"
#include "../../plugins/mem/pagemap.h"
#include "crf-private.h"
#include "helpers.h"
#include "test-mem-child.h"

static void child_read(pid_t pid, void *buf, size_t len, uint64_t addr)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, len, (off_t)addr), (ssize_t)len);
	close(fd);
}

static void check_runs_match_child(struct fixture *fx, struct dumped *d)
{
	char *want, *got;

	for (size_t i = 0; i < d->n_runs; i++) {
		const struct run *r = &d->runs[i];
		const Crf__Mem__Vma *v = mem_dumped_vma(d, r->vaddr);
		struct iovec local, remote = {(void *)(uintptr_t)r->vaddr, r->len};

		assert_true(r->vaddr + r->len <= v->end);
		want = malloc(r->len);
		got = malloc(r->len);
		local = (struct iovec){want, r->len};
		if (v->prot & PROT_READ)
			assert_int_equal(process_vm_readv(fx->pid, &local, 1, &remote, 1, 0),
					 (ssize_t)r->len);
		else
			child_read(fx->pid, want, r->len, r->vaddr);
		assert_int_equal(crf_blob_pread(d->blob, got, r->len, r->off), 0);
		assert_memory_equal(want, got, r->len);
		free(want);
		free(got);
	}
}

/* The 4 MiB region rebuilt from the runs alone has the child's checksum. */
static void check_big(struct fixture *fx, struct dumped *d)
{
	char *img = calloc(1, BIG_LEN);
	uint64_t base = fx->l.big;

	for (size_t i = 0; i < d->n_runs; i++) {
		const struct run *r = &d->runs[i];
		uint64_t s = r->vaddr > base ? r->vaddr : base;
		uint64_t e =
			r->vaddr + r->len < base + BIG_LEN ? r->vaddr + r->len : base + BIG_LEN;

		if (s < e)
			assert_int_equal(crf_blob_pread(d->blob, img + (s - base), e - s,
							r->off + (s - r->vaddr)),
					 0);
	}
	assert_int_equal(crf_crc32c(0, img, BIG_LEN), fx->l.big_crc);
	free(img);
}

static void check_vmas(struct fixture *fx, struct dumped *d)
{
	const struct layout *l = &fx->l;
	const Crf__Mem__Vma *v;
	bool vdso = false;
	uint64_t dev, ino;

	v = mem_dumped_vma(d, l->heap);
	assert_string_equal(v->name, "[heap]");
	assert_int_equal(v->flags, MAP_PRIVATE | MAP_ANONYMOUS);
	assert_true(mem_dumped_saved(d, l->heap));

	v = mem_dumped_vma(d, l->big);
	assert_int_equal(v->kind, CRF__MEM__VMA_KIND__ANON_PRIVATE);
	for (uint64_t a = l->big; a < l->big + BIG_LEN; a += PS)
		assert_true(mem_dumped_saved(d, a));

	v = mem_dumped_vma(d, l->hole);
	assert_int_equal(v->prot, PROT_NONE);
	for (int i = 0; i < 4; i++)
		assert_false(mem_dumped_saved(d, l->hole + i * PS));
	assert_true(mem_dumped_saved(d, l->dead) && mem_dumped_saved(d, l->dead + PS));

	v = mem_dumped_vma(d, l->fpriv);
	assert_int_equal(v->kind, CRF__MEM__VMA_KIND__FILE_PRIVATE);
	assert_int_equal(v->flags, MAP_PRIVATE);
	assert_non_null(v->file);
	assert_string_equal(v->file->path, fx->priv_path);
	assert_true(v->file->size == FILE_PAGES * PS);
	assert_false(mem_dumped_saved(d, l->fpriv));
	assert_true(mem_dumped_saved(d, l->fpriv + PS));
	assert_true(mem_dumped_saved(d, l->fpriv + 2 * PS));
	assert_false(mem_dumped_saved(d, l->fpriv + 3 * PS));

	v = mem_dumped_vma(d, l->fshared);
	assert_int_equal(v->kind, CRF__MEM__VMA_KIND__FILE_SHARED);
	assert_int_equal(v->flags, MAP_SHARED);
	assert_string_equal(v->file->path, fx->shared_path);
	assert_false(mem_dumped_saved(d, l->fshared));

	v = mem_dumped_vma(d, l->zero);
	assert_true(v->madv & (1ULL << MADV_DONTDUMP));
	for (int i = 0; i < 8; i++)
		assert_int_equal(mem_dumped_saved(d, l->zero + i * PS), i == 0 || i == 2 || i == 5);

	v = mem_dumped_vma(d, l->stack + 3 * PS);
	assert_true(v->flags & MAP_GROWSDOWN);
	v = mem_dumped_vma(d, l->nofork);
	assert_true(v->madv & (1ULL << MADV_DONTFORK));

	v = mem_dumped_vma(d, l->shanon);
	assert_int_equal(v->kind, CRF__MEM__VMA_KIND__ANON_SHARED);
	assert_int_equal(v->flags, MAP_SHARED | MAP_ANONYMOUS);
	assert_true(v->end == l->shanon + 6 * PS && !v->file);
	assert_true(v->has_shm_dev && v->has_shm_inode && v->pgoff == 0);
	dev = v->shm_dev;
	ino = v->shm_inode;
	v = mem_dumped_vma(d, l->shanon + 6 * PS);
	assert_int_equal(v->kind, CRF__MEM__VMA_KIND__ANON_SHARED);
	assert_int_equal(v->prot, PROT_READ);
	/* Both pieces map one object, saved once in its own image, not as page runs. */
	assert_true(v->shm_dev == dev && v->shm_inode == ino && v->pgoff == 6 * PS);
	for (int i = 0; i < 8; i++)
		assert_false(mem_dumped_saved(d, l->shanon + i * PS));

	for (size_t i = 0; i < d->n_vma; i++) {
		vdso |= d->vma[i]->vma->kind == CRF__MEM__VMA_KIND__VDSO;
		assert_true(!d->vma[i]->vma->name || strcmp(d->vma[i]->vma->name, "[vsyscall]"));
	}
	assert_true(vdso);
}

static void check_mm(struct fixture *fx, struct dumped *d)
{
	const Crf__Mem__MmFields *f = d->head->mm->fields;
	char exe[PATH_MAX];
	ssize_t n;

	assert_true(f->start_brk && f->brk >= f->start_brk);
	assert_true(f->start_code < f->end_code && f->arg_start < f->arg_end);
	assert_true(f->env_start < f->env_end && f->start_stack);
	assert_true(f->n_auxv >= 2 && f->n_auxv % 2 == 0 && f->auxv[f->n_auxv - 2] == 0);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	assert_non_null(f->exe);
	assert_string_equal(f->exe->path, exe);
}

static void test_dump(void **state)
{
	static const char *const methods[] = {"process_vm_readv", "proc-mem", NULL};
	struct fixture *fx = *state;
	struct dumped d;
	char sub[16];

	for (int i = 0; i < 3; i++) {
		snprintf(sub, sizeof(sub), "img%d", i);
		assert_int_equal(mem_child_dump(fx, sub, methods[i]), 0);
		mem_dumped_load(fx, sub, &d);
		check_vmas(fx, &d);
		check_runs_match_child(fx, &d);
		check_big(fx, &d);
		check_mm(fx, &d);
		mem_dumped_free(&d);
	}
}

static void test_bad_method(void **state)
{
	struct fixture *fx = *state;

	capture_begin();
	assert_int_equal(mem_child_dump(fx, "img", "splice"), -EINVAL);
	assert_contains(capture_end(), "read-method = splice");
}

/* Two mappings of the same shared memory name one object. */
static void test_shmem_alias(void **state)
{
	struct fixture *fx = *state, other = *fx;
	int pfd[2];
	char c;

	assert_int_equal(pipe(pfd), 0);
	other.pid = fork();
	assert_true(other.pid >= 0);
	if (other.pid == 0) {
		char *p = mmap(NULL, 2 * PS, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
			       0);

		/* An old size of 0 maps the same pages a second time. */
		if (p == MAP_FAILED || mremap(p, 0, 2 * PS, MREMAP_MAYMOVE) == MAP_FAILED)
			_exit(1);
		p[0] = 1;
		(void)!write(pfd[1], "r", 1);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	assert_int_equal(read(pfd[0], &c, 1), 1);
	close(pfd[0]);
	assert_int_equal(mem_child_dump(&other, "alias", NULL), 0);
	kill(other.pid, SIGKILL);
	waitpid(other.pid, NULL, 0);
}

struct ranges {
	uint64_t r[8][2];
	int n;
};

static int collect(void *arg, uint64_t start, uint64_t end, bool zero)
{
	struct ranges *rs = arg;

	(void)zero;
	/* PAGEMAP_SCAN may cut a range where page entries would not: join them. */
	if (rs->n && rs->r[rs->n - 1][1] == start) {
		rs->r[rs->n - 1][1] = end;
		return 0;
	}
	assert_true(rs->n < 8);
	rs->r[rs->n][0] = start;
	rs->r[rs->n++][1] = end;
	return 0;
}

/* PAGEMAP_SCAN and the pagemap entries it falls back to find the same pages. */
static void test_pagemap_fallback(void **state)
{
	struct fixture *fx = *state;
	struct mem_pagemap pm;
	struct ranges by[2];
	volatile char *a, *f;
	int fd;

	a = mmap(NULL, 16 * PS, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fd = open(fx->priv_path, O_RDONLY);
	f = mmap(NULL, FILE_PAGES * PS, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	close(fd);
	assert_true(a != MAP_FAILED && f != MAP_FAILED);
	a[0] = a[PS] = a[5 * PS] = 1;
	(void)f[0];
	f[PS] = 1;
	for (int i = 0; i < 2; i++) {
		memset(&by[i], 0, sizeof(by[i]));
		assert_int_equal(mem_pagemap_open(&pm, getpid(), PS), 0);
		pm.scan = i == 0;
		assert_int_equal(mem_pagemap_walk(&pm, (uintptr_t)a, (uintptr_t)a + 16 * PS,
						  collect, &by[i]),
				 0);
		assert_int_equal(mem_pagemap_walk(&pm, (uintptr_t)f, (uintptr_t)f + FILE_PAGES * PS,
						  collect, &by[i]),
				 0);
		mem_pagemap_close(&pm);
	}
	assert_int_equal(by[0].n, 3);
	assert_memory_equal(&by[0], &by[1], sizeof(by[0]));
	assert_true(by[0].r[0][0] == (uintptr_t)a && by[0].r[0][1] == (uintptr_t)a + 2 * PS);
	assert_true(by[0].r[1][0] == (uintptr_t)a + 5 * PS);
	assert_true(by[0].r[2][0] == (uintptr_t)f + PS && by[0].r[2][1] == (uintptr_t)f + 2 * PS);
	munmap((void *)a, 16 * PS);
	munmap((void *)f, FILE_PAGES * PS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_dump, mem_child_setup, mem_child_teardown),
		cmocka_unit_test_setup_teardown(test_bad_method, mem_child_setup,
						mem_child_teardown),
		cmocka_unit_test_setup_teardown(test_pagemap_fallback, mem_child_setup,
						mem_child_teardown),
		cmocka_unit_test_setup_teardown(test_shmem_alias, mem_child_setup,
						mem_child_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
