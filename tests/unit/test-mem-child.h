/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test-mem-child.h - a child with known memory for the mem plugin's tests,
 * and its dumps read back.
 */
#ifndef CRF_TEST_MEM_CHILD_H
#define CRF_TEST_MEM_CHILD_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <crf/image.h>

#include "../../plugins/mem/mm.pb-c.h"

#define PS	   4096u
#define BIG_LEN	   (4u << 20)
#define FILE_PAGES 4

/* Where the child put each thing, sent to the parent over a pipe. */
struct layout {
	uint64_t heap, big, hole, dead, fpriv, fshared, zero, stack, nofork, shanon;
	uint32_t big_crc;
};

struct fixture {
	char dir[64];
	char priv_path[PATH_MAX], shared_path[PATH_MAX];
	pid_t pid;
	struct layout l;
};

/*
 * cmocka setup and teardown: fork the child, wait until its memory is ready
 * and stop it with ptrace; kill and reap it, and remove the temporary files.
 */
int mem_child_setup(void **state);
int mem_child_teardown(void **state);

/* Run dump-task on the child into DIR/@sub, with @method as read-method (NULL: none). */
int mem_child_dump(struct fixture *fx, const char *sub, const char *method);

/* A dump read back. */
struct dumped {
	struct crf_imgdir *dir;
	struct crf_img *blob;
	Crf__Mem__MmEntry *head;
	Crf__Mem__MmEntry *vma[1024];
	size_t n_vma;
	struct run {
		uint64_t vaddr, len, off;
	} * runs;
	size_t n_runs;
};

void mem_dumped_load(struct fixture *fx, const char *sub, struct dumped *d);
void mem_dumped_free(struct dumped *d);
/* The mapping holding @addr (fails the test if none). */
const Crf__Mem__Vma *mem_dumped_vma(const struct dumped *d, uint64_t addr);
/* Whether a page run covers @addr. */
bool mem_dumped_saved(const struct dumped *d, uint64_t addr);

#endif
