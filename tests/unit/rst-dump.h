/* SPDX-License-Identifier: GPL-2.0-only */
/* The restorer test's minimal memory dumper (no parasite, no plugins). */
#ifndef CRF_TEST_RST_DUMP_H
#define CRF_TEST_RST_DUMP_H

#include <sys/types.h>

#include "rst-task.h"

/*
 * Save the memory of @pid, stopped under our ptrace, into the blob image
 * "pages.img" of @dir, and describe its mappings, pages, mm fields and vDSO
 * to @t.  0 or -errno.
 */
int dump_target(pid_t pid, struct crf_imgdir *dir, struct crf_rst_task *t);

#endif
