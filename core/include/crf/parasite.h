/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * crf/parasite.h - running code inside a frozen task during a dump.
 *
 * During dump-task the core has infected the task with the parasite, so a
 * plugin can make the task itself run a system call (to read state only the
 * task can read, or to act on its own address space).  Memory the call
 * needs in the task is taken from the parasite's scratch area.
 */
#ifndef CRF_PARASITE_H
#define CRF_PARASITE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct crf_ctx;

/*
 * Run system call @nr with @args in the task of a dump-task hook.  Returns
 * the kernel's result (a negative errno on failure), or -ENOTCONN outside a
 * dump-task hook.
 */
long crf_parasite_syscall(struct crf_ctx *ctx, long nr, const long args[6]);

/*
 * The parasite's scratch area in the task: its address there, and its size.
 * Data is moved in and out with crf_parasite_write/read.
 */
int crf_parasite_scratch(struct crf_ctx *ctx, uint64_t *addr, size_t *size);
int crf_parasite_write(struct crf_ctx *ctx, uint64_t addr, const void *buf, size_t len);
int crf_parasite_read(struct crf_ctx *ctx, uint64_t addr, void *buf, size_t len);

/*
 * The parasite's own memory in the task: [*@start, *@start + *@len),
 * page-aligned.  It holds the parasite's code, stack, arguments and scratch
 * area and shows in /proc/PID/maps as several mappings of its own (the
 * kernel never merges them with the task's).  It is crf's, not the task's,
 * so a memory dump leaves exactly this range out.  Returns 0, or -ENOTCONN
 * outside a dump-task hook.
 */
int crf_parasite_mapping(struct crf_ctx *ctx, uint64_t *start, uint64_t *len);

#ifdef __cplusplus
}
#endif

#endif
