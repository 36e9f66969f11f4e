// SPDX-License-Identifier: GPL-2.0-only
/*
 * The mem plugin's restore-task against a fake core that records what it is
 * asked to build, on images of a real child's dump.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cmocka.h>

#include <crf/image.h>
#include <crf/restore.h>

#include "../../plugins/mem/mem.h"
#include "crf-private.h"
#include "helpers.h"
#include "test-mem-child.h"

struct fake {
	struct crf_rst_vma vma[1024];
	size_t n_vma;
	struct run runs[4096];
	size_t n_runs;
	struct crf_img *blob;
	struct crf_rst_mm mm;
	bool mm_set;
	uint64_t vdso;
};

static int fake_add_vma(void *task, const struct crf_rst_vma *v)
{
	struct fake *f = task;

	assert_true(f->n_vma < 1024);
	f->vma[f->n_vma++] = *v;
	return 0;
}

static int fake_add_pages(void *task, struct crf_img *blob, uint64_t vaddr, uint64_t len,
			  uint64_t off)
{
	struct fake *f = task;

	assert_true(!f->blob || f->blob == blob);
	assert_true(f->n_runs < 4096);
	f->blob = blob;
	f->runs[f->n_runs++] = (struct run){vaddr, len, off};
	return 0;
}

static int fake_set_mm(void *task, const struct crf_rst_mm *mm)
{
	struct fake *f = task;

	f->mm = *mm;
	f->mm_set = true;
	return 0;
}

static int fake_set_vdso(void *task, uint64_t vdso)
{
	((struct fake *)task)->vdso = vdso;
	return 0;
}

static const struct crf_host_ops fake_ops = {
	.rst_add_vma = fake_add_vma,
	.rst_add_pages = fake_add_pages,
	.rst_set_mm = fake_set_mm,
	.rst_set_vdso = fake_set_vdso,
};

/* What the core would do with what it was given: close it. */
static void fake_release(struct fake *f)
{
	for (size_t i = 0; i < f->n_vma; i++)
		if (f->vma[i].fd >= 0)
			close(f->vma[i].fd);
	if (f->mm_set && f->mm.exe_fd >= 0)
		close(f->mm.exe_fd);
	if (f->blob)
		crf_img_close(f->blob);
}

static int restore(struct fixture *fx, const char *sub, struct fake *f)
{
	struct crf_ctx ctx = {
		.stage = CRF_STAGE_RESTORE_TASK, .pid = fx->pid, .ops = &fake_ops, .task = f};
	char path[PATH_MAX];
	int r;

	snprintf(path, sizeof(path), "%s/%s", fx->dir, sub);
	assert_int_equal(crf_imgdir_open(path, CRF_IMGDIR_READ, &ctx.images), 0);
	r = mem_restore_task(&ctx);
	crf_imgdir_close(ctx.images);
	return r;
}

static void check_restore_vmas(struct dumped *d, struct fake *f)
{
	size_t k = 0, shared_anon = 0;
	struct stat st;

	for (size_t i = 0; i < d->n_vma; i++) {
		const Crf__Mem__Vma *v = d->vma[i]->vma;

		if (v->kind == CRF__MEM__VMA_KIND__VDSO || v->kind == CRF__MEM__VMA_KIND__VVAR ||
		    v->kind == CRF__MEM__VMA_KIND__VVAR_VCLOCK) {
			if (v->kind == CRF__MEM__VMA_KIND__VDSO)
				assert_true(f->vdso == v->start);
			continue;
		}
		assert_true(k < f->n_vma);
		assert_true(f->vma[k].start == v->start && f->vma[k].end == v->end);
		assert_int_equal(f->vma[k].prot, v->prot);
		assert_true(f->vma[k].madv == v->madv && f->vma[k].pgoff == v->pgoff);
		if (v->kind == CRF__MEM__VMA_KIND__ANON_PRIVATE) {
			assert_int_equal(f->vma[k].flags, v->flags);
			assert_int_equal(f->vma[k].fd, -1);
		} else if (v->kind == CRF__MEM__VMA_KIND__ANON_SHARED) {
			/* A new object, mapped as a file: restore-prepare did not run. */
			assert_int_equal(f->vma[k].flags, v->flags & ~MAP_ANONYMOUS);
			assert_int_equal(fstat(f->vma[k].fd, &st), 0);
			assert_true(st.st_size >= (off_t)(v->pgoff + v->end - v->start));
			shared_anon++;
		} else {
			assert_int_equal(f->vma[k].flags, v->flags);
			assert_int_equal(fstat(f->vma[k].fd, &st), 0);
			assert_true(st.st_ino == v->file->inode);
		}
		k++;
	}
	assert_int_equal(k, f->n_vma);
	/* The child's shared anonymous mapping, in two VMAs. */
	assert_int_equal(shared_anon, 2);
}

static void test_restore(void **state)
{
	struct fixture *fx = *state;
	struct fake *f = calloc(1, sizeof(*f));
	const Crf__Mem__MmFields *mf;
	struct dumped d;
	struct stat st;

	assert_int_equal(mem_child_dump(fx, "img", NULL), 0);
	mem_dumped_load(fx, "img", &d);
	assert_int_equal(restore(fx, "img", f), 0);
	check_restore_vmas(&d, f);
	assert_int_equal(f->n_runs, d.n_runs);
	for (size_t i = 0; i < d.n_runs; i++)
		assert_memory_equal(&f->runs[i], &d.runs[i], sizeof(d.runs[i]));
	assert_true(f->blob && crf_blob_size(f->blob) == crf_blob_size(d.blob));
	mf = d.head->mm->fields;
	assert_true(f->mm_set && f->mm.brk == mf->brk && f->mm.start_brk == mf->start_brk);
	assert_true(f->mm.arg_start == mf->arg_start && f->mm.env_end == mf->env_end);
	assert_true(f->mm.start_code == mf->start_code && f->mm.start_stack == mf->start_stack);
	assert_int_equal(f->mm.auxv_len, mf->n_auxv);
	assert_memory_equal(f->mm.auxv, mf->auxv, mf->n_auxv * sizeof(uint64_t));
	assert_int_equal(fstat(f->mm.exe_fd, &st), 0);
	assert_true(st.st_ino == mf->exe->inode);
	fake_release(f);
	mem_dumped_free(&d);
	free(f);
}

static void test_restore_changed_file(void **state)
{
	struct fixture *fx = *state;
	struct fake *f = calloc(1, sizeof(*f));
	char msg[PATH_MAX + 64];
	const char *out;
	int fd, r;

	assert_int_equal(mem_child_dump(fx, "img", NULL), 0);
	fd = open(fx->priv_path, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "more!", 5), 5);
	close(fd);
	capture_begin();
	r = restore(fx, "img", f);
	out = capture_end();
	fake_release(f);
	free(f);
	assert_int_equal(r, -ESTALE);
	snprintf(msg, sizeof(msg), "%s changed since the dump (size %u -> %u)", fx->priv_path,
		 FILE_PAGES * PS, FILE_PAGES * PS + 5);
	assert_contains(out, msg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_restore, mem_child_setup, mem_child_teardown),
		cmocka_unit_test_setup_teardown(test_restore_changed_file, mem_child_setup,
						mem_child_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
